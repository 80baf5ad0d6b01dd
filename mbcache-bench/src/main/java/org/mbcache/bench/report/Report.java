package org.mbcache.bench.report;

import java.util.List;
import java.util.Locale;
import org.mbcache.bench.Backends;
import org.mbcache.bench.RetainedMemory;
import org.mbcache.bench.XattrBench;
import org.mbcache.bench.report.JmhResults.Row;

/** Puts the sections of results.md together. */
public final class Report {
    private Report() {}

    public static String machine() {
        return String.format(Locale.ROOT, "%s, %d CPUs available, %s %s (%s)", Tsc.cpuModel(),
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.name"),
                System.getProperty("java.version"), System.getProperty("os.name"));
    }

    /**
     * The 1-minute load average from {@code /proc/loadavg}: how many threads wanted a CPU, on
     * average, over the last minute (above the CPU count: a busy machine); "unknown" where the
     * file is missing.
     */
    public static String loadAverage() {
        String text = Tsc.read("/proc/loadavg");
        return text == null || text.isBlank() ? "unknown" : text.strip().split("\\s+")[0];
    }

    /**
     * The whole report: micro-benchmarks, their scaling, the 2019 experiment, then whatever
     * {@code measured} holds, then the targets.
     */
    public static String markdown(String runNote, List<Row> rows, Tsc tsc, Measured measured) {
        List<RetainedMemory.Result> memory = measured.memory();
        List<XattrBench.Result> xattr = measured.xattr();
        ResultTable table = new ResultTable(rows);
        StringBuilder b = new StringBuilder();
        b.append("# mbcache-bench results\n\n");
        b.append("- Machine: ").append(machine()).append('\n');
        b.append("- Cycles: ").append(tsc.label()).append('\n');
        b.append("- Run: ").append(runNote).append("\n\n");
        b.append("## Micro-benchmarks\n\n");
        b.append("Design load: bucketBits 12, 65,536 live pairs (16 per bucket); `bound=at`: maxEntries 65,536 (the cache "
                + "at its bound: creates make reclaim run), `bound=below`: maxEntries 2^24 (nothing is reclaimed; `createNew` there: bucketBits 16, "
                + "the cache grows during an iteration). Keys uniform "
                + "unless the params say otherwise. `Mixed.mixed` is 1 reader + 1 writer thread; `Baseline.findFirstHit` "
                + "and `Baseline.findFirstMiss` (`chm`) are a plain ConcurrentHashMap<Integer, long[]> lookup of the same pairs "
                + "(and of the same absent keys).\n\n");
        b.append(table.markdown(tsc)).append('\n');
        String scaling = table.scalingMarkdown();
        if (!scaling.isEmpty()) {
            b.append("## Scaling: more threads over 1\n\n").append(scaling).append('\n');
        }
        String seed = seed(rows, tsc);
        if (!seed.isEmpty()) {
            b.append("## The 2019 experiment: create with 90% duplicates\n\n").append(seed).append('\n');
        }
        if (!memory.isEmpty()) {
            b.append("## Retained memory, ").append(String.format(Locale.ROOT, "%,d", RetainedMemory.ENTRIES))
                    .append(" entries\n\n| backend | B/entry (heap after full GC, delta) | B/entry (JOL GraphLayout) |\n| --- | ---: | ---: |\n");
            for (RetainedMemory.Result r : memory) {
                b.append(String.format(Locale.ROOT, "| %s | %.1f | %s |\n", r.backend(), r.heapBytesPerEntry(),
                        Double.isNaN(r.jolBytesPerEntry()) ? "not run" : String.format(Locale.ROOT, "%.1f", r.jolBytesPerEntry())));
            }
            b.append("\nmbcache: bucketBits 16 (16 per bucket); caffeine-raw holds a boxed Long key and value per entry.\n\n");
        }
        if (!xattr.isEmpty()) {
            b.append("## xattr-bench (ext4's sharing pattern, simulated block store)\n\n").append(XattrBench.markdown(xattr)).append('\n');
        }
        if (!measured.flood().isEmpty()) {
            b.append("## Flood: one writer who chooses keys\n\n").append(FloodTable.markdown(measured.flood())).append('\n');
        }
        if (!measured.foundShare().isEmpty()) {
            b.append("## Real files: duplicates found with the chain cap\n\n")
                    .append(FloodTable.foundShareMarkdown(measured.foundShare())).append('\n');
        }
        b.append("## Targets\n\n").append(Targets.markdown(Targets.evaluate(table, tsc, measured)));
        return b.toString();
    }

    /** The seed's before/after, in its own words: AVG cycles per create. */
    static String seed(List<Row> rows, Tsc tsc) {
        Row before = null;
        Row after = null;
        for (Row r : rows) {
            if (r.benchmark().equals("SeedCreate.create")) {
                if (r.backend().equals(Backends.MBCACHE_ALLOCFIRST)) {
                    before = r;
                } else if (r.backend().equals(Backends.MBCACHE)) {
                    after = r;
                }
            }
        }
        if (before == null || after == null) {
            return "";
        }
        return String.format(Locale.ROOT,
                "```\nBefore (ALLOCATE_FIRST, mainline):  create: AVG cycles: %.0f   (%.1f ns, %s B/op)\n"
                        + "After  (REQUEST_LIST, 2019 patch):  create: AVG cycles: %.0f   (%.1f ns, %s B/op)\n```\n"
                        + "Change: %+.1f%% cycles. TSC cycles, as the kernel's get_cycles(); %s. "
                        + "Kernel, 2019: 75-78 cycles before, 68-71 after.\n",
                tsc.cycles(before.nsPerOp()), before.nsPerOp(), ResultTable.bytes(before.bytesPerOp()),
                tsc.cycles(after.nsPerOp()), after.nsPerOp(), ResultTable.bytes(after.bytesPerOp()),
                (after.nsPerOp() / before.nsPerOp() - 1) * 100, before.otherParams());
    }
}
