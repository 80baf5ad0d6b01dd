package org.mbcache.bench.report;

import java.util.List;
import java.util.Locale;
import org.mbcache.bench.Flood;
import org.mbcache.bench.FoundShare;

/** The flood benchmark's and the found-share's results as markdown tables. */
public final class FloodTable {
    private FloodTable() {}

    /**
     * One row per backend, size and kind of flood; times in ns per operation, medians with the
     * means in parentheses where kept, ratios during over before.
     */
    public static String markdown(List<Flood.Result> results) {
        StringBuilder b = new StringBuilder();
        b.append("| flood | maxEntries | backend | attacker create ns | honest new create ns | attacker ÷ honest"
                + " | victim ns before | victim ns during | victims during ÷ before | honest ns before | honest ns during"
                + " | honest during ÷ before | honest p99.9 ns before | honest p99.9 ns during | p99.9 during ÷ before"
                + " | victim p99.9 ns before | victim p99.9 ns during | attacker creates (of planned) | chain-cap reclaims"
                + " | single-op samples | rounds dropped (GC / preempted) |\n");
        b.append("| --- | ---: | --- |").append(" ---: |".repeat(18)).append('\n');
        for (Flood.Result r : results) {
            b.append(String.format(Locale.ROOT, "| %s | %,d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s"
                            + " | %s | %s | %,d (of %,d) | %,d | %,d | %,d / %,d |\n",
                    r.flood(), r.maxEntries(), r.backend(), withMean(r.attackerNs(), r.attackerMeanNs()),
                    withMean(r.honestCreateNs(), r.honestCreateMeanNs()), ratio(r.attackerRatio()),
                    withMean(r.victimBeforeNs(), r.victimBeforeMeanNs()), withMean(r.victimDuringNs(), r.victimDuringMeanNs()),
                    ratio(r.victimRatio()), ResultTable.fmt(r.honestBeforeNs()), ResultTable.fmt(r.honestDuringNs()),
                    ratio(r.honestRatio()), ResultTable.fmt(r.honestP999BeforeNs()), ResultTable.fmt(r.honestP999DuringNs()),
                    ratio(r.honestP999Ratio()), ResultTable.fmt(r.victimP999BeforeNs()), ResultTable.fmt(r.victimP999DuringNs()),
                    r.attackerCreates(), r.plannedCreates(), r.chainCapReclaims(), r.samples(), r.gcRounds(), r.preemptedRounds()));
        }
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
        StringBuilder b = new StringBuilder("| backend | blocks | duplicates | found, default cap | found, unbounded | share |\n"
                + "| --- | ---: | ---: | ---: | ---: | ---: |\n");
        for (FoundShare.Result r : results) {
            b.append(String.format(Locale.ROOT, "| %s | %,d | %,d | %,d | %,d | %s |\n", r.backend(), r.blocks(),
                    r.duplicates(), r.foundCapped(), r.foundUnbounded(),
                    Double.isNaN(r.share()) ? "—" : String.format(Locale.ROOT, "%.2f%%", 100 * r.share())));
        }
        String source = results.isEmpty() ? "" : results.get(0).source();
        b.append("\n4 KiB blocks of ").append(source).append(" (each file from a block boundary, zero-padded), CRC32C keys, "
                + "ext4's find-compare-share-or-create, 16,384 entries (mbcache bucketBits 10), reclaim on the calling thread.\n");
        return b.toString();
    }

    static String ratio(double r) {
        return Double.isFinite(r) ? String.format(Locale.ROOT, "%.2f", r) : "—";
    }
}
