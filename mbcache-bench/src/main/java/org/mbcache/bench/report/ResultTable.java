package org.mbcache.bench.report;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.mbcache.bench.Backends;
import org.mbcache.bench.report.JmhResults.Row;

/**
 * The results as a markdown table. Rows with the same benchmark, threads and non-backend params
 * form a row group; each row's speed-up is the {@code caffeine} row's ns/op in its group divided
 * by its own (above 1: faster than caffeine).
 */
public final class ResultTable {
    public static final List<String> BACKEND_ORDER = List.of(
            Backends.MBCACHE, Backends.MBCACHE_ALLOCFIRST, Backends.CAFFEINE, Backends.CAFFEINE_RAW, Backends.CHM, Backends.NONE);

    private final List<List<Row>> groups = new ArrayList<>();

    public ResultTable(List<Row> rows) {
        Map<String, List<Row>> byKey = new LinkedHashMap<>();
        for (Row r : rows) {
            byKey.computeIfAbsent(r.groupKey(), k -> new ArrayList<>()).add(r);
        }
        for (List<Row> g : byKey.values()) {
            g.sort(Comparator.comparingInt(ResultTable::backendRank));
            groups.add(g);
        }
    }

    static int backendRank(Row r) {
        int i = BACKEND_ORDER.indexOf(r.backend());
        return i < 0 ? BACKEND_ORDER.size() : i;
    }

    public List<List<Row>> groups() {
        return groups;
    }

    /** The row of this backend in the group, or null. */
    public static Row find(List<Row> group, String backend) {
        for (Row r : group) {
            if (r.backend().equals(backend)) {
                return r;
            }
        }
        return null;
    }

    /** caffeine's ns/op over this row's, in the row's group; NaN without a caffeine row. */
    public static double speedup(List<Row> group, Row r) {
        Row c = find(group, Backends.CAFFEINE);
        if (c == null || !(r.nsPerOp() > 0)) {
            return Double.NaN;
        }
        return c.nsPerOp() / r.nsPerOp();
    }

    public String markdown(Tsc tsc) {
        StringBuilder b = new StringBuilder();
        b.append("| benchmark | threads | params | backend | ns/op | ± (99.9%) | TSC cycles/op | B/op | vs caffeine (×) |\n");
        b.append("| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
        for (List<Row> g : groups) {
            for (Row r : g) {
                double s = speedup(g, r);
                b.append("| ").append(r.benchmark())
                        .append(" | ").append(r.threads())
                        .append(" | ").append(r.otherParams().isEmpty() ? "" : r.otherParams())
                        .append(" | ").append(r.backend())
                        .append(" | ").append(fmt(r.nsPerOp()))
                        .append(" | ").append(fmt(r.errorNs()))
                        .append(" | ").append(fmt(tsc.cycles(r.nsPerOp())))
                        .append(" | ").append(Double.isNaN(r.bytesPerOp()) ? "—" : bytes(r.bytesPerOp()))
                        .append(" | ").append(Double.isNaN(s) ? "—" : String.format(Locale.ROOT, "%.2f", s))
                        .append(" |\n");
            }
        }
        b.append("\n").append(tsc.label()).append(". B/op: JMH gc.alloc.rate.norm (absent = 0). ")
                .append("vs caffeine: caffeine's ns/op ÷ this row's (>1 = faster than caffeine).\n");
        return b.toString();
    }

    /**
     * For every benchmark, params and backend measured at 1 thread and at more: both times and their
     * ratio (N threads ÷ 1; 1.00 is perfect scaling of the per-thread cost), one line per thread count
     * above 1, sorted by benchmark, params, backend and threads. Empty if no pair. A {@code jmh} run with
     * {@code -t 1} and {@code -t 2} gets one line per pair; a run at 4-16 threads on a larger machine
     * ({@code many-cores.sh}) gets the same table with more lines.
     */
    public String scalingMarkdown() {
        List<Row> many = new ArrayList<>();
        for (List<Row> g : groups) {
            for (Row r : g) {
                if (r.threads() > 1 && counterpart(r, 1) != null) {
                    many.add(r);
                }
            }
        }
        if (many.isEmpty()) {
            return "";
        }
        many.sort(Comparator.comparing(Row::benchmark).thenComparing(Row::otherParams).thenComparing(Row::backend)
                .thenComparingInt(Row::threads));
        StringBuilder b = new StringBuilder(
                "| benchmark | params | backend | threads | 1T ns/op | ns/op | ÷ 1T |\n| --- | --- | --- | ---: | ---: | ---: | ---: |\n");
        for (Row r : many) {
            Row one = counterpart(r, 1);
            b.append("| ").append(r.benchmark())
                    .append(" | ").append(r.otherParams())
                    .append(" | ").append(r.backend())
                    .append(" | ").append(r.threads())
                    .append(" | ").append(fmt(one.nsPerOp()))
                    .append(" | ").append(fmt(r.nsPerOp()))
                    .append(" | ").append(String.format(Locale.ROOT, "%.2f", r.nsPerOp() / one.nsPerOp()))
                    .append(" |\n");
        }
        return b.append("\nns/op is per operation of one thread: a ratio above 1 means the threads slow each other down.\n")
                .toString();
    }

    /** The row of the same benchmark, params and backend at {@code threads}, or null. */
    public Row counterpart(Row r, int threads) {
        for (List<Row> g : groups) {
            Row first = g.get(0);
            if (first.threads() == threads && first.benchmark().equals(r.benchmark())
                    && first.otherParams().equals(r.otherParams())) {
                return find(g, r.backend());
            }
        }
        return null;
    }

    /** ns and cycles: 3 significant digits-ish, no exponent. */
    static String fmt(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return "NaN";
        }
        if (Math.abs(v) >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (Math.abs(v) >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    /** B/op: JMH reports allocation-free code as a tiny fraction; below 0.5 prints as 0. */
    static String bytes(double v) {
        if (v < 0.5) {
            return "0";
        }
        return String.format(Locale.ROOT, "%.0f", v);
    }
}
