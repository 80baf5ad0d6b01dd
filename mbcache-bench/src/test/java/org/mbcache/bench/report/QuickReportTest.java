package org.mbcache.bench.report;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class QuickReportTest {
    static final double[] BYTES = {0, 0, 0, 0, 0};
    static final PairedComparison FASTER = new PairedComparison("hit", new double[] {10, 10, 10, 10, 10},
            new double[] {20, 21, 19, 20, 22}, BYTES, new double[] {16, 16, 16, 16, 16});
    static final PairedComparison SLOWER = new PairedComparison("churn", new double[] {40, 40, 40, 40, 40},
            new double[] {20, 20, 21, 19, 20}, BYTES, BYTES);
    static final PairedComparison OPEN = new PairedComparison("miss", new double[] {10, 10, 10, 10, 10},
            new double[] {9, 11, 10, 10.5, 9.5}, BYTES, BYTES);
    static final PairedComparison UNSIZED = new PairedComparison("create", new double[] {10, 10, 10, 10, 10},
            new double[] {12, 30, 20, 25, 15}, BYTES, BYTES);
    static final String MACHINE = "Test CPU @ 2.0GHz, 2 CPUs available, OpenJDK 64-Bit Server VM 17 (Linux)";

    static String report() {
        return QuickReport.markdown(MACHINE, "5 forks a row", List.of(FASTER, SLOWER, OPEN, UNSIZED));
    }

    @Test
    void aRowThatCannotStandBehindItsFigurePrintsNotConclusiveInsteadOfAWinner() {
        String missRow = report().lines().filter(l -> l.startsWith("| miss ")).findFirst().orElseThrow();
        assertTrue(missRow.contains("| not conclusive |"), missRow);
        assertTrue(missRow.contains("interval includes 1"), missRow);
        String hitRow = report().lines().filter(l -> l.startsWith("| hit ")).findFirst().orElseThrow();
        assertTrue(hitRow.contains("| 2.00x | 1.90-2.20x (94%) | 5 | mbcache faster |"), hitRow);
        assertTrue(hitRow.contains("| 0 | 16 |"), "B/op of both backends: " + hitRow);
    }

    @Test
    void theReportEndsWithAPlainSummaryNamingTheMachineAndNoTargets() {
        String r = report();
        assertFalse(r.contains("Targets"), r);
        String summary = r.substring(r.indexOf("## What this run shows"));
        assertTrue(summary.contains(MACHINE), summary);
        assertTrue(summary.contains("faster than the Caffeine backend at hit (2.00x as fast, between 1.90x and 2.20x)"), summary);
        assertTrue(summary.contains("slower at churn (it takes 2.00x the time"), summary);
        assertTrue(summary.contains("cannot tell the two apart at miss (0.90-1.10x): the rounds disagree on which"), summary);
        assertTrue(summary.contains("agreed on the winner, but not on by how much (the rounds differ by more than 1.5x), "
                + "at create (1.20-3.00x): mbcache faster"), summary);
        assertFalse(summary.contains("faster than the Caffeine backend at hit (2.00x as fast, between 1.90x and 2.20x); create"),
                "a row too wide to size is not counted a win: " + summary);
    }

    @Test
    void aRunWithoutAConclusiveRowSaysSoAndPointsAtTheMachine() {
        String summary = QuickReport.summary(MACHINE, List.of(OPEN, UNSIZED));
        assertTrue(summary.contains("No operation gave a conclusive result"), summary);
        assertFalse(QuickReport.summary(MACHINE, List.of(FASTER, OPEN)).contains("No operation gave"));
    }

    @Test
    void theTableSaysHowTheIntervalIsComputedAndWhenARowIsNotConclusive() {
        String t = QuickReport.table(List.of(FASTER));
        assertTrue(t.contains("distribution-free confidence interval"), t);
        assertTrue(t.contains("wider than 1.5x"), t);
    }
}
