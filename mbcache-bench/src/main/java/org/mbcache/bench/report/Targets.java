package org.mbcache.bench.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.mbcache.bench.report.JmhResults.Row;
import org.mbcache.bench.Backends;
import org.mbcache.bench.RetainedMemory;
import org.mbcache.bench.XattrBench;

/** The project's performance targets, each checked against measured figures: met, missed, or not measured. */
public final class Targets {
    public enum Status { MET, MISSED, NOT_MEASURED }

    public record Target(String name, Status status, String measured) {}

    private Targets() {}

    public static List<Target> evaluate(ResultTable table, Tsc tsc, List<RetainedMemory.Result> memory,
                                        List<XattrBench.Result> xattr) {
        List<Target> out = new ArrayList<>();
        out.add(fasterThanCaffeine(table));
        out.add(hitNearRaw(table));
        out.add(bytes(table, "Micro.createDuplicate", "duplicate create (REQUEST_LIST) allocates 0 B/op", 0.5, "0"));
        out.add(bytes(table, "Micro.createNew", "new create <= 48 B/op", 48, "48"));
        out.add(createCycles(table, tsc));
        out.add(memory(memory));
        out.add(xattr(xattr));
        return out;
    }

    static Target fasterThanCaffeine(ResultTable table) {
        String name = "mbcache >= 1.5x faster than caffeine on every micro-benchmark (1 and 2 threads)";
        double min = Double.POSITIVE_INFINITY;
        String worst = "";
        List<String> misses = new ArrayList<>();
        int n = 0;
        for (List<Row> g : table.groups()) {
            Row m = ResultTable.find(g, Backends.MBCACHE);
            if (m == null || m.benchmark().startsWith("SeedCreate") || m.benchmark().contains(":")) {
                continue;
            }
            double s = ResultTable.speedup(g, m);
            if (Double.isNaN(s)) {
                continue;
            }
            n++;
            String where = label(m);
            if (s < min) {
                min = s;
                worst = where;
            }
            if (s < 1.5) {
                misses.add(String.format(Locale.ROOT, "%s %.2fx", where, s));
            }
        }
        if (n == 0) {
            return new Target(name, Status.NOT_MEASURED, "no row group with both mbcache and caffeine");
        }
        String measured = String.format(Locale.ROOT, "%d row groups; slowest %.2fx (%s)", n, min, worst)
                + (misses.isEmpty() ? "" : "; below 1.5x: " + String.join(", ", misses));
        return new Target(name, misses.isEmpty() ? Status.MET : Status.MISSED, measured);
    }

    static Target hitNearRaw(ResultTable table) {
        String name = "findFirst+release hit within 1.25x of caffeine-raw getIfPresent";
        List<String> parts = new ArrayList<>();
        boolean ok = true;
        for (List<Row> g : table.groups()) {
            Row m = ResultTable.find(g, Backends.MBCACHE);
            Row raw = ResultTable.find(g, Backends.CAFFEINE_RAW);
            if (m == null || raw == null || !m.benchmark().equals("Micro.findFirstHit")) {
                continue;
            }
            double ratio = m.nsPerOp() / raw.nsPerOp();
            ok &= ratio <= 1.25;
            parts.add(String.format(Locale.ROOT, "%s: %.2fx raw's time", label(m), ratio));
        }
        return parts.isEmpty() ? new Target(name, Status.NOT_MEASURED, "")
                : new Target(name, ok ? Status.MET : Status.MISSED, String.join("; ", parts));
    }

    static Target bytes(ResultTable table, String benchmark, String name, double limit, String shown) {
        List<String> parts = new ArrayList<>();
        boolean ok = true;
        for (List<Row> g : table.groups()) {
            Row m = ResultTable.find(g, Backends.MBCACHE);
            if (m == null || !m.benchmark().equals(benchmark)) {
                continue;
            }
            boolean met = limit == 0.5 ? m.bytesPerOp() < 0.5 : m.bytesPerOp() <= limit;
            ok &= met;
            parts.add(label(m) + ": " + ResultTable.bytes(m.bytesPerOp()) + " B/op");
        }
        return parts.isEmpty() ? new Target(name, Status.NOT_MEASURED, "")
                : new Target(name, ok ? Status.MET : Status.MISSED, String.join("; ", parts) + " (limit " + shown + ")");
    }

    static Target createCycles(ResultTable table, Tsc tsc) {
        String name = "new create with reclaim, 1 thread <= 75 TSC cycles";
        for (List<Row> g : table.groups()) {
            Row m = ResultTable.find(g, Backends.MBCACHE);
            if (m != null && m.benchmark().equals("Micro.createNew") && m.threads() == 1) {
                double c = tsc.cycles(m.nsPerOp());
                return new Target(name, c <= 75 ? Status.MET : Status.MISSED,
                        String.format(Locale.ROOT, "%.0f TSC cycles (%.1f ns/op)", c, m.nsPerOp()));
            }
        }
        return new Target(name, Status.NOT_MEASURED, "");
    }

    static Target memory(List<RetainedMemory.Result> memory) {
        String name = "retained memory <= 48 B/entry and <= half of caffeine's";
        RetainedMemory.Result m = null;
        RetainedMemory.Result c = null;
        for (RetainedMemory.Result r : memory) {
            if (r.backend().equals(Backends.MBCACHE)) {
                m = r;
            } else if (r.backend().equals(Backends.CAFFEINE)) {
                c = r;
            }
        }
        if (m == null || Double.isNaN(m.bytesPerEntry())) {
            return new Target(name, Status.NOT_MEASURED, "");
        }
        boolean ok = m.bytesPerEntry() <= 48;
        String measured = String.format(Locale.ROOT, "mbcache %.1f B/entry", m.bytesPerEntry());
        if (c != null && !Double.isNaN(c.bytesPerEntry())) {
            ok &= m.bytesPerEntry() <= c.bytesPerEntry() / 2;
            measured += String.format(Locale.ROOT, ", caffeine %.1f B/entry (ratio %.2f)", c.bytesPerEntry(),
                    m.bytesPerEntry() / c.bytesPerEntry());
        } else {
            ok = false;
            measured += ", caffeine not measured";
        }
        return new Target(name, ok ? Status.MET : Status.MISSED, measured);
    }

    static Target xattr(List<XattrBench.Result> xattr) {
        String name = "xattr-bench: mbcache beats caffeine and no-cache at every T and V (ops/s)";
        List<String> misses = new ArrayList<>();
        int n = 0;
        for (XattrBench.Result m : xattr) {
            if (!m.backend().equals(Backends.MBCACHE)) {
                continue;
            }
            for (String other : List.of(Backends.CAFFEINE, Backends.NONE)) {
                XattrBench.Result o = XattrBench.find(xattr, other, m.threads(), m.values());
                if (o == null) {
                    continue;
                }
                n++;
                if (!(m.opsPerSec() > o.opsPerSec())) {
                    misses.add(String.format(Locale.ROOT, "T=%d V=%d vs %s %.2fx", m.threads(), m.values(), other,
                            m.opsPerSec() / o.opsPerSec()));
                }
            }
        }
        if (n == 0) {
            return new Target(name, Status.NOT_MEASURED, "");
        }
        return new Target(name, misses.isEmpty() ? Status.MET : Status.MISSED,
                n + " comparisons" + (misses.isEmpty() ? ", all won" : "; lost: " + String.join(", ", misses)));
    }

    static String label(Row r) {
        return r.benchmark() + " t=" + r.threads() + (r.otherParams().isEmpty() ? "" : " " + r.otherParams());
    }

    public static String markdown(List<Target> targets) {
        StringBuilder b = new StringBuilder("| target | status | measured |\n| --- | --- | --- |\n");
        for (Target t : targets) {
            b.append("| ").append(t.name()).append(" | ")
                    .append(t.status() == Status.MET ? "met" : t.status() == Status.MISSED ? "**MISSED**" : "not measured")
                    .append(" | ").append(t.measured()).append(" |\n");
        }
        return b.toString();
    }
}
