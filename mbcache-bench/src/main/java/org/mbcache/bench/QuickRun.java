package org.mbcache.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.mbcache.bench.report.JmhResults;
import org.mbcache.bench.report.Measured;
import org.mbcache.bench.report.ProgressFormat;
import org.mbcache.bench.report.RatioChart;
import org.mbcache.bench.report.Report;
import org.mbcache.bench.report.ResultTable;
import org.mbcache.bench.report.Tsc;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The main job: a curated quick comparison (all backends, the main operations, 1 and 2 threads,
 * at and below the bound, the ConcurrentHashMap baseline, the seed experiment, retained memory,
 * xattr-bench, the flood at maxEntries 65,536, the real-file found-share) that fits in about
 * 5 minutes on 2 cores. Its iterations are short so that both regimes fit: one fork of
 * 2 x 100 ms warm-up + 3 x 150 ms measurement per JMH run.
 */
final class QuickRun {
    static final int FORKS = 1;
    static final int WARMUP_ITERATIONS = 2;
    static final int WARMUP_MS = 100;
    static final int MEASURE_ITERATIONS = 3;
    static final int MEASURE_MS = 150;
    /**
     * Fork start, heap pre-touch, setup and teardown per JMH run: about 1.0 s in the last quiet run
     * on this VM ((175 s - memory - xattr-bench) / 54 runs - the iterations), 1.3 s with a margin.
     */
    static final double FORK_OVERHEAD_S = 1.3;
    /** Measured here: retained memory, ~3-4 s a backend, CaffeineDedupCache ~20 s (slow fill, 1.2 s full GCs). */
    static final double MEMORY_S = 34.0;
    /** The flood's time budget per phase in the main job; a phase stops there, whatever it has done. */
    static final long FLOOD_BUDGET_MS = 600;
    /** Measured here: the found-share over the JDK's src.zip, both backends, one JVM. */
    static final double FOUND_SHARE_S = 8.0;
    static final String[] FORK_JVM = {"-Xms512m", "-Xmx512m", "-XX:+AlwaysPreTouch"};
    static final int XATTR_WARM_MS = 120;
    static final int XATTR_MEASURE_MS = 250;

    static final String[] ALL = {Backends.MBCACHE, Backends.MBCACHE_ALLOCFIRST, Backends.CAFFEINE, Backends.CAFFEINE_RAW};
    /**
     * Lookups run the same code in both mbcache strategies (they differ only in create), so the
     * quick run shows mbcache-allocfirst on the write benchmarks only; the full suite has it everywhere.
     */
    static final String[] LOOKUP = {Backends.MBCACHE, Backends.CAFFEINE, Backends.CAFFEINE_RAW};
    static final String[] WALK = {Backends.MBCACHE, Backends.CAFFEINE};
    static final List<String> MEMORY_BACKENDS = List.of(ALL);
    /**
     * The flood in the main job: the kernel port and the Caffeine backend (mbcache-allocfirst differs
     * only in create and floods alike; the {@code flood} command runs every backend at both sizes).
     */
    static final List<String> FLOOD_BACKENDS = List.of(Backends.MBCACHE, Backends.CAFFEINE);

    /**
     * One JMH invocation: benchmarks named by their class and method (or {@code @Group}) names,
     * explicit params (so the run count is known), a thread count. The names are checked against
     * the class when the step is made, so a renamed or removed benchmark fails the plan loudly
     * instead of silently matching nothing.
     */
    record Step(Class<?> benchmarks, List<String> methods, Map<String, String[]> params, int threads) {
        Step {
            Objects.requireNonNull(benchmarks, "benchmarks");
            methods = List.copyOf(methods);
            if (methods.isEmpty()) {
                throw new IllegalArgumentException(benchmarks.getSimpleName() + ": a step needs at least one benchmark");
            }
            for (String m : methods) {
                if (!isBenchmark(benchmarks, m)) {
                    throw new IllegalStateException(benchmarks.getName() + " has no @Benchmark method or @Group named '"
                            + m + "': was it renamed? Update QuickRun.steps()");
                }
            }
            params = new LinkedHashMap<>(params);
        }

        Step(Class<?> benchmarks, String method, Map<String, String[]> params, int threads) {
            this(benchmarks, List.of(method), params, threads);
        }

        /** The JMH include regex: exactly these benchmarks of exactly this class. */
        String regex() {
            return "^" + Pattern.quote(benchmarks.getName() + ".") + "(" + String.join("|", methods) + ")$";
        }

        /** {@code Micro.(createNew|churn)}, for the plan. */
        String shortName() {
            return benchmarks.getSimpleName() + "."
                    + (methods.size() == 1 ? methods.get(0) : "(" + String.join("|", methods) + ")");
        }

        /** JMH runs: benchmarks times their param combinations. */
        int runs() {
            int n = methods.size();
            for (String[] v : params.values()) {
                n *= v.length;
            }
            return n;
        }
    }

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

    static final String[] REGIMES = {Backends.AT, Backends.BELOW};
    static final String[] FULL = {Populated.FULL};
    static final String[] UNIFORM = {KeyIndex.UNIFORM};

    /**
     * Every micro-benchmark at 1 and 2 threads, at and below the bound, with the ConcurrentHashMap
     * baseline (and, at 1 thread, the reference-counted floor), then the light load, the mixed group
     * (both regimes) and the 2019 experiment.
     */
    static List<Step> steps() {
        List<Step> steps = new ArrayList<>();
        List<String> writes = List.of("createNew", "createDuplicate", "churn");
        List<String> lookups = List.of("findFirstHit", "findFirstMiss", "getRelease");
        for (int t : new int[] {1, 2}) {
            steps.add(new Step(Micro.class, writes, params("backend", ALL, "bound", REGIMES, "load", FULL, "keys", UNIFORM), t));
            steps.add(new Step(Micro.class, lookups, params("backend", LOOKUP, "bound", REGIMES, "load", FULL, "keys", UNIFORM), t));
            steps.add(new Step(Micro.class, "findCompareTouch", params("backend", WALK, "bound", REGIMES, "keys", UNIFORM), t));
            // the reference-counted floor at 1 thread only: at 2 as well the plan would run past the budget
            steps.add(new Step(Baseline.class, t == 1 ? List.of("findFirstHit", "findFirstHitCounted", "findFirstMiss")
                    : List.of("findFirstHit", "findFirstMiss"),
                    params("backend", new String[] {Backends.CHM}, "load", FULL, "keys", UNIFORM), t));
        }
        // the light load (1 per bucket, cache-resident, so below the bound) for the hit-vs-raw target, 1 thread
        String[] light = {Populated.LIGHT};
        steps.add(new Step(Micro.class, "findFirstHit", params("backend",
                new String[] {Backends.MBCACHE, Backends.CAFFEINE_RAW}, "bound", new String[] {Backends.BELOW}, "load", light, "keys", UNIFORM), 1));
        steps.add(new Step(Baseline.class, "findFirstHit", params("backend", new String[] {Backends.CHM}, "load", light, "keys", UNIFORM), 1));
        steps.add(new Step(Mixed.class, "mixed", params("backend", ALL, "bound", REGIMES, "load", FULL, "keys", UNIFORM), 2));
        steps.add(new Step(SeedCreate.class, "create",
                params("backend", new String[] {Backends.MBCACHE_ALLOCFIRST, Backends.MBCACHE}, "dupPercent", new String[] {"90"}), 1));
        return steps;
    }

    /** Seconds of the xattr-bench: one JVM a backend. */
    static double xattrSeconds() {
        return XattrBench.BACKENDS.size()
                * (2.0 + (4 + XattrBench.THREADS.length * XattrBench.VALUES.length) * (XATTR_WARM_MS + XATTR_MEASURE_MS) / 1000.0);
    }

    /** Seconds of the flood at 65,536: one JVM a backend, two floods, each at most 3 phases of the budget plus the fill. */
    static double floodSeconds() {
        // Measured: about 10 s a backend at 65,536 with 600 ms phases, the warm-up floods included.
        return FLOOD_BACKENDS.size() * (4.0 + Flood.KINDS.size() * (3 * FLOOD_BUDGET_MS / 1000.0 + 1.2));
    }

    /** The plan's estimate of the whole job, in seconds. */
    static double plannedSeconds(List<Step> steps) {
        int runs = steps.stream().mapToInt(Step::runs).sum();
        return runs * secondsPerRun() + MEMORY_S + xattrSeconds() + floodSeconds() + FOUND_SHARE_S;
    }

    private static Map<String, String[]> params(Object... kv) {
        Map<String, String[]> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], (String[]) kv[i + 1]);
        }
        return m;
    }

    static double secondsPerRun() {
        return FORK_OVERHEAD_S + FORKS * (WARMUP_ITERATIONS * WARMUP_MS + MEASURE_ITERATIONS * MEASURE_MS) / 1000.0;
    }

    static String runNote() {
        return String.format(Locale.ROOT, "quick run: %d fork, %d x %d ms warm-up + %d x %d ms measurement per benchmark, "
                        + "forks %s, -prof gc — for publication use `jmh` with -f 3 (the default of every benchmark class)",
                FORKS, WARMUP_ITERATIONS, WARMUP_MS, MEASURE_ITERATIONS, MEASURE_MS, String.join(" ", FORK_JVM));
    }

    static int run(Path dir, PrintStream out) throws IOException, InterruptedException {
        long start = System.nanoTime();
        Files.createDirectories(dir);
        Tsc tsc = Tsc.detect();
        boolean perf = Tsc.perfCountersWork();
        List<Step> steps = steps();
        int jmhRuns = steps.stream().mapToInt(Step::runs).sum();
        double jmhSeconds = jmhRuns * secondsPerRun();
        double memSeconds = MEMORY_S;
        double xattrSeconds = xattrSeconds();

        out.println("mbcache-bench quick comparison");
        out.println("Machine: " + Report.machine());
        out.println(tsc.label());
        out.println("Hardware counters: " + (perf ? "perf works, adding -prof perfnorm" : "not available (perf stat -e instructions: not supported), so no perfnorm"));
        out.println(runNote());
        out.println();
        out.println("Plan:");
        for (Step s : steps) {
            out.printf(Locale.ROOT, "  %3d runs  t=%d  %s  %s%n", s.runs(), s.threads(),
                    s.shortName(), describe(s.params()));
        }
        out.printf(Locale.ROOT, "  JMH: %d runs x ~%.1f s (fork start + pre-touch ~%.0f s, %d x %d + %d x %d ms) = ~%.0f s%n",
                jmhRuns, secondsPerRun(), FORK_OVERHEAD_S, WARMUP_ITERATIONS, WARMUP_MS, MEASURE_ITERATIONS, MEASURE_MS, jmhSeconds);
        out.printf(Locale.ROOT, "  retained memory: %d backends x 1,000,000 entries, one JVM = ~%.0f s%n",
                MEMORY_BACKENDS.size(), memSeconds);
        out.printf(Locale.ROOT, "  xattr-bench: %d backends x T=1,2,4 x V=10,1000, one JVM per backend = ~%.0f s%n",
                XattrBench.BACKENDS.size(), xattrSeconds);
        out.printf(Locale.ROOT, "  flood: %d backends x %d floods at maxEntries 65,536, phases of at most %d ms = ~%.0f s%n",
                FLOOD_BACKENDS.size(), Flood.KINDS.size(), FLOOD_BUDGET_MS, floodSeconds());
        out.printf(Locale.ROOT, "  found-share: real files, default chain cap vs unbounded = ~%.0f s%n", FOUND_SHARE_S);
        out.printf(Locale.ROOT, "  total: ~%.0f s (budget 300 s)%n%n", plannedSeconds(steps));

        ProgressFormat progress = new ProgressFormat(out, tsc, jmhRuns, start);
        List<Path> jsons = new ArrayList<>();
        int i = 0;
        for (Step s : steps) {
            Path json = dir.resolve("jmh-step" + (i++) + ".json");
            Files.deleteIfExists(json);
            ChainedOptionsBuilder o = new OptionsBuilder()
                    .include(s.regex())
                    .threads(s.threads())
                    .forks(FORKS)
                    .warmupIterations(WARMUP_ITERATIONS)
                    .warmupTime(TimeValue.milliseconds(WARMUP_MS))
                    .measurementIterations(MEASURE_ITERATIONS)
                    .measurementTime(TimeValue.milliseconds(MEASURE_MS))
                    .jvmArgsAppend(FORK_JVM)
                    .addProfiler(GCProfiler.class)
                    .shouldFailOnError(false)
                    .timeout(TimeValue.seconds(30))
                    .resultFormat(ResultFormatType.JSON)
                    .result(json.toString());
            if (perf) {
                o.addProfiler("perfnorm");
            }
            s.params().forEach(o::param);
            try {
                new Runner(o.build(), progress).run();
            } catch (RunnerException e) {
                out.println("  step failed: " + e.getMessage());
            }
            if (Files.exists(json)) {
                jsons.add(json);
            }
        }
        Path merged = dir.resolve("jmh.json");
        Files.writeString(merged, mergeJson(jsons), StandardCharsets.UTF_8);
        for (Path p : jsons) {
            Files.deleteIfExists(p);
        }

        out.printf(Locale.ROOT, "%n[%4.0fs] retained memory (1,000,000 entries per backend)%n", (System.nanoTime() - start) / 1e9);
        List<RetainedMemory.Result> memory = new ArrayList<>();
        List<String> memArgs = new ArrayList<>(List.of("nojol"));
        memArgs.addAll(MEMORY_BACKENDS);
        childJvm(RetainedMemory.class, memArgs, line -> {
            RetainedMemory.Result r = RetainedMemory.Result.parse(line);
            memory.add(r);
            out.printf(Locale.ROOT, "  %-20s %.1f B/entry%n", r.backend(), r.heapBytesPerEntry());
        }, out);

        out.printf(Locale.ROOT, "%n[%4.0fs] xattr-bench%n", (System.nanoTime() - start) / 1e9);
        List<XattrBench.Result> xattr = new ArrayList<>();
        for (String b : XattrBench.BACKENDS) {
            childJvm(XattrBench.class, List.of(b, String.valueOf(XATTR_WARM_MS), String.valueOf(XATTR_MEASURE_MS)), line -> {
                if (line.startsWith("XATTR ")) {
                    XattrBench.Result r = XattrBench.Result.parse(line);
                    xattr.add(r);
                    out.printf(Locale.ROOT, "  %-20s T=%d V=%-4d %10.0f ops/s %5d blocks %s%n", b, r.threads(), r.values(),
                            r.opsPerSec(), r.blocksStored(), r.check());
                }
            }, out);
        }

        out.printf(Locale.ROOT, "%n[%4.0fs] flood (maxEntries 65,536)%n", (System.nanoTime() - start) / 1e9);
        List<Flood.Result> flood = new ArrayList<>();
        for (String b : FLOOD_BACKENDS) {
            childJvm(Flood.class, Flood.CHILD_JVM, List.of(b, String.valueOf(Flood.SIZES[0]), String.valueOf(FLOOD_BUDGET_MS)), line -> {
                Flood.Result r = Flood.Result.parse(line);
                flood.add(r);
                out.printf(Locale.ROOT, "  %-20s %-10s attacker %.0f ns (x%.1f honest), victims x%.1f, honest p99.9 x%.1f%n",
                        b, r.flood(), r.attackerNs(), r.attackerRatio(), r.victimRatio(), r.honestP999Ratio());
            }, out);
        }

        out.printf(Locale.ROOT, "%n[%4.0fs] found-share (real files)%n", (System.nanoTime() - start) / 1e9);
        List<FoundShare.Result> share = new ArrayList<>();
        childJvm(FoundShare.class, List.of(), line -> {
            FoundShare.Result r = FoundShare.Result.parse(line);
            share.add(r);
            out.printf(Locale.ROOT, "  %-20s %.2f%% (%d of %d duplicates found)%n", r.backend(), 100 * r.share(),
                    r.foundCapped(), r.foundUnbounded());
        }, out);

        String report = Report.markdown(runNote(), JmhResults.read(merged), tsc, new Measured(memory, xattr, flood, share));
        double wall = (System.nanoTime() - start) / 1e9;
        report += String.format(Locale.ROOT, "%nWall time of this run: %.0f s (planned ~%.0f s).%n", wall, plannedSeconds(steps));
        Files.writeString(dir.resolve("results.md"), report, StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("ratios.svg"),
                RatioChart.svg(new ResultTable(JmhResults.read(merged)), "mbcache-bench: speed-up over caffeine (quick run)"),
                StandardCharsets.UTF_8);
        out.println();
        out.println(report);
        out.println("Wrote " + merged + ", " + dir.resolve("results.md") + ", " + dir.resolve("ratios.svg"));
        return 0;
    }

    static String describe(Map<String, String[]> params) {
        StringBuilder b = new StringBuilder();
        params.forEach((k, v) -> b.append(k).append('=').append(String.join(",", v)).append(' '));
        return b.toString().trim();
    }

    /** Concatenates JMH JSON arrays. */
    static String mergeJson(List<Path> files) throws IOException {
        StringBuilder b = new StringBuilder("[");
        for (Path p : files) {
            String s = Files.readString(p).trim();
            if (s.length() < 2) {
                continue;
            }
            String inner = s.substring(1, s.length() - 1).trim();
            if (inner.isEmpty()) {
                continue;
            }
            if (b.length() > 1) {
                b.append(",\n");
            }
            b.append(inner);
        }
        return b.append("]\n").toString();
    }

    /** The prefixes of the result lines the child JVMs print; every other line is echoed. */
    static final List<String> RESULT_LINES = List.of("MEMORY ", "XATTR ", "FLOOD ", "FOUNDSHARE ");

    /**
     * Runs {@code main} of a class in a fresh JVM like JMH's forks; hands each result line of its
     * stdout to {@code lines} and echoes the others.
     */
    static void childJvm(Class<?> main, List<String> args, Consumer<String> lines, PrintStream out)
            throws IOException, InterruptedException {
        childJvm(main, List.of(FORK_JVM), args, lines, out);
    }

    /** {@link #childJvm(Class, List, Consumer, PrintStream)} with these JVM options instead of the forks'. */
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
