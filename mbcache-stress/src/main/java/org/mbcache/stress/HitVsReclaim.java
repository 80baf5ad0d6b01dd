package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
import static org.mbcache.stress.Keys.VALUE;

import org.mbcache.CacheEntry;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;
import org.mbcache.testing.Backend;

/**
 * A hit vs a full reclaim pass (the contract, section 6.3, on the lock-free hit): a
 * {@code findFirst} that takes its reference by increment-if-not-zero on an entry found without the
 * bucket lock races a {@code shrink(Long.MAX_VALUE)} that claims every entry nobody holds (count 1 to
 * 0). Either the claim or the increment wins on the entry's count, never both: an entry the hit returns
 * is still cached while it is held, and a claimed entry is never returned. {@link ReclaimVsUser} races
 * one {@code get} against a pass of one; this races the key walk of {@code findFirst}, which may fall
 * back on an older entry when the newest is claimed, against a pass over everything.
 *
 * <p>Two entries of one key, A = ({@code KEY}, {@code OTHER_VALUE}) older, P = ({@code KEY},
 * {@code VALUE}) newer, both reusable. Result: {@code r1} = what {@code findFirst} returned: P (2), A (1)
 * or nothing (0); {@code r2} = {@code get} of the held entry's pair answers an entry equal to it (1), another
 * or none (0), nothing held (-1); {@code r3} = entries the pass freed; {@code r4} = {@code size()} once
 * the hit released its entry, or -99 if the cache refused that release.
 */
@Outcome(id = "2, 1, 1, 1", expect = ACCEPTABLE, desc = "Hit on P first: the pass frees A and skips the held P.")
@Outcome(id = "1, 1, 1, 1", expect = ACCEPTABLE,
        desc = "Caffeine only: its pass freed P first (its order), the hit fell back on A, which it skips.")
@Outcome(id = "0, -1, 2, 0", expect = ACCEPTABLE, desc = "The pass first: both freed, the hit misses.")
@Outcome(id = "[12], 0, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "Reclaim freed the entry the hit holds.")
@Outcome(expect = FORBIDDEN, desc = "Any other combination breaks reference counting or the entry count.")
public final class HitVsReclaim {

    private HitVsReclaim() {
    }

    /** The steps of the race: A and P are cached, and nobody holds either. */
    abstract static class Race extends CacheRace {
        CacheEntry held;

        Race(Backend backend) {
            super(backend);
            cache.create(KEY, OTHER_VALUE, true);
            cache.create(KEY, VALUE, true);
        }

        void reclaimAll(IIII_Result r) {
            r.r3 = (int) cache.shrink(Long.MAX_VALUE);
        }

        void hit(IIII_Result r) {
            held = cache.findFirst(KEY);
            r.r1 = held == null ? 0 : held.value() == VALUE ? 2 : held.value() == OTHER_VALUE ? 1 : -1;
        }

        void settle(IIII_Result r) {
            r.r2 = stillCached(held);
            r.r4 = sizeAfterReleasing(held);
            cache.close();
        }
    }

    /**
     * The race on the kernel port. Its pass walks the LRU list oldest first, so it frees A before it
     * can free P: a hit that holds A found P gone only if it skipped P while P was there.
     */
    @JCStressTest
    @Outcome(id = "2, 1, 1, 1", expect = ACCEPTABLE, desc = "Hit on P first: the pass frees A and skips the held P.")
    @Outcome(id = "0, -1, 2, 0", expect = ACCEPTABLE, desc = "The pass first: both freed, the hit misses.")
    @Outcome(id = "1, 1, 1, 1", expect = FORBIDDEN,
            desc = "findFirst skipped P while it was cached: the pass frees A, the older, before P.")
    @Outcome(id = "[12], 0, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "Reclaim freed the entry the hit holds.")
    @Outcome(expect = FORBIDDEN, desc = "Any other combination breaks reference counting or the entry count.")
    @State
    public static class KernelPort extends Race {
        /** A cache holding A and P. */
        public KernelPort() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** One reclaim pass over everything. */
        @Actor
        public void shrinker(IIII_Result r) {
            reclaimAll(r);
        }

        /** findFirst of the key, and hold the entry. */
        @Actor
        public void user(IIII_Result r) {
            hit(r);
        }

        /** Checks the held entry is cached, releases it, counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /**
     * The race on the compact layout. Its clock sweeps the slots in the order they were first handed
     * out, A's before P's, so it too frees A before it can free P.
     */
    @JCStressTest
    @Outcome(id = "2, 1, 1, 1", expect = ACCEPTABLE, desc = "Hit on P first: the pass frees A and skips the held P.")
    @Outcome(id = "0, -1, 2, 0", expect = ACCEPTABLE, desc = "The pass first: both freed, the hit misses.")
    @Outcome(id = "1, 1, 1, 1", expect = FORBIDDEN,
            desc = "findFirst skipped P while it was cached: the pass frees A, the older, before P.")
    @Outcome(id = "[12], 0, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "Reclaim freed the entry the hit holds.")
    @Outcome(expect = FORBIDDEN, desc = "Any other combination breaks reference counting or the entry count.")
    @State
    public static class Compact extends Race {
        /** A cache holding A and P. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** One reclaim pass over everything. */
        @Actor
        public void shrinker(IIII_Result r) {
            reclaimAll(r);
        }

        /** findFirst of the key, and hold the entry. */
        @Actor
        public void user(IIII_Result r) {
            hit(r);
        }

        /** Checks the held entry is cached, releases it, counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The race on the Caffeine backend, whose pass walks Caffeine's coldest-first order. */
    @JCStressTest
    @JCStressMeta(HitVsReclaim.class)
    @State
    public static class Caffeine extends Race {
        /** A cache holding A and P. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** One reclaim pass over everything. */
        @Actor
        public void shrinker(IIII_Result r) {
            reclaimAll(r);
        }

        /** findFirst of the key, and hold the entry. */
        @Actor
        public void user(IIII_Result r) {
            hit(r);
        }

        /** Checks the held entry is cached, releases it, counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }
}
