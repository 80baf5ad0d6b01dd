package org.mbcache.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.mbcache.bench.report.JmhResults;
import org.mbcache.bench.report.PairedComparison;
import org.mbcache.bench.report.ProgressFormat;
import org.mbcache.bench.report.QuickReport;
import org.mbcache.bench.report.Report;
import org.mbcache.bench.report.Tsc;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The main job: the headline operations of the kernel port ({@code mbcache}) against the Caffeine
 * backend ({@code caffeine}), one thread, measured so that two consecutive runs on one 2-core
 * machine agree; then the hot-key section ({@link HotKeyRun}: one pair looked up by 1 and by 2
 * threads) and the {@value #SCALE_SIZE}-entry group of the {@code scale} mode ({@link ScaleBench}:
 * the compact layout, the kernel port, fastutil's map and that map with a reference count); about
 * 4 minutes in all.
 *
 * <p>It runs {@value #ROUNDS} rounds; each round runs one JMH fork of every headline operation on
 * each backend, the two backends of an operation back to back (which goes first alternates from
 * round to round). Drift on the machine (a neighbour's build, the clock) thus hits both backends of
 * a round alike, and each round gives one paired speed-up; {@link PairedComparison} turns the
 * rounds into a figure, an interval and a verdict. Every fork has a fixed heap ({@code -Xms} =
 * {@code -Xmx}, pre-touched) and JMH's GC profiler for B/op; its score is the median of its
 * measurement iterations, read from JMH's own {@link RunResult}.
 */
final class QuickRun {
    /** Forks per row: one a round. */
    static final int ROUNDS = 3;
    static final int WARMUP_ITERATIONS = 3;
    static final int WARMUP_MS = 200;
    static final int MEASURE_ITERATIONS = 5;
    /**
     * Short enough that {@code createNew} below the bound ({@link Growing}) keeps its chains near
     * the design load within an iteration.
     */
    static final int MEASURE_MS = 200;
    /**
     * Fork start, heap pre-touch, JMH's setup, the state's fill and teardown per fork: about 3 s on
     * a 2-CPU VM (a fork of 1.6 s of iterations took 4.6-4.7 s).
     */
    static final double FORK_OVERHEAD_S = 3.0;
    /** The whole job's budget, seconds; the measurement's share is {@link #MEASUREMENT_BUDGET_S}. */
    static final double BUDGET_S = 240;
    /** What the plan may spend on measuring: the paired rounds and the two sections after them. */
    static final double MEASUREMENT_BUDGET_S = 232;
    /** Entries of the {@code scale} group the main job shows. */
    static final long SCALE_SIZE = 1_000_000;
    /**
     * The {@code scale} backends the main job shows: the two kernel-port layouts, the primitive-map
     * floor and the counted floor (a one-line counted table, {@link CountedFloor}), which the compact
     * layout's figures are compared with.
     */
    static final List<String> SCALE_BACKENDS = List.of(Backends.COMPACT, Backends.MBCACHE, "fastutil", "counted");
    /** One {@code scale} child at {@link #SCALE_SIZE} without its GC line, measured on a 2-CPU VM. */
    static final double SCALE_CHILD_S = 10;
    /** Seconds kept for the sections after the paired rounds: the hot key and the scale group. */
    static final double SECTIONS_S = HotKeyRun.PLANNED_S + SCALE_BACKENDS.size() * SCALE_CHILD_S;
    /** The forks' JVM options: a fixed, pre-touched heap, so no fork resizes its heap while it measures. */
    static final String[] FORK_JVM = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"};
    /** The two backends compared, kernel port first. */
    static final List<String> BACKENDS = List.of(Backends.MBCACHE, Backends.CAFFEINE);
    /** The {@code memory} command's default backends (it is not part of the main job). */
    static final List<String> MEMORY_BACKENDS =
            List.of(Backends.MBCACHE, Backends.MBCACHE_ALLOCFIRST, Backends.CAFFEINE, Backends.CAFFEINE_RAW);

    /**
     * One headline operation: a {@link Micro} benchmark in one regime, at the design load with
     * uniform keys. The name is checked against {@link Micro} when the row is made, so a renamed
     * benchmark fails the plan loudly instead of silently matching nothing.
     *
     * @param operation the operation in words, for the report
     * @param benchmark the {@link Micro} method
     * @param bound {@link Backends#AT} or {@link Backends#BELOW}
     */
    record Headline(String operation, String benchmark, String bound) {
        Headline {
            Objects.requireNonNull(operation, "operation");
            if (!isBenchmark(Micro.class, benchmark)) {
                throw new IllegalStateException(Micro.class.getName() + " has no @Benchmark method named '"
                        + benchmark + "': was it renamed? Update QuickRun.HEADLINES");
            }
            Backends.maxEntries(bound);
        }

        /** The JMH include regex: exactly this benchmark. */
        String regex() {
            return "^" + Pattern.quote(Micro.class.getName() + "." + benchmark) + "$";
        }

        /** The JMH params of one fork on {@code backend}. */
        Map<String, String> params(String backend) {
            Map<String, String> p = new LinkedHashMap<>();
            p.put("backend", backend);
            p.put("bound", bound);
            if (!benchmark.equals("createNew") && !benchmark.equals("churn")) {
                p.put("load", Populated.FULL);
                p.put("keys", KeyIndex.UNIFORM);
            }
            return p;
        }
    }

    /**
     * The headline operations: the lookups and the refused duplicate on a steady cache at its bound,
     * a new create with room (below the bound, as after a restart), and churn at the bound, where
     * every create makes reclaim (Caffeine: eviction) run.
     */
    static final List<Headline> HEADLINES = List.of(
            new Headline("hit: findFirst + release", "findFirstHit", Backends.AT),
            new Headline("miss: findFirst of an absent key", "findFirstMiss", Backends.AT),
            new Headline("get + release of a cached pair", "getRelease", Backends.AT),
            new Headline("refused duplicate create", "createDuplicate", Backends.AT),
            new Headline("new create below the bound", "createNew", Backends.BELOW),
            new Headline("churn at the bound: create + deleteOrGet", "churn", Backends.AT));

    /**
     * Whether {@code name} is what JMH calls a benchmark of {@code c}: a {@code @Benchmark}
     * method's name, or its {@code @Group}'s.
     */
    static boolean isBenchmark(Class<?> c, String name) {
        for (Method m : c.getMethods()) {
            if (!m.isAnnotationPresent(Benchmark.class)) {
                continue;
            }
            Group g = m.getAnnotation(Group.class);
            if (g != null ? g.value().equals(name) : m.getName().equals(name)) {
                return true;
            }
        }
        return false;
    }

    /** Forks of the paired rounds. */
    static int forks() {
        return ROUNDS * HEADLINES.size() * BACKENDS.size();
    }

    /** Seconds one fork takes: its start and fill, warm-up and measurement. */
    static double secondsPerFork() {
        return FORK_OVERHEAD_S + (WARMUP_ITERATIONS * WARMUP_MS + MEASURE_ITERATIONS * MEASURE_MS) / 1000.0;
    }

    /** The plan's estimate of the whole job, in seconds: the paired rounds and the sections. */
    static double plannedSeconds() {
        return forks() * secondsPerFork() + SECTIONS_S;
    }

    static String runNote() {
        return String.format(Locale.ROOT, "%d rows (%d operations x %s), 1 thread, %d forks a row (one a round, the backends "
                        + "of an operation back to back), each %d x %d ms warm-up + %d x %d ms measurement, fork JVM %s, "
                        + "-prof gc; %d forks; then %d hot-key forks and %d scale children at %,d entries; planned ~%.0f s",
                HEADLINES.size() * BACKENDS.size(), HEADLINES.size(), String.join(" and ", BACKENDS), ROUNDS,
                WARMUP_ITERATIONS, WARMUP_MS, MEASURE_ITERATIONS, MEASURE_MS, String.join(" ", FORK_JVM), forks(),
                HotKeyRun.FORKS, SCALE_BACKENDS.size(), SCALE_SIZE, plannedSeconds());
    }

    /** The options of one fork of a headline on a backend. */
    static Options options(Headline h, String backend) {
        OptionsBuilder o = new OptionsBuilder();
        o.include(h.regex())
                .threads(1)
                .forks(1)
                .warmupIterations(WARMUP_ITERATIONS)
                .warmupTime(TimeValue.milliseconds(WARMUP_MS))
                .measurementIterations(MEASURE_ITERATIONS)
                .measurementTime(TimeValue.milliseconds(MEASURE_MS))
                .jvmArgsAppend(FORK_JVM)
                .addProfiler(GCProfiler.class)
                .shouldFailOnError(true)
                .timeout(TimeValue.seconds(30));
        h.params(backend).forEach((k, v) -> o.param(k, v));
        return o.build();
    }

    /**
     * One fork's figures: the median of its measurement iterations, ns/op, and its allocation, B/op
     * (JMH's {@code gc.alloc.rate.norm}; 0 when JMH left it out, as it does for allocation-free code).
     *
     * @param nsPerOp the median of {@code iterationsNs}
     * @param bytesPerOp the fork's allocation per operation
     * @param iterationsNs every measurement iteration's ns/op, in order
     */
    record ForkScore(double nsPerOp, double bytesPerOp, double[] iterationsNs) {
        static final ForkScore FAILED = new ForkScore(Double.NaN, Double.NaN, new double[0]);

        /** The score of the single fork in JMH's results of one run; {@link #FAILED} if there is none. */
        static ForkScore of(Collection<RunResult> results) {
            for (RunResult run : results) {
                for (BenchmarkResult fork : run.getBenchmarkResults()) {
                    double[] iterations = fork.getIterationResults().stream()
                            .map(IterationResult::getPrimaryResult)
                            .mapToDouble(r -> JmhResults.toNs(r.getScore(), r.getScoreUnit()))
                            .toArray();
                    Result<?> norm = fork.getSecondaryResults().get(JmhResults.ALLOC_NORM);
                    double bytes = norm == null || Double.isNaN(norm.getScore()) ? 0 : norm.getScore();
                    return new ForkScore(PairedComparison.median(iterations), bytes, iterations);
                }
            }
            return FAILED;
        }
    }

    /**
     * Runs the main job: prints the plan, a line per fork, then the report, and writes
     * {@code results.md} and {@code main-job.json} to {@code dir}.
     *
     * @return the exit status: 0
     */
    static int run(Path dir, PrintStream out) throws IOException {
        long start = System.nanoTime();
        Files.createDirectories(dir);
        Tsc tsc = Tsc.detect();
        String machine = Report.machine();
        String loadAtStart = Report.loadAverage();
        out.println("mbcache-bench main job: mbcache (the kernel port) against caffeine (CaffeineDedupCache)");
        out.println("Machine: " + machine);
        out.println("Plan: " + runNote());
        for (Headline h : HEADLINES) {
            out.printf(Locale.ROOT, "  %-42s Micro.%s bound=%s%n", h.operation(), h.benchmark(), h.bound());
        }
        out.println();

        int n = HEADLINES.size();
        double[][][] ns = new double[n][BACKENDS.size()][ROUNDS];
        double[][][] bytes = new double[n][BACKENDS.size()][ROUNDS];
        double[][][][] iterations = new double[n][BACKENDS.size()][ROUNDS][0];
        for (double[][][] figures : List.of(ns, bytes)) {
            for (double[][] perBackend : figures) {
                for (double[] perRound : perBackend) {
                    Arrays.fill(perRound, Double.NaN); // a round that does not run leaves no figure
                }
            }
        }
        ProgressFormat progress = new ProgressFormat(out, tsc, forks() + HotKeyRun.FORKS, start);
        int roundsRun = 0;
        String stoppedBecause = "";
        rounds:
        for (int round = 0; round < ROUNDS; round++) {
            double elapsed = (System.nanoTime() - start) / 1e9;
            if (!anotherRoundFits(round, elapsed)) {
                out.printf(Locale.ROOT, "Stopping after %d rounds: %.0f s so far, another round would end past the %.0f s budget "
                        + "(the machine is slower or busier than planned).%n", round, elapsed, BUDGET_S);
                stoppedBecause = "; stopped after " + round + " rounds to stay within the " + Math.round(BUDGET_S) + " s budget";
                break;
            }
            roundsRun++;
            for (int h = 0; h < n; h++) {
                for (int k = 0; k < BACKENDS.size(); k++) {
                    // which backend goes first alternates, so that neither always runs first in its pair
                    int b = round % 2 == 0 ? k : BACKENDS.size() - 1 - k;
                    ForkScore score;
                    try {
                        score = fork(HEADLINES.get(h), BACKENDS.get(b), progress, out);
                    } catch (OtherJmhRunning e) {
                        out.println(e.getMessage());
                        stoppedBecause = "; stopped in round " + (round + 1) + ": another JMH run started on this machine";
                        roundsRun--;
                        break rounds;
                    }
                    ns[h][b][round] = score.nsPerOp();
                    iterations[h][b][round] = score.iterationsNs();
                    bytes[h][b][round] = score.bytesPerOp();
                }
            }
        }

        if (roundsRun <= 0) {
            out.println("No round ran: nothing to report.");
            return 1;
        }
        List<PairedComparison> rows = new ArrayList<>();
        for (int h = 0; h < n; h++) {
            rows.add(new PairedComparison(HEADLINES.get(h).operation(), ns[h][0], ns[h][1], bytes[h][0], bytes[h][1]));
        }
        List<HotKeyRun.Cell> hot = List.of();
        if (!stoppedBecause.contains("another JMH run")) {
            out.println();
            out.println("Hot key: every thread looks up one pair, at 1 and 2 threads");
            try {
                hot = HotKeyRun.run(progress, out);
            } catch (OtherJmhRunning e) {
                out.println(e.getMessage());
                stoppedBecause += "; hot-key section stopped: another JMH run started on this machine";
            }
        }
        out.println();
        out.println("Scale: " + String.join(", ", SCALE_BACKENDS) + " at " + SCALE_SIZE + " entries");
        List<Map<String, String>> scale;
        try {
            scale = ScaleBench.run(List.of(SCALE_SIZE), SCALE_BACKENDS, out, false);
        } catch (Exception e) {
            out.println("scale section failed: " + e);
            scale = List.of();
        }
        double wall = (System.nanoTime() - start) / 1e9;
        String note = runNote() + stoppedBecause + "; load average (1 min) " + loadAtStart + " at the start, "
                + Report.loadAverage() + " at the end, on " + Runtime.getRuntime().availableProcessors() + " CPUs";
        String report = QuickReport.markdown(machine, note, rows)
                + (hot.isEmpty() ? "" : "\n" + HotKeyRun.markdown(hot))
                + (scale.isEmpty() ? "" : "\n## Scale: " + String.format(Locale.ROOT, "%,d", SCALE_SIZE)
                        + " entries (the `scale` mode's group, without its GC line)\n\n" + ScaleBench.table(scale))
                + String.format(Locale.ROOT, "%nWall time of this run: %.0f s (planned ~%.0f s).%n", wall, plannedSeconds());
        Path json = dir.resolve("main-job.json");
        writeJson(json, machine, rows, iterations, hot, scale);
        Files.writeString(dir.resolve("results.md"), report, StandardCharsets.UTF_8);
        out.println();
        out.println(report);
        out.println("Wrote " + dir.resolve("results.md") + ", " + json);
        return 0;
    }

    /**
     * Whether round {@code round} (0-based) may start {@code elapsedSeconds} into the job: the first
     * {@link PairedComparison#MIN_ROUNDS} always run; a later one only if, at the pace of the rounds
     * so far, it ends within {@link #BUDGET_S} less the sections' time and a margin for the report.
     */
    static boolean anotherRoundFits(int round, double elapsedSeconds) {
        if (round < PairedComparison.MIN_ROUNDS) {
            return true;
        }
        double perRound = elapsedSeconds / round;
        return elapsedSeconds + perRound <= BUDGET_S - SECTIONS_S - REPORT_MARGIN_S;
    }

    /** Seconds left at the end for the report and the JVM's exit. */
    static final double REPORT_MARGIN_S = 5;

    /**
     * Another JMH run holds JMH's lock: its load would swamp the comparison, so the job stops
     * instead of waiting or running beside it.
     */
    static final class OtherJmhRunning extends Exception {
        OtherJmhRunning(String jmhMessage) {
            super("Another JMH run is in progress on this machine (" + jmhMessage.strip()
                    + "): stopping; run the main job again when it has finished.");
        }
    }

    /** Whether JMH refused to start because another JMH run holds its lock. */
    static boolean isJmhLockHeld(String message) {
        return message != null && message.contains("Unable to acquire the JMH lock");
    }

    /**
     * One fork of a headline on a backend, through JMH's Runner.
     *
     * @throws OtherJmhRunning if another JMH run holds JMH's lock
     */
    static ForkScore fork(Headline h, String backend, ProgressFormat progress, PrintStream out) throws OtherJmhRunning {
        try {
            return ForkScore.of(new Runner(options(h, backend), progress).run());
        } catch (RunnerException e) {
            if (isJmhLockHeld(e.getMessage())) {
                throw new OtherJmhRunning(e.getMessage());
            }
            out.println("  fork failed: " + e.getMessage());
            return ForkScore.FAILED;
        }
    }

    /**
     * Every fork's figures and each row's result, as JSON, for a later comparison of two runs.
     *
     * @param iterations per headline, backend and round: the fork's measurement iterations, ns/op
     */
    static void writeJson(Path file, String machine, List<PairedComparison> rows, double[][][][] iterations,
                          List<HotKeyRun.Cell> hot, List<Map<String, String>> scale) throws IOException {
        List<Map<String, Object>> out = new ArrayList<>();
        for (int h = 0; h < rows.size(); h++) {
            PairedComparison r = rows.get(h);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("operation", r.operation());
            m.put("speedup", r.speedup());
            m.put("low", r.low());
            m.put("high", r.high());
            m.put("confidence", r.confidence());
            m.put("verdict", r.verdict().name());
            m.put("mbcacheNsPerRound", r.kernelNs());
            m.put("caffeineNsPerRound", r.caffeineNs());
            m.put("mbcacheBytesPerRound", r.kernelBytes());
            m.put("caffeineBytesPerRound", r.caffeineBytes());
            m.put("mbcacheIterationsNsPerRound", iterations[h][0]);
            m.put("caffeineIterationsNsPerRound", iterations[h][1]);
            out.add(m);
        }
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("machine", machine);
        root.put("run", runNote());
        root.put("rows", out);
        root.put("hotKey", hot);
        root.put("scale", scale);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), root);
    }

    /** The prefixes of the result lines the child JVMs print; every other line is echoed. */
    static final List<String> RESULT_LINES = List.of("MEMORY ", "XATTR ", "FLOOD ", "FOUNDSHARE ");

    /**
     * Runs {@code main} of a class in a fresh JVM with these JVM options; hands each result line of
     * its stdout to {@code lines} and echoes the others.
     */
    static void childJvm(Class<?> main, List<String> jvmOptions, List<String> args, Consumer<String> lines, PrintStream out)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (RESULT_LINES.stream().anyMatch(line::startsWith)) {
                    lines.accept(line);
                } else if (!line.isBlank()) {
                    out.println("  | " + line);
                }
            }
        }
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            out.println("  | " + main.getSimpleName() + " " + args + ": timed out");
        } else if (p.exitValue() != 0) {
            out.println("  | " + main.getSimpleName() + " " + args + ": exit status " + p.exitValue());
        }
    }
}
