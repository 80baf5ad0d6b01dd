package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The {@code bursty} mode's plumbing, on short runs: what it measures, not how fast. */
class BurstyWriterTest {
    private static final BurstyWriter.Config SHORT = new BurstyWriter.Config(256, 4, 64, 2_000, 20, 100);

    @Test
    void aRunCountsWholeBurstsAndOrdersItsPercentiles() throws Exception {
        BurstyWriter.Result result = BurstyWriter.run(Backends.MBCACHE, SHORT);

        assertTrue(result.creates() > 0 && result.creates() % SHORT.burst() == 0, "creates: " + result.creates());
        assertTrue(result.backgroundPasses() > 0, "bursts past the bound ran no background pass");
        assertTrue(result.p50() <= result.p99() && result.p99() <= result.p999(), result.row());
        assertTrue(result.belowBoundP99() > 0 && result.laterP99() > 0 && result.belowBoundLaterP99() > 0, result.row());
        assertTrue(result.sizeAtEnd() > 0 && result.sizeAfterSettle() > 0, result.row());
    }

    @Test
    void theReportHasARowForEachBackend() throws Exception {
        String report = BurstyWriter.report(Backends.DEDUP, SHORT);

        for (String backend : Backends.DEDUP) {
            assertTrue(report.contains("\n| " + backend + " |"), report);
        }
        assertEquals(2 + Backends.DEDUP.size(), report.lines().filter(line -> line.startsWith("|")).count(), report);
    }

    @Test
    void theTargetsAreTheOnesTheModeReportsOn() {
        BurstyWriter.Result met = new BurstyWriter.Result("mbcache", 1000, 1, 100, 0, 1100, 1000, 3, 100, 200, 300, 100, 150, 100, 1024);
        BurstyWriter.Result missed = new BurstyWriter.Result("mbcache", 1000, 2, 100, 0, 2000, 2000, -1, 100, 201, 300, 100, 150, 100, 1024);

        assertEquals("sync ok, settle ok, p99 ok", met.verdicts());
        assertEquals("SYNC MISSED, SETTLE MISSED, P99 MISSED", missed.verdicts());
        assertEquals(1.0, met.synchronousPer1000Creates());
        assertEquals(1.0 / 101, met.writerShareOfPasses());
    }

    @Test
    void anUnknownArgumentIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> BurstyWriter.main(new String[] {"no-such-backend"}));
    }

    @Test
    void theDefaultsAreTheDocumentedOnes() {
        assertEquals(new BurstyWriter.Config(1024, 6, 128, 5_000, 1_000, 3_000), BurstyWriter.Config.DEFAULT);
    }
}
