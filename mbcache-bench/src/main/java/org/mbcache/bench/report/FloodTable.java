package org.mbcache.bench.report;

import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.mbcache.bench.Flood;
import org.mbcache.bench.FoundShare;

/** The flood benchmark's and the found-share's results as markdown tables. */
public final class FloodTable {
    private FloodTable() {}

    /**
     * A column of a table: its header, whether its cells (figures) align right and how a row
     * writes its cell.
     */
    record Column<R>(String header, boolean alignRight, Function<R, String> cell) {
        /** A column of text, left-aligned. */
        static <R> Column<R> text(String header, Function<R, String> cell) {
            return new Column<>(header, false, cell);
        }

        /** A column of figures, right-aligned. */
        static <R> Column<R> figures(String header, Function<R, String> cell) {
            return new Column<>(header, true, cell);
        }
    }

    /** The flood table's columns, in order. */
    private static final List<Column<Flood.Result>> FLOOD_COLUMNS = List.of(
            Column.text("flood", Flood.Result::flood),
            Column.figures("maxEntries", r -> count(r.maxEntries())),
            Column.text("backend", Flood.Result::backend),
            Column.figures("attacker create ns", r -> withMean(r.attackerNs(), r.attackerMeanNs())),
            Column.figures("honest new create ns", r -> withMean(r.honestCreateNs(), r.honestCreateMeanNs())),
            Column.figures("attacker ÷ honest", r -> ratio(r.attackerRatio())),
            Column.figures("victim ns before", r -> withMean(r.victimBeforeNs(), r.victimBeforeMeanNs())),
            Column.figures("victim ns during", r -> withMean(r.victimDuringNs(), r.victimDuringMeanNs())),
            Column.figures("victims during ÷ before", r -> ratio(r.victimRatio())),
            Column.figures("honest ns before", r -> ResultTable.fmt(r.honestBeforeNs())),
            Column.figures("honest ns during", r -> ResultTable.fmt(r.honestDuringNs())),
            Column.figures("honest during ÷ before", r -> ratio(r.honestRatio())),
            Column.figures("honest p99.9 ns before", r -> ResultTable.fmt(r.honestP999BeforeNs())),
            Column.figures("honest p99.9 ns during", r -> ResultTable.fmt(r.honestP999DuringNs())),
            Column.figures("p99.9 during ÷ before", r -> ratio(r.honestP999Ratio())),
            Column.figures("victim p99.9 ns before", r -> ResultTable.fmt(r.victimP999BeforeNs())),
            Column.figures("victim p99.9 ns during", r -> ResultTable.fmt(r.victimP999DuringNs())),
            Column.figures("attacker creates (of planned)",
                    r -> count(r.attackerCreates()) + " (of " + count(r.plannedCreates()) + ")"),
            Column.figures("chain-cap reclaims", r -> count(r.chainCapReclaims())),
            Column.figures("single-op samples", r -> count(r.samples())),
            Column.figures("rounds dropped (GC / preempted)",
                    r -> count(r.gcRounds()) + " / " + count(r.preemptedRounds())));

    /** The found-share table's columns, in order. */
    private static final List<Column<FoundShare.Result>> FOUND_SHARE_COLUMNS = List.of(
            Column.text("backend", FoundShare.Result::backend),
            Column.figures("blocks", r -> count(r.blocks())),
            Column.figures("duplicates", r -> count(r.duplicates())),
            Column.figures("found, default cap", r -> count(r.foundCapped())),
            Column.figures("found, unbounded", r -> count(r.foundUnbounded())),
            Column.figures("share",
                    r -> Double.isNaN(r.share()) ? "—" : String.format(Locale.ROOT, "%.2f%%", 100 * r.share())));

    /**
     * One row per backend, size and kind of flood; times in ns per operation, medians with the
     * means in parentheses where kept, ratios during over before.
     */
    public static String markdown(List<Flood.Result> results) {
        StringBuilder b = new StringBuilder(table(FLOOD_COLUMNS, results));
        b.append("\nOne thread. Medians (means in parentheses) of batches of ").append(Flood.BATCH)
                .append(" operations timed together with System.nanoTime, per operation; p99.9 of single operations timed"
                + " alone (one nanoTime pair included). Every kind of flood ran completely on a throwaway cache first"
                + " (JIT warm-up); each phase starts after System.gc() and a pause, and rounds during which a collection"
                + " ran are dropped: GC pauses are excluded; so are rounds in which the measuring thread waited for a CPU"
                + " (Linux's run_delay: another process's or this JVM's background threads'). Half-full cache of honest"
                + " pairs; before: rounds of a batch of honest new creates, of victim and of honest operations, then one"
                + " victim and one honest operation alone; flood: 2 × maxEntries attacker creates (fewer when the phase"
                + " ran out of time) in batches, every ").append(Flood.HONEST_EVERY).append("th followed by a batch of"
                + " honest new creates; during: the before phase's rounds, each behind a batch of attacker creates."
                + " victim: get + release of an honest pair in the attacked bucket (one-key: of the attacked key), then"
                + " create + deleteOrGet of a new pair with its key; honest: the same on a uniformly drawn honest pair;"
                + " honest new create: a never-seen pair, at the same fill as the attacker's (flood and during phases)."
                + " mbcache bucketBits: 12 at 65,536, 16 at 1,048,576, fixed hashSeed.\n");
        return b.toString();
    }

    /** {@code median (mean)}, or the median alone when no mean was kept. */
    static String withMean(double median, double mean) {
        return Double.isNaN(mean) ? ResultTable.fmt(median) : ResultTable.fmt(median) + " (" + ResultTable.fmt(mean) + ")";
    }

    /** One row per backend: the share of duplicates the capped index finds of what an unbounded one finds. */
    public static String foundShareMarkdown(List<FoundShare.Result> results) {
        StringBuilder b = new StringBuilder(table(FOUND_SHARE_COLUMNS, results));
        String source = results.isEmpty() ? "" : results.get(0).source();
        b.append("\n4 KiB blocks of ").append(source).append(" (each file from a block boundary, zero-padded), CRC32C keys, "
                + "ext4's find-compare-share-or-create, 16,384 entries (mbcache bucketBits 10), reclaim on the calling thread.\n");
        return b.toString();
    }

    /**
     * A markdown table: the columns' headers, their alignment, then one line a row with each
     * column's cell.
     */
    static <R> String table(List<Column<R>> columns, List<R> rows) {
        StringBuilder b = new StringBuilder();
        line(b, columns, Column::header);
        line(b, columns, c -> c.alignRight() ? "---:" : "---");
        for (R r : rows) {
            line(b, columns, c -> c.cell().apply(r));
        }
        return b.toString();
    }

    /** One line of a table: {@code | cell | cell |}, a cell a column. */
    private static <R> void line(StringBuilder b, List<Column<R>> columns, Function<Column<R>, String> cell) {
        b.append("| ").append(columns.stream().map(cell).collect(Collectors.joining(" | "))).append(" |\n");
    }

    /** A count with thousands separators. */
    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** A ratio to two decimals, or a dash where it is not finite. */
    static String ratio(double r) {
        return Double.isFinite(r) ? String.format(Locale.ROOT, "%.2f", r) : "—";
    }
}
