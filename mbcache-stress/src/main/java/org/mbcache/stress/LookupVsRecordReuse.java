package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_KEY;
import static org.mbcache.stress.Keys.VALUE;
import static org.mbcache.stress.Keys.filler;

import java.util.concurrent.Executor;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;
import org.mbcache.CacheEntry;
import org.mbcache.CompactMbCache;
import org.mbcache.testing.Backend;

/**
 * A lookup vs the reuse of its chain's record by another bucket (the compact layout). A chain
 * longer than its line keeps its pool entries in a record of int pages; when they outgrow it, the
 * record is replaced by a larger one and goes onto a free list, and the next chain that needs a
 * record of its size takes it and writes its own entries there. A lookup that read the bucket's
 * header and then the old record's name may walk that record after another bucket rewrote it:
 * another bucket's slots where its pair was. Its validation must catch that, so a present pair is
 * never missed, and no index it reads may fault.
 *
 * <p>Two buckets ({@code bucketBits} 1, a fixed hash seed): A holds the pair under test P =
 * ({@code KEY}, {@code VALUE}) and fillers of a key of A, seven in its line, P and five more in the
 * pool: A's record, of six places, is full. B holds fillers of a key of B, seven in its line and two
 * in the pool: its record, of two places, is full. One actor creates a filler in A (A's record is
 * replaced, the old one freed), then two in B (B's record is replaced by A's old one, and B's pool
 * slots written over P's place in it); the other looks P up by {@code get} and by
 * {@code findFirst}.
 *
 * <p>Result: {@code r1} = {@code get} found P (1) or not (0); {@code r2} = {@code findFirst} returned
 * P (1), nothing (0) or another entry (-1); {@code r3} = creates that inserted (3); {@code r4} =
 * {@code size()} once everything is released (25), or -99 if the cache refused a release.
 */
@JCStressTest
@Outcome(id = "1, 1, 3, 25", expect = ACCEPTABLE, desc = "P found by both lookups while its old record was reused.")
@Outcome(id = "0, [-0-9]+, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "get missed P while another bucket reused its record.")
@Outcome(id = "[-0-9]+, 0, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "findFirst missed P while another bucket reused its record.")
@Outcome(expect = FORBIDDEN, desc = "A wrong entry, a lost create, or a wrong count.")
@State
public class LookupVsRecordReuse extends CacheRace {

    /** The hash seed of every trial's cache: the buckets of {@link #A_KEY} and {@link #B_KEY} are found for it once. */
    private static final long SEED = 0x5EED;
    private static final Executor INLINE = Runnable::run;
    /** A key of P's bucket, not {@code KEY}: the fillers of A. */
    private static final int A_KEY = keyWhere(true);
    /** A key of the other bucket: the fillers of B. */
    private static final int B_KEY = keyWhere(false);
    private static final int LINE = 7;

    private int nextFiller;
    private CacheEntry got;
    private CacheEntry first;

    /** A's line, P and five fillers in its pool; B's line and two fillers in its pool. */
    public LookupVsRecordReuse() {
        super(open());
        for (int i = 0; i < LINE; i++) {
            fill(A_KEY);
        }
        cache.create(KEY, VALUE, true);
        for (int i = 0; i < 5; i++) {
            fill(A_KEY);
        }
        for (int i = 0; i < LINE + 2; i++) {
            fill(B_KEY);
        }
    }

    private static CompactMbCache open() {
        return (CompactMbCache) Backend.COMPACT.open(1, Backend.MAX_ENTRIES, INLINE, SEED);
    }

    private boolean fill(int key) {
        return cache.create(key, filler(nextFiller++), true);
    }

    /**
     * A key other than {@code KEY} in {@code KEY}'s bucket ({@code sameBucket}) or in the other one,
     * found through what a pool entry costs: with {@code KEY}'s line full, a key of its bucket takes
     * a pool slot (the cache's footprint grows by a pool page and a record page), a key of the other
     * bucket a home slot of its own line (nothing grows).
     */
    private static int keyWhere(boolean sameBucket) {
        for (int i = 0; i < 1_000; i++) {
            int key = OTHER_KEY + i * 0x9E37_79B9;
            try (CompactMbCache probe = open()) {
                for (int v = 0; v < LINE; v++) {
                    probe.create(KEY, filler(1_000 + v), false);
                }
                long before = probe.footprintBytes();
                probe.create(key, 1, true);
                if (key != KEY && (probe.footprintBytes() > before) == sameBucket) {
                    return key;
                }
            }
        }
        throw new IllegalStateException("no key found");
    }

    /** Creates a filler in A (its record replaced), then two in B (B's takes A's old one). */
    @Actor
    public void creator(IIII_Result r) {
        int inserted = fill(A_KEY) ? 1 : 0;
        inserted += fill(B_KEY) ? 1 : 0;
        inserted += fill(B_KEY) ? 1 : 0;
        r.r3 = inserted;
    }

    /** Looks P up by its pair, then by its key. */
    @Actor
    public void reader(IIII_Result r) {
        got = cache.get(KEY, VALUE);
        r.r1 = found(got);
        first = cache.findFirst(KEY);
        r.r2 = first == null ? 0 : first.value() == VALUE ? 1 : -1;
    }

    /** Releases what the reader holds, counts the entries and closes the cache. */
    @Arbiter
    public void check(IIII_Result r) {
        r.r4 = sizeAfterReleasing(got, first);
        cache.close();
    }
}
