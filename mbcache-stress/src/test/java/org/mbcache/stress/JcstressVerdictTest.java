package org.mbcache.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The build's JCStress verdict, on output shaped like JCStress 0.16's (copied from real runs). */
class JcstressVerdictTest {

    private static final List<String> TWO_TESTS = List.of("org.mbcache.stress.A.KernelPort", "org.mbcache.stress.B.Caffeine");

    private static List<String> summary(String interesting, String failed, String error, String remaining, String... body) {
        List<String> lines = new ArrayList<>(List.of(
                "(Results: 16 planned; 16 passed, 0 failed, 0 soft errs, 0 hard errs)", "", "", "RUN RESULTS:",
                "  Interesting tests: " + interesting, ""));
        lines.addAll(List.of(body));
        lines.addAll(List.of("  Failed tests: " + failed, "", "  Error tests: " + error, "",
                "  All remaining tests: " + remaining, "", "  HTML report generated at results/index.html"));
        return lines;
    }

    @Test
    void passesWhenEveryListedTestIsReportedAndNoneFailed() {
        var verdict = JcstressVerdict.judge(summary("1 matching test results.", "No matches.", "No matches.",
                "1 matching test results. Use -v to print them.",
                ".......... [OK] org.mbcache.stress.A.KernelPort", ""), TWO_TESTS);
        assertTrue(verdict.passed(), verdict.problems().toString());
    }

    @Test
    void failsOnAForbiddenOutcome() {
        List<String> lines = List.of("RUN RESULTS:", "  Interesting tests: No matches.", "",
                "  Failed tests: 1 matching test results.", "",
                "...... [FAILED] org.mbcache.stress.A.KernelPort", "",
                "     RESULT  SAMPLES     FREQ      EXPECT  DESCRIPTION",
                "  1, 1, -99      234   10.36%   Forbidden  Reclaim freed an entry the user holds", "",
                "  Error tests: No matches.", "",
                "  All remaining tests: 1 matching test results. Use -v to print them.");
        var verdict = JcstressVerdict.judge(lines, TWO_TESTS);
        assertFalse(verdict.passed());
        assertTrue(verdict.evidence().stream().anyMatch(l -> l.contains("Forbidden")), verdict.evidence().toString());
    }

    @Test
    void failsOnAnError() {
        var verdict = JcstressVerdict.judge(summary("No matches.", "No matches.", "1 matching test results.",
                "1 matching test results. Use -v to print them.",
                "....... [ERROR] org.mbcache.stress.A.KernelPort", ""), TWO_TESTS);
        assertFalse(verdict.passed());
    }

    @Test
    void failsWhenFewerTestsRanThanListed() {
        var verdict = JcstressVerdict.judge(summary("No matches.", "No matches.", "No matches.",
                "1 matching test results. Use -v to print them."), TWO_TESTS);
        assertFalse(verdict.passed());
        assertTrue(verdict.problems().get(0).contains("1 test(s) reported, but the test list holds 2"));
    }

    @Test
    void failsWhenNothingMatchedAlthoughJcstressExitsZero() {
        var verdict = JcstressVerdict.judge(List.of("    Test selection: \"Nothing\"", "", "FATAL: No matching tests."), TWO_TESTS);
        assertFalse(verdict.passed());
    }

    @Test
    void failsWhenATestCouldNotBeScheduled() {
        List<String> lines = new ArrayList<>(List.of(
                "  No scheduling is possible, these tests would not run:", "    org.mbcache.stress.B.Caffeine"));
        lines.addAll(summary("No matches.", "No matches.", "No matches.", "1 matching test results. Use -v to print them."));
        assertFalse(JcstressVerdict.judge(lines, TWO_TESTS).passed());
    }

    @Test
    void failsWithoutASummary() {
        assertFalse(JcstressVerdict.judge(List.of(), TWO_TESTS).passed());
    }

    @Test
    void readsTestNamesFromTheTestList(@TempDir Path dir) throws IOException {
        Path list = dir.resolve("TestList");
        Files.writeString(list, "JCTEST45Sorg.mbcache.stress.RacingCreators.RequestList45Sorg.mbcache.stress.RacingCreators$RequestList\n"
                + "JCTEST29Sorg.mbcache.stress.X.Caffeine20Sorg.mbcache.stress.X\n\n");
        assertEquals(List.of("org.mbcache.stress.RacingCreators.RequestList", "org.mbcache.stress.X.Caffeine"),
                JcstressVerdict.readTestList(list));
    }
}
