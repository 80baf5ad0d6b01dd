package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
import static org.mbcache.stress.Keys.VALUE;
import static org.mbcache.stress.Keys.filler;

import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;
import org.mbcache.MbCache;
import org.mbcache.caffeine.CaffeineDedupCache;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;
import org.mbcache.testing.Backend;

/**
 * The chain cap's reclaim vs a holder: a create that would make a chain longer than its cap first
 * reclaims the chain's oldest entries nobody holds (the flood bound, builder option {@code chainCap}).
 * That reclaim, like every other, may only claim an entry by count 1 to 0: the oldest entry, looked up
 * and held by another thread at that very moment, must stay cached, and creates then pass it by.
 *
 * <p>Cap 2, one key (so one chain), full: A = ({@code KEY}, {@code OTHER_VALUE}) oldest, then
 * B = ({@code KEY}, {@code VALUE}). One actor looks A up with {@code get} and holds it; the other creates
 * two new pairs of the same key. Result: {@code r1} = the holder found A (1) or not (0, the cap reclaimed
 * it first); {@code r2} = with A held, {@code get} of A's pair answers an entry equal to it (1) or not (0),
 * nothing held (-1); {@code r3} = both creates inserted (1) and the holder's release was accepted (1),
 * else 0, or -99 if the cache refused the release (A was freed under its holder); {@code r4} =
 * {@code size()} at the end: the cap's 2, plus A if A was held while the creates ran and the
 * backend's cap counts only unheld entries (Caffeine's); a cap that did nothing leaves 4.
 */
@Outcome(id = "1, 1, 1, [23]", expect = ACCEPTABLE, desc = "The holder got A first: the cap passes it by, and A stays cached.")
@Outcome(id = "0, -1, 1, 2", expect = ACCEPTABLE, desc = "The cap reclaimed A first: the lookup misses it.")
@Outcome(id = "1, 0, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "The cap reclaimed (or replaced) the entry the holder holds.")
@Outcome(id = "[-0-9]+, [-0-9]+, [-0-9]+, [4-9]", expect = FORBIDDEN, desc = "The cap let the chain grow past 2 unheld entries.")
@Outcome(expect = FORBIDDEN, desc = "Any other combination: a lost create or broken reference counting.")
public final class CapReclaimVsHolder {

    /** The chain cap of the race's caches. */
    private static final int CAP = 2;

    private CapReclaimVsHolder() {
    }

    /** The steps of the race: A and B fill the chain to its cap, and nobody holds either. */
    abstract static class Race extends CacheRace {
        CacheEntry held;
        boolean created;

        Race(DedupCache cache) {
            super(cache);
            cache.create(KEY, OTHER_VALUE, true);
            cache.create(KEY, VALUE, true);
        }

        void hold(IIII_Result r) {
            held = cache.get(KEY, OTHER_VALUE);
            r.r1 = found(held);
        }

        void overflow() {
            boolean first = cache.create(KEY, filler(0), true);
            boolean second = cache.create(KEY, filler(1), true);
            created = first && second;
        }

        void settle(IIII_Result r) {
            r.r2 = stillCached(held);
            boolean accepted = releaseAll(held);
            r.r3 = !accepted ? REFERENCE_LOST : created ? 1 : 0;
            r.r4 = size();
            cache.close();
        }
    }

    /** The race on the kernel port, whose cap counts a bucket chain. */
    @JCStressTest
    @JCStressMeta(CapReclaimVsHolder.class)
    @State
    public static class KernelPort extends Race {
        /** A cache with chain cap 2, holding A and B. */
        public KernelPort() {
            super(MbCache.builder().bucketBits(Backend.BUCKET_BITS).maxEntries(Backend.MAX_ENTRIES).chainCap(CAP).build());
        }

        /** Looks the oldest entry up and keeps holding it. */
        @Actor
        public void holder(IIII_Result r) {
            hold(r);
        }

        /** Creates two new pairs in the full chain. */
        @Actor
        public void creator() {
            overflow();
        }

        /** Checks the held entry is cached, releases it and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The race on the Caffeine backend, whose cap counts the values of one key. */
    @JCStressTest
    @JCStressMeta(CapReclaimVsHolder.class)
    @State
    public static class Caffeine extends Race {
        /** A cache with cap 2, holding A and B. */
        public Caffeine() {
            super(CaffeineDedupCache.builder().maxEntries(Backend.MAX_ENTRIES).chainCap(CAP).executor(Runnable::run).build());
        }

        /** Looks the oldest entry up and keeps holding it. */
        @Actor
        public void holder(IIII_Result r) {
            hold(r);
        }

        /** Creates two new pairs of the same key. */
        @Actor
        public void creator() {
            overflow();
        }

        /** Checks the held entry is cached, releases it and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }
}
