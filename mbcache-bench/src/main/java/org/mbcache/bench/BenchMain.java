package org.mbcache.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.mbcache.bench.report.FloodTable;
import org.mbcache.bench.report.JmhResults;
import org.mbcache.bench.report.Measured;
import org.mbcache.bench.report.RatioChart;
import org.mbcache.bench.report.Report;
import org.mbcache.bench.report.RunAgreement;
import org.mbcache.bench.report.ResultTable;
import org.mbcache.bench.report.Targets;
import org.mbcache.bench.report.Tsc;
import org.mbcache.examples.SharedBlockStore;

/**
 * {@code java -jar mbcache-bench.jar [command]}:
 * <ul>
 *   <li>no argument: the main job ({@link QuickRun}): the headline operations of mbcache against caffeine,
 *       with how sure each ratio is, then the hot-key section and the scale group at 10^6 entries,
 *       results in {@code mbcache-bench/results/};</li>
 *   <li>{@code jmh ARGS...}: JMH itself with ARGS (the full suite: {@code jmh}; {@code jmh -l};
 *       {@code jmh Micro.findFirstHit -f 3 -t 2}); adds {@code -prof gc} and a JSON result file
 *       unless ARGS choose their own, then prints the table;</li>
 *   <li>{@code table FILE.json...}: the table, targets and chart from JMH JSON files;</li>
 *   <li>{@code memory [BACKEND...]}: retained memory per entry (with JOL: slow);</li>
 *   <li>{@code xattr BACKEND [warmMs measureMs]}: xattr-bench for one backend, in this JVM;</li>
 *   <li>{@code flood [BACKEND...] [--sizes N,...] [--budget-ms MS]}: the flood benchmark ({@link Flood}),
 *       one JVM per backend, then its table and targets;</li>
 *   <li>{@code foundshare [SOURCE]}: the real-file found-share ({@link FoundShare}), in this JVM;</li>
 *   <li>{@code example}: ext4's share-or-write pattern on real bytes ({@link SharedBlockStore});</li>
 *   <li>{@code foundshare --restart [SOURCE]}: the same, with a restart from a snapshot halfway;</li>
 *   <li>{@code bursty [BACKEND...] [--warmup-ms MS] [--measure-ms MS]}: bursts of new creates with
 *       idle gaps ({@link BurstyWriter});</li>
 *   <li>{@code snapshot [--sizes N,...] [BACKEND...]}: snapshot write and restore against creating
 *       the pairs ({@link SnapshotBench});</li>
 *   <li>{@code layout [N]}: what a counted hit costs for each placement of a bucket and its slots
 *       ({@link LayoutProbe}), in this JVM;</li>
 *   <li>{@code compare FIRST.json SECOND.json}: whether two main-job runs ({@code main-job.json}) agree;</li>
 *   <li>{@code scale [--sizes N,...] [--jvm-arg ARG]... [BACKEND...]}: memory, lookups, creates and GC by entry count
 *       ({@link ScaleBench}), one JVM per backend and size.</li>
 * </ul>
 */
public final class BenchMain {
    private BenchMain() {}

    static Path resultsDir() {
        return Path.of(System.getProperty("mbcache.results", "mbcache-bench/results"));
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.exit(QuickRun.run(resultsDir(), System.out));
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        switch (args[0]) {
            case "jmh":
                jmh(rest);
                break;
            case "table":
                table(rest);
                break;
            case "memory":
                RetainedMemory.main(rest.length == 0 ? QuickRun.MEMORY_BACKENDS.toArray(new String[0]) : rest);
                break;
            case "xattr":
                XattrBench.main(rest);
                break;
            case "flood":
                flood(rest);
                break;
            case "foundshare":
                FoundShare.main(rest);
                break;
            case "scale":
                ScaleBench.main(rest);
                break;
            case "bursty":
                BurstyWriter.main(rest);
                break;
            case "snapshot":
                SnapshotBench.main(rest);
                break;
            case "layout":
                LayoutProbe.main(rest);
                break;
            case "example":
                SharedBlockStore.main(rest);
                break;
            case "compare":
                compare(rest);
                break;
            case "-h":
            case "--help":
            case "help":
                usage();
                break;
            default:
                System.err.println("unknown command: " + args[0]);
                usage();
                System.exit(2);
        }
    }

    static void usage() {
        System.out.println(String.join("\n",
                "usage: java -jar mbcache-bench.jar               main job: mbcache vs caffeine, hot key, scale 10^6 (~4 min)",
                "       java -jar mbcache-bench.jar jmh [JMH args]  JMH itself: the full suite, or e.g. -l, 'Micro.findFirstHit -f 3 -t 2'",
                "       java -jar mbcache-bench.jar table FILE.json...  table + targets + chart from JMH JSON",
                "       java -jar mbcache-bench.jar memory [BACKEND...]  retained bytes per entry (JOL + heap delta)",
                "       java -jar mbcache-bench.jar xattr BACKEND [warmMs measureMs]",
                "       java -jar mbcache-bench.jar flood [BACKEND...] [--sizes 65536,1048576] [--budget-ms 3000]",
                "       java -jar mbcache-bench.jar foundshare [SOURCE.zip|DIR]  duplicates found with the chain cap vs unbounded",
                "       java -jar mbcache-bench.jar foundshare --restart [SOURCE]  the same, restarted halfway from a snapshot",
                "       java -jar mbcache-bench.jar bursty [BACKEND...] [--warmup-ms MS] [--measure-ms MS]  bursts of new creates with idle gaps",
                "       java -jar mbcache-bench.jar snapshot [--sizes 100000,10000000] [BACKEND...]  snapshot write/restore vs create, bytes a pair",
                "       java -jar mbcache-bench.jar example           ext4's share-or-write pattern: blocks written, shared, cache stats",
                "       java -jar mbcache-bench.jar layout [N]        a counted hit's cost by placement of bucket and slots (give -Xmx2g)",
                "       java -jar mbcache-bench.jar compare FIRST.json SECOND.json  do two main-job runs (main-job.json) agree?",
                "       java -jar mbcache-bench.jar scale [--sizes 100000,1000000] [--jvm-arg ARG]... [BACKEND...]  bytes/entry, hit, miss, churn, GC by size"));
    }

    /**
     * The flood benchmark for the named backends (default: every DedupCache backend), each in a
     * fresh JVM, at each size; prints the table and the flood targets, writes {@code flood.md}.
     */
    static void flood(String[] args) throws Exception {
        List<String> backends = new ArrayList<>();
        String sizes = Flood.SIZES[0] + "," + Flood.SIZES[1];
        String budget = "3000";
        for (int i = 0; i < args.length; i++) {
            if ((args[i].equals("--sizes") || args[i].equals("--budget-ms")) && i + 1 < args.length) {
                if (args[i].equals("--sizes")) {
                    sizes = args[++i];
                } else {
                    budget = args[++i];
                }
            } else if (Backends.DEDUP.contains(args[i])) {
                backends.add(args[i]);
            } else {
                System.err.println("flood: unknown argument " + args[i] + " (backends: " + Backends.DEDUP + ")");
                System.exit(2);
            }
        }
        if (backends.isEmpty()) {
            backends.addAll(Backends.DEDUP);
        }
        List<Flood.Result> results = new ArrayList<>();
        for (String b : backends) {
            System.out.println("# flood " + b + " maxEntries " + sizes + ", phases of at most " + budget + " ms");
            QuickRun.childJvm(Flood.class, Flood.CHILD_JVM, List.of(b, sizes, budget), line -> {
                System.out.println(line);
                results.add(Flood.Result.parse(line));
            }, System.out);
        }
        ResultTable none = new ResultTable(List.of());
        String report = "# mbcache-bench flood\n\n- Machine: " + Report.machine() + "\n\n" + FloodTable.markdown(results)
                + "\n" + Targets.markdown(Targets.evaluate(none, Tsc.detect(), new Measured(List.of(), List.of(), results, List.of()))
                        .stream().filter(t -> t.name().contains("flood")).toList());
        Files.createDirectories(resultsDir());
        Files.writeString(resultsDir().resolve("flood.md"), report, StandardCharsets.UTF_8);
        System.out.println(report);
        System.out.println("Wrote " + resultsDir().resolve("flood.md"));
    }

    /** Prints how far two main-job runs agree, speed-up by speed-up. */
    static void compare(String[] files) throws Exception {
        if (files.length != 2) {
            System.err.println("compare: give two main-job.json files");
            System.exit(2);
        }
        System.out.print(RunAgreement.markdown(RunAgreement.pairs(
                RunAgreement.speedups(Path.of(files[0])), RunAgreement.speedups(Path.of(files[1])))));
    }

    private static final Set<String> INFO = Set.of("-l", "-lp", "-lprof", "-lrf", "-h", "--help", "-help");

    static void jmh(String[] args) throws Exception {
        List<String> a = new ArrayList<>(Arrays.asList(args));
        Path json = null;
        if (a.stream().noneMatch(INFO::contains)) {
            if (!hasProfiler(a, "gc")) {
                a.add("-prof");
                a.add("gc");
            }
            if (Tsc.perfCountersWork() && !hasProfiler(a, "perfnorm")) {
                a.add("-prof");
                a.add("perfnorm");
            }
            if (!a.contains("-rf") && !a.contains("-rff")) {
                Files.createDirectories(resultsDir());
                json = resultsDir().resolve("jmh-full.json");
                a.add("-rf");
                a.add("json");
                a.add("-rff");
                a.add(json.toString());
            }
            System.out.println("# jmh " + String.join(" ", a));
        }
        org.openjdk.jmh.Main.main(a.toArray(new String[0]));
        if (json != null && Files.exists(json)) {
            table(new String[] {json.toString()});
        }
    }

    static boolean hasProfiler(List<String> a, String name) {
        for (int i = 0; i + 1 < a.size(); i++) {
            if (a.get(i).equals("-prof") && a.get(i + 1).startsWith(name)) {
                return true;
            }
        }
        return false;
    }

    static void table(String[] files) throws Exception {
        if (files.length == 0) {
            System.err.println("table: give one or more JMH JSON files");
            System.exit(2);
        }
        List<JmhResults.Row> rows = new ArrayList<>();
        int forks = Integer.MAX_VALUE;
        for (String f : files) {
            for (JmhResults.Row r : JmhResults.read(Path.of(f))) {
                rows.add(r);
                forks = Math.min(forks, r.forks());
            }
        }
        Tsc tsc = Tsc.detect();
        String note = "from " + String.join(", ", files) + "; " + (forks == Integer.MAX_VALUE ? "?" : forks)
                + " fork(s) per result" + (forks < 3 ? " — for publication use at least -f 3" : "");
        String report = Report.markdown(note, rows, tsc, Measured.none());
        Files.createDirectories(resultsDir());
        Files.writeString(resultsDir().resolve("results-table.md"), report, StandardCharsets.UTF_8);
        Files.writeString(resultsDir().resolve("ratios-table.svg"),
                RatioChart.svg(new ResultTable(rows), "mbcache-bench: speed-up over caffeine"), StandardCharsets.UTF_8);
        System.out.println(report);
        System.out.println("Wrote " + resultsDir().resolve("results-table.md") + ", " + resultsDir().resolve("ratios-table.svg"));
    }
}
