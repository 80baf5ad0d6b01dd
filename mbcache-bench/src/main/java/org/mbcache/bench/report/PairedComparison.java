package org.mbcache.bench.report;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One headline operation measured on two backends in the same rounds: round {@code i} ran one
 * fork of the kernel port and one of the Caffeine backend back to back, so the two forks of a
 * round saw the same machine (the same neighbours, the same clock). Each round gives one paired
 * speed-up, Caffeine's ns/op over the kernel port's (above 1: the kernel port is faster).
 *
 * <p>The figure is the median of the paired speed-ups; its interval runs from the smallest to the
 * largest. Whatever the distribution of the speed-ups, each lies below their true median with
 * probability 1/2, so the median lies outside [smallest, largest] only when all {@code n} fall on
 * one side: probability 2 x 2<sup>-n</sup>. The interval is therefore a distribution-free
 * confidence interval of level {@link #confidence()} = 1 - 2<sup>1-n</sup> (n = 5: 93.8 %).
 *
 * <p>The row is {@linkplain #conclusive() conclusive} only with at least {@value #MIN_ROUNDS}
 * valid rounds, an interval on one side of 1, and an interval no wider than
 * {@value #MAX_SPREAD} (largest over smallest); otherwise the report says "not conclusive"
 * instead of a winner.
 *
 * @param operation what was measured, in words
 * @param kernelNs the kernel port's score per round, ns/op (NaN where its fork failed)
 * @param caffeineNs the Caffeine backend's score per round, ns/op (NaN where its fork failed)
 * @param kernelBytes the kernel port's allocation per round, B/op (NaN where unknown)
 * @param caffeineBytes the Caffeine backend's allocation per round, B/op (NaN where unknown)
 */
public record PairedComparison(String operation, double[] kernelNs, double[] caffeineNs,
                               double[] kernelBytes, double[] caffeineBytes) {
    /** Fewer valid rounds than this say nothing. */
    public static final int MIN_ROUNDS = 3;
    /** The widest interval (largest over smallest speed-up) that still counts as a measurement. */
    public static final double MAX_SPREAD = 1.5;

    /** What a row can be said to show. */
    public enum Verdict {
        /** The kernel port is faster: the whole interval above 1. */
        KERNEL_FASTER,
        /** The kernel port is slower: the whole interval below 1. */
        KERNEL_SLOWER,
        /** The interval straddles 1, is too wide, or too few rounds ran. */
        NOT_CONCLUSIVE
    }

    /** Whether every valid round, though the row is not conclusive, had the kernel port faster (or every one slower). */
    public boolean sameSideEveryRound() {
        return rounds() >= MIN_ROUNDS && (low() > 1 || high() < 1);
    }

    /** Copies the arrays; all four have one element per round. */
    public PairedComparison {
        kernelNs = kernelNs.clone();
        caffeineNs = caffeineNs.clone();
        kernelBytes = kernelBytes.clone();
        caffeineBytes = caffeineBytes.clone();
        int n = kernelNs.length;
        if (caffeineNs.length != n || kernelBytes.length != n || caffeineBytes.length != n) {
            throw new IllegalArgumentException(operation + ": one score per round for each backend");
        }
    }

    /** The paired speed-ups, caffeine over kernel port, of the rounds where both forks gave a score. */
    public double[] speedups() {
        List<Double> s = new ArrayList<>();
        for (int i = 0; i < kernelNs.length; i++) {
            double r = caffeineNs[i] / kernelNs[i];
            if (Double.isFinite(r) && r > 0) {
                s.add(r);
            }
        }
        return s.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** Valid rounds: both forks gave a score. */
    public int rounds() {
        return speedups().length;
    }

    /** The median paired speed-up (above 1: the kernel port is faster); NaN without a valid round. */
    public double speedup() {
        return median(speedups());
    }

    /** The smallest paired speed-up: the interval's lower end. */
    public double low() {
        return Arrays.stream(speedups()).min().orElse(Double.NaN);
    }

    /** The largest paired speed-up: the interval's upper end. */
    public double high() {
        return Arrays.stream(speedups()).max().orElse(Double.NaN);
    }

    /** The confidence level of [{@link #low()}, {@link #high()}] for the median speed-up: 1 - 2^(1-n). */
    public double confidence() {
        int n = rounds();
        return n < 2 ? 0 : 1 - Math.pow(2, 1 - n);
    }

    /** Whether the interval is too wide to stand behind a figure: largest over smallest above {@value #MAX_SPREAD}. */
    public boolean tooWide() {
        return !(high() / low() <= MAX_SPREAD);
    }

    /** What the row shows. */
    public Verdict verdict() {
        if (rounds() < MIN_ROUNDS || tooWide()) {
            return Verdict.NOT_CONCLUSIVE;
        }
        if (low() > 1) {
            return Verdict.KERNEL_FASTER;
        }
        if (high() < 1) {
            return Verdict.KERNEL_SLOWER;
        }
        return Verdict.NOT_CONCLUSIVE;
    }

    /** Whether the row names a winner. */
    public boolean conclusive() {
        return verdict() != Verdict.NOT_CONCLUSIVE;
    }

    /** Why a row is not conclusive, in words; empty for a conclusive row. */
    public String reason() {
        if (rounds() < MIN_ROUNDS) {
            return "only " + rounds() + " round(s) gave both scores";
        }
        if (tooWide()) {
            return String.format(Locale.ROOT, "the rounds disagree by more than %.1fx", MAX_SPREAD);
        }
        if (!conclusive()) {
            return "the interval includes 1: no difference shown";
        }
        return "";
    }

    /** The kernel port's median ns/op over the rounds. */
    public double kernelMedianNs() {
        return median(kernelNs);
    }

    /** The Caffeine backend's median ns/op over the rounds. */
    public double caffeineMedianNs() {
        return median(caffeineNs);
    }

    /** The kernel port's median B/op over the rounds. */
    public double kernelMedianBytes() {
        return median(kernelBytes);
    }

    /** The Caffeine backend's median B/op over the rounds. */
    public double caffeineMedianBytes() {
        return median(caffeineBytes);
    }

    /** The median of the finite values; NaN if there is none. */
    public static double median(double[] values) {
        double[] v = Arrays.stream(values).filter(Double::isFinite).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        int m = v.length / 2;
        return v.length % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PairedComparison p && operation.equals(p.operation)
                && Arrays.equals(kernelNs, p.kernelNs) && Arrays.equals(caffeineNs, p.caffeineNs)
                && Arrays.equals(kernelBytes, p.kernelBytes) && Arrays.equals(caffeineBytes, p.caffeineBytes);
    }

    @Override
    public int hashCode() {
        return operation.hashCode() * 31 + Arrays.hashCode(kernelNs) * 17 + Arrays.hashCode(caffeineNs);
    }

    @Override
    public String toString() {
        return operation + ": kernel " + Arrays.toString(kernelNs) + " ns, caffeine " + Arrays.toString(caffeineNs) + " ns";
    }
}
