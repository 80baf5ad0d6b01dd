package org.mbcache.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.mbcache.bench.report.PairedComparison.Verdict;

class PairedComparisonTest {
    static final double[] NO_BYTES = {0, 0, 0, 0, 0};

    static PairedComparison of(double[] kernel, double[] caffeine) {
        return new PairedComparison("op", kernel, caffeine, NO_BYTES.clone(), NO_BYTES.clone());
    }

    @Test
    void theSpeedUpIsTheMedianOfTheRoundsPairedRatiosAndTheIntervalTheirRange() {
        PairedComparison c = of(new double[] {10, 10, 10, 10, 10}, new double[] {20, 18, 25, 21, 19});
        assertEquals(2.0, c.speedup(), 1e-12);
        assertEquals(1.8, c.low(), 1e-12);
        assertEquals(2.5, c.high(), 1e-12);
        assertEquals(1 - 1 / 16.0, c.confidence(), 1e-12, "five rounds: 1 - 2^-4");
        assertEquals(Verdict.KERNEL_FASTER, c.verdict());
        assertTrue(c.conclusive());
    }

    @Test
    void pairingCancelsASlowRoundThatHitBothBackends() {
        // round 3 ran everything 3x slower; unpaired, the backends' ranges would overlap
        PairedComparison c = of(new double[] {10, 10, 30, 10, 10}, new double[] {12, 12, 36, 12, 12});
        assertEquals(1.2, c.low(), 1e-12);
        assertEquals(1.2, c.high(), 1e-12);
        assertEquals(Verdict.KERNEL_FASTER, c.verdict());
    }

    @Test
    void anIntervalAllBelowOneMeansTheKernelPortIsSlower() {
        PairedComparison c = of(new double[] {20, 21, 19, 20, 22}, new double[] {10, 10, 10, 10, 10});
        assertEquals(Verdict.KERNEL_SLOWER, c.verdict());
        assertEquals(0.5, c.speedup(), 1e-12);
    }

    @Test
    void anIntervalThatStraddlesOneIsNotConclusive() {
        PairedComparison c = of(new double[] {10, 10, 10, 10, 10}, new double[] {9.5, 10.5, 11, 9.8, 10.2});
        assertEquals(Verdict.NOT_CONCLUSIVE, c.verdict());
        assertTrue(c.reason().contains("includes 1"), c.reason());
    }

    @Test
    void anIntervalWiderThanTheThresholdIsNotConclusiveEvenAboveOne() {
        PairedComparison c = of(new double[] {10, 10, 10, 10, 10}, new double[] {11, 20, 30, 15, 25});
        assertTrue(c.low() > 1);
        assertEquals(Verdict.NOT_CONCLUSIVE, c.verdict());
        assertTrue(c.reason().contains("disagree"), c.reason());
    }

    @Test
    void failedForksDropTheirRoundAndTooFewRoundsSayNothing() {
        double nan = Double.NaN;
        PairedComparison c = of(new double[] {10, nan, 10, nan, 10}, new double[] {20, 20, nan, 20, 20});
        assertEquals(2, c.rounds());
        assertEquals(Verdict.NOT_CONCLUSIVE, c.verdict());
        assertTrue(c.reason().contains("only 2"), c.reason());
        assertEquals(0.5, c.confidence(), 1e-12);
    }

    @Test
    void mediansIgnoreMissingValuesAndAverageTheMiddleTwo() {
        assertEquals(2.5, PairedComparison.median(new double[] {4, 1, Double.NaN, 2, 3}), 1e-12);
        assertTrue(Double.isNaN(PairedComparison.median(new double[] {Double.NaN})));
    }

    @Test
    void everyBackendNeedsOneScorePerRound() {
        assertThrows(IllegalArgumentException.class,
                () -> new PairedComparison("op", new double[] {1, 2}, new double[] {1}, new double[2], new double[2]));
    }

    @Test
    void theArraysAreCopiedIn() {
        double[] kernel = {10, 10, 10};
        PairedComparison c = new PairedComparison("op", kernel, new double[] {20, 20, 20}, new double[3], new double[3]);
        kernel[0] = 1000;
        assertFalse(c.kernelNs()[0] == 1000);
    }
}
