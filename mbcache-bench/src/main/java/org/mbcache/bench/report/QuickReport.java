package org.mbcache.bench.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The main job's report: one row per headline operation with each backend's median ns/op and B/op,
 * the kernel port's speed-up over the Caffeine backend with its interval and confidence, and a
 * verdict; then a plain-language summary of what the run shows on this machine.
 */
public final class QuickReport {
    private QuickReport() {}

    /**
     * The whole report.
     *
     * @param machine CPU model, cores and JDK, in words
     * @param runNote how the rows were measured
     * @param rows the headline operations, in the order to print
     */
    public static String markdown(String machine, String runNote, List<PairedComparison> rows) {
        StringBuilder b = new StringBuilder();
        b.append("# mbcache-bench main job: the kernel port against the Caffeine backend\n\n");
        b.append("- Machine: ").append(machine).append('\n');
        b.append("- Run: ").append(runNote).append("\n\n");
        b.append(table(rows)).append('\n');
        b.append("## What this run shows\n\n").append(summary(machine, rows));
        return b.toString();
    }

    /** The headline table. */
    public static String table(List<PairedComparison> rows) {
        StringBuilder b = new StringBuilder();
        b.append("| operation | mbcache ns/op | caffeine ns/op | mbcache B/op | caffeine B/op "
                + "| speed-up (caffeine ÷ mbcache) | interval | rounds | verdict |\n");
        b.append("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |\n");
        for (PairedComparison r : rows) {
            b.append("| ").append(r.operation())
                    .append(" | ").append(ResultTable.fmt(r.kernelMedianNs()))
                    .append(" | ").append(ResultTable.fmt(r.caffeineMedianNs()))
                    .append(" | ").append(bytes(r.kernelMedianBytes()))
                    .append(" | ").append(bytes(r.caffeineMedianBytes()))
                    .append(" | ").append(r.conclusive() ? times(r.speedup()) : "not conclusive")
                    .append(" | ").append(interval(r))
                    .append(" | ").append(r.rounds())
                    .append(" | ").append(verdict(r))
                    .append(" |\n");
        }
        b.append('\n').append(String.format(Locale.ROOT,
                "Each round ran one fork of each backend back to back; a fork's score is the median of its measurement "
                        + "iterations, a backend's ns/op and B/op the median over the rounds. The speed-up is the median of "
                        + "the rounds' paired speed-ups (above 1: mbcache is faster); the interval runs from the smallest to "
                        + "the largest of them, a distribution-free confidence interval for that median at 1 - 2^(1-n) "
                        + "(n = 3 rounds: 75%%). A row is \"not conclusive\" when the interval includes 1, when it is wider "
                        + "than %.1fx (largest ÷ smallest), or when fewer than %d rounds gave both scores.%n",
                PairedComparison.MAX_SPREAD, PairedComparison.MIN_ROUNDS));
        return b.toString();
    }

    /** {@code 0.91-1.32x (94%)}, or a dash without a round. */
    static String interval(PairedComparison r) {
        if (r.rounds() == 0) {
            return "—";
        }
        return String.format(Locale.ROOT, "%.2f-%.2fx (%.0f%%)", r.low(), r.high(), 100 * r.confidence());
    }

    static String verdict(PairedComparison r) {
        switch (r.verdict()) {
            case KERNEL_FASTER: return "mbcache faster";
            case KERNEL_SLOWER: return "mbcache slower";
            default: return "not conclusive: " + r.reason();
        }
    }

    static String times(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.2fx", v) : "—";
    }

    static String bytes(double v) {
        return Double.isNaN(v) ? "—" : ResultTable.bytes(v);
    }

    /**
     * What the run shows, in plain words: where the kernel port is faster, where slower, by how
     * much, and which operations this run cannot decide, on which machine.
     */
    public static String summary(String machine, List<PairedComparison> rows) {
        List<String> faster = new ArrayList<>();
        List<String> slower = new ArrayList<>();
        List<String> open = new ArrayList<>();
        List<String> unsized = new ArrayList<>();
        for (PairedComparison r : rows) {
            switch (r.verdict()) {
                case KERNEL_FASTER:
                    faster.add(String.format(Locale.ROOT, "%s (%.2fx as fast, between %.2fx and %.2fx)",
                            r.operation(), r.speedup(), r.low(), r.high()));
                    break;
                case KERNEL_SLOWER:
                    slower.add(String.format(Locale.ROOT, "%s (it takes %.2fx the time, between %.2fx and %.2fx)",
                            r.operation(), 1 / r.speedup(), 1 / r.high(), 1 / r.low()));
                    break;
                default:
                    String range = r.rounds() == 0 ? "" : String.format(Locale.ROOT, " (%.2f-%.2fx)", r.low(), r.high());
                    if (r.sameSideEveryRound()) {
                        unsized.add(r.operation() + range + (r.low() > 1 ? ": mbcache faster" : ": mbcache slower"));
                    } else {
                        open.add(r.operation() + range);
                    }
            }
        }
        StringBuilder b = new StringBuilder();
        b.append("On this machine (").append(machine).append("), one thread:\n\n");
        b.append("- The kernel port (mbcache) is faster than the Caffeine backend at ")
                .append(faster.isEmpty() ? "none of the headline operations" : String.join("; ", faster)).append(".\n");
        b.append("- It is slower at ")
                .append(slower.isEmpty() ? "none of them" : String.join("; ", slower)).append(".\n");
        if (!unsized.isEmpty()) {
            b.append("- Every round agreed on the winner, but not on by how much (the rounds differ by more than ")
                    .append(String.format(Locale.ROOT, "%.1fx", PairedComparison.MAX_SPREAD)).append("), at ")
                    .append(String.join("; ", unsized)).append(".\n");
        }
        b.append("- This run cannot tell the two apart at ")
                .append(open.isEmpty() ? "none of them" : String.join("; ", open))
                .append(open.isEmpty() ? ".\n" : ": the rounds disagree on which is faster, or too few ran.\n");
        if (faster.isEmpty() && slower.isEmpty() && !rows.isEmpty()) {
            b.append("\nNo operation gave a conclusive result: the rounds disagree too much. A busy machine does this "
                    + "(a load average above the CPU count in the run line); run it again when the machine is quiet.\n");
        }
        b.append("\nThese are single-thread figures from a short run; the full suite (`jmh`) measures every "
                + "benchmark, backend and thread count for publication.\n");
        return b.toString();
    }
}
