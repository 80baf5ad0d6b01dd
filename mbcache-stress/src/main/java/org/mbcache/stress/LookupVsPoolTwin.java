package org.mbcache.stress;

import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
import static org.mbcache.stress.Keys.VALUE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.mbcache.CompactMbCache;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * A lookup that decides from the compact layout's line alone vs a create that gives its key a pool
 * entry. One bucket: the pair P = ({@code KEY}, {@code VALUE}) and six fillers fill the line, a
 * seventh filler is in the pool. One actor creates Q = ({@code KEY}, {@code OTHER_VALUE}), newer
 * than P, in a pool slot: under the bucket's bit it marks P's word (a pool entry now has its key)
 * before it publishes Q. The other looks {@code KEY} up: where the header's pool filter lets the
 * key through and the line holds a live word of it without the mark, the lookup answers from the
 * line; read before the mark and validated after the create took the bit, it must retry. It answers
 * P (before the create) or Q (after); afterwards every lookup answers Q, and P is still found by
 * pair. Without the mark, the lookups after the create answer P, the older pair. The mark is a CAS on P's word
 * while the lookup's acquire and release change its count: a mark stored over either would lose
 * the mark or a count, and P would then be left held or its release refused.
 *
 * <p>Result: {@code r1} = the racing lookup found P (1) or Q (2), or nothing (0); {@code r2} =
 * {@code findFirst} after the race found P (1) or Q (2); {@code r3} = {@code get} of P after the
 * race found it (1) or not (0); {@code r4} = a {@code deleteOrGet} of P once every reference is
 * back deleted it (1) or found it held (0).
 */
@JCStressTest
@Outcome(id = "1, 2, 1, 1", expect = ACCEPTABLE, desc = "The lookup before the create: P, the only pair of the key.")
@Outcome(id = "2, 2, 1, 1", expect = ACCEPTABLE, desc = "The lookup after the create: Q, the newest pair of the key.")
@Outcome(id = "[0-9-]+, 1, [0-9-]+, [0-9-]+", expect = FORBIDDEN, desc = "After the create, the line's older P answered for Q.")
@Outcome(expect = FORBIDDEN, desc = "A miss, a lost create, P gone, or a lost count.")
@State
public class LookupVsPoolTwin {

    private final CompactMbCache cache = CompactMbCache.builder().bucketBits(0).maxEntries(64).chainCap(64)
            .executor(Runnable::run).build();

    /** P and six fillers fill the line; a seventh filler goes to the pool. */
    public LookupVsPoolTwin() {
        cache.create(KEY, VALUE, true);
        for (int i = 0; i < 7; i++) {
            cache.create(KEY + 1 + i, Keys.filler(i), true);
        }
    }

    /** Creates Q in a pool slot. */
    @Actor
    public void create() {
        cache.create(KEY, OTHER_VALUE, true);
    }

    /** Looks the key up and gives the handle back. */
    @Actor
    public void lookup(IIII_Result r) {
        r.r1 = found(cache.findFirstHandle(KEY));
    }

    /** The lookups after the race; closes. */
    @Arbiter
    public void check(IIII_Result r) {
        r.r2 = found(cache.findFirstHandle(KEY));
        long p = cache.getHandle(KEY, VALUE);
        r.r3 = p == CompactMbCache.NO_ENTRY ? 0 : 1;
        if (p != CompactMbCache.NO_ENTRY) {
            cache.release(p);
        }
        r.r4 = cache.deleteOrGetHandle(KEY, VALUE) == CompactMbCache.NO_ENTRY ? 1 : 0;
        cache.close();
    }

    /** 1 for P, 2 for Q, 0 for none, -1 for another pair; releases the handle. */
    private int found(long handle) {
        if (handle == CompactMbCache.NO_ENTRY) {
            return 0;
        }
        long value = cache.value(handle);
        cache.release(handle);
        return value == VALUE ? 1 : value == OTHER_VALUE ? 2 : -1;
    }
}
