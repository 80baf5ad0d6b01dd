package org.mbcache.bench;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.mbcache.bench.report.JmhResults;
import org.mbcache.bench.report.ProgressFormat;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The main job's hot-key section: every thread looks up one pair ({@link HotKey}) at 1 and at 2
 * threads, {@code findFirst} + {@code release} on both kernel-port layouts and the
 * {@code ConcurrentHashMap} floor with one shared count word, one short fork each, and the ratio of
 * the 2-thread time to the 1-thread time (the time of one thread's operation: 1 means two threads
 * do twice the work of one, 2 means they do no more). The whole group ({@code get} + {@code release},
 * ext4's walk, the Caffeine backend, the plain-lookup floor) is {@code HotKey} itself, in the
 * {@code jmh} mode and {@code many-cores.sh}: the main job keeps within its four minutes.
 *
 * <p>One fork per cell is indicative, not a claim: on a 2-CPU machine even the plain map's ratio
 * moves between 0.6 and 1.6 from run to run. Claims come from {@code HotKey} with 3 forks (or
 * {@code many-cores.sh}), as {@code docs/benchmarks.md} says.
 */
final class HotKeyRun {
    private HotKeyRun() {}

    /** The cache operations of {@link HotKey}, in the order printed. */
    static final List<String> OPERATIONS = List.of("findFirstRelease");
    /** The {@code ConcurrentHashMap} floor of {@link HotKey}: a hit counted on one shared word (no hot mode). */
    static final List<String> FLOORS = List.of("chmCounted");
    /** The backends measured: both kernel-port layouts. */
    static final List<String> BACKENDS = List.of(Backends.MBCACHE, Backends.COMPACT);
    static final int[] THREADS = {1, 2};
    /** Warm-up iterations: time for the JIT and for the hot entry to switch to hot mode (5-100 ms here). */
    static final int WARMUP_ITERATIONS = 3;
    static final int MEASURE_ITERATIONS = 2;
    static final int ITERATION_MS = 200;
    /** Forks in the section. */
    static final int FORKS = THREADS.length * (OPERATIONS.size() * BACKENDS.size() + FLOORS.size());
    /** The section's planned seconds. */
    static final double PLANNED_S = FORKS * (QuickRun.FORK_OVERHEAD_S
            + (WARMUP_ITERATIONS + MEASURE_ITERATIONS) * ITERATION_MS / 1000.0);

    /**
     * One cell: an operation on a backend at a thread count.
     *
     * @param operation the {@link HotKey} method
     * @param backend the backend label ({@code chm} for the floors)
     * @param threads JMH threads
     * @param nsPerOp the median of the fork's measurement iterations (NaN if the fork failed)
     */
    record Cell(String operation, String backend, int threads, double nsPerOp) {}

    /** Runs every cell, printing JMH's progress lines; the cells in run order. */
    static List<Cell> run(ProgressFormat progress, PrintStream out) throws QuickRun.OtherJmhRunning {
        List<Cell> cells = new ArrayList<>();
        for (int threads : THREADS) {
            for (String operation : OPERATIONS) {
                for (String backend : BACKENDS) {
                    cells.add(new Cell(operation, backend, threads, fork(operation, backend, threads, progress, out)));
                }
            }
            for (String floor : FLOORS) {
                cells.add(new Cell(floor, Backends.CHM, threads, fork(floor, null, threads, progress, out)));
            }
        }
        return cells;
    }

    private static double fork(String method, String backend, int threads, ProgressFormat progress, PrintStream out)
            throws QuickRun.OtherJmhRunning {
        OptionsBuilder o = new OptionsBuilder();
        o.include("^" + Pattern.quote(HotKey.class.getName() + "." + method) + "$")
                .threads(threads)
                .forks(1)
                .warmupIterations(WARMUP_ITERATIONS)
                .warmupTime(TimeValue.milliseconds(ITERATION_MS))
                .measurementIterations(MEASURE_ITERATIONS)
                .measurementTime(TimeValue.milliseconds(ITERATION_MS))
                .jvmArgsAppend(QuickRun.FORK_JVM)
                .shouldFailOnError(true)
                .timeout(TimeValue.seconds(30));
        if (backend != null) {
            o.param("backend", backend);
        }
        try {
            for (RunResult run : new Runner(o.build(), progress).run()) {
                for (BenchmarkResult fork : run.getBenchmarkResults()) {
                    double[] ns = fork.getIterationResults().stream()
                            .mapToDouble(i -> JmhResults.toNs(i.getPrimaryResult().getScore(), i.getPrimaryResult().getScoreUnit()))
                            .toArray();
                    return org.mbcache.bench.report.PairedComparison.median(ns);
                }
            }
        } catch (RunnerException e) {
            if (QuickRun.isJmhLockHeld(e.getMessage())) {
                throw new QuickRun.OtherJmhRunning(e.getMessage());
            }
            out.println("  fork failed: " + e.getMessage());
        }
        return Double.NaN;
    }

    /** The section as markdown: a row per operation and backend, 1 and 2 threads and their ratio. */
    static String markdown(List<Cell> cells) {
        Map<String, double[]> rows = new LinkedHashMap<>();
        for (Cell c : cells) {
            double[] times = rows.computeIfAbsent(c.operation() + " | " + c.backend(), k -> new double[] {Double.NaN, Double.NaN});
            times[c.threads() == 1 ? 0 : 1] = c.nsPerOp();
        }
        StringBuilder b = new StringBuilder();
        b.append("## Hot key: every thread looks up one pair\n\n");
        b.append("| operation | backend | 1 thread ns/op | 2 threads ns/op | 2T / 1T |\n");
        b.append("| --- | --- | ---: | ---: | ---: |\n");
        rows.forEach((row, t) -> b.append("| ").append(row)
                .append(" | ").append(ns(t[0]))
                .append(" | ").append(ns(t[1]))
                .append(" | ").append(Double.isNaN(t[0]) || Double.isNaN(t[1]) ? "-"
                        : String.format(Locale.ROOT, "%.2f", t[1] / t[0]))
                .append(" |\n"));
        b.append(String.format(Locale.ROOT, "%nHotKey benchmarks, one fork a cell (%d x %d ms warm-up, %d x %d ms measurement); "
                        + "ns/op is one thread's time per operation, so 2T / 1T = 1 means two threads do twice the work of one. "
                        + "`chmCounted` is a plain map lookup plus a reference count on one shared word: what a hit costs "
                        + "without hot mode. One fork is indicative; on 2 CPUs even a plain map's ratio moves 0.6-1.6 between "
                        + "runs. The whole group is `HotKey` (`jmh` mode, `many-cores.sh`).%n",
                WARMUP_ITERATIONS, ITERATION_MS, MEASURE_ITERATIONS, ITERATION_MS));
        return b.toString();
    }

    private static String ns(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, value >= 100 ? "%.0f" : "%.1f", value);
    }
}
