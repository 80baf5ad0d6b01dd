package org.mbcache.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunAgreementTest {
    @Test
    void speedUpsWithinEightyToOneHundredTwentyFivePercentOfEachOtherAgree() {
        assertTrue(new RunAgreement.Pair("hit", 2.0, 2.4).agrees());
        assertTrue(new RunAgreement.Pair("hit", 2.0, 1.6).agrees());
        assertFalse(new RunAgreement.Pair("hit", 2.0, 2.6).agrees());
        assertFalse(new RunAgreement.Pair("hit", 2.0, 1.5).agrees());
        assertFalse(new RunAgreement.Pair("hit", 2.0, Double.NaN).agrees(), "a run without a figure does not agree");
    }

    @Test
    void readsTheSpeedUpsOfAMainJobFileAndPairsTheOperationsBothHave(@TempDir Path dir) throws Exception {
        Path a = dir.resolve("a.json");
        Path b = dir.resolve("b.json");
        Files.writeString(a, "{\"machine\":\"m\",\"rows\":[{\"operation\":\"hit\",\"speedup\":2.0},"
                + "{\"operation\":\"miss\",\"speedup\":\"NaN\"},{\"operation\":\"churn\",\"speedup\":3.0}]}");
        Files.writeString(b, "{\"rows\":[{\"operation\":\"churn\",\"speedup\":4.5},{\"operation\":\"hit\",\"speedup\":2.2}]}");
        List<RunAgreement.Pair> pairs = RunAgreement.pairs(RunAgreement.speedups(a), RunAgreement.speedups(b));
        assertEquals(List.of("hit", "churn"), pairs.stream().map(RunAgreement.Pair::operation).toList());
        assertTrue(Double.isNaN(RunAgreement.speedups(a).get("miss")));
        String md = RunAgreement.markdown(pairs);
        assertTrue(md.contains("| hit | 2.00x | 2.20x | 1.10 | yes |"), md);
        assertTrue(md.contains("| churn | 3.00x | 4.50x | 1.50 | no |"), md);
        assertTrue(md.contains("1 of 2 speed-ups agree within 0.80-1.25x."), md);
    }

    @Test
    void noCommonOperationMeansNoPair() {
        assertEquals(List.of(), RunAgreement.pairs(Map.of("hit", 1.0), Map.of("miss", 1.0)));
    }
}
