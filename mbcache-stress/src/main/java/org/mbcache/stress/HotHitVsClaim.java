package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
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
 * A hit on a hot entry vs a claim (both kernel-port layouts: hot mode, {@code HotReferences}, is their
 * protocol for contended entries, per-stripe reference cells beside the state word). The hit adds to its own cell and
 * re-reads the state word; the claim freezes the word, sums the cells and kills the entry only if
 * they are all zero. Never both: a hit that returns the entry keeps it cached, and a claimed entry is
 * never returned.
 *
 * <p>The pair P = ({@code KEY}, {@code VALUE}) is cached, switched to hot mode, and held by nobody.
 * Result: {@code r1} = the hit ({@code get}) returned P (1) or nothing (0); {@code r2} = the claim
 * removed P (1) or not (0); {@code r3} = {@code get} of P, after the race, answers the held entry (1),
 * another or none (0), nothing held (-1); {@code r4} = {@code size()} once the hit released its entry,
 * or -99 if the cache refused that release.
 */
@Outcome(id = "1, 0, 1, 1", expect = ACCEPTABLE, desc = "The hit first: the claim finds P held and leaves it.")
@Outcome(id = "0, 1, -1, 0", expect = ACCEPTABLE, desc = "The claim first: P is gone, the hit misses.")
@Outcome(id = "1, 1, .*", expect = FORBIDDEN, desc = "The claim removed the entry the hit holds.")
@Outcome(expect = FORBIDDEN, desc = "Any other combination breaks reference counting or the entry count.")
public final class HotHitVsClaim {

    private HotHitVsClaim() {
    }

    /** The steps of the race: P is cached and hot, and nobody holds it. */
    abstract static class Race extends CacheRace {
        CacheEntry held;

        Race(Backend backend) {
            super(backend);
            createHot(KEY, VALUE);
        }

        void hit(IIII_Result r) {
            held = cache.get(KEY, VALUE);
            r.r1 = found(held);
        }

        void settle(IIII_Result r) {
            r.r3 = stillCached(held);
            r.r4 = sizeAfterReleasing(held);
            cache.close();
        }
    }

    /** The claim of {@code deleteOrGet}: it deletes P if unused, else hands it over (then released). */
    @JCStressTest
    @JCStressMeta(HotHitVsClaim.class)
    @State
    public static class ByDeleteOrGet extends Race {
        /** A cache holding P, hot. */
        public ByDeleteOrGet() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** get of P, and hold it. */
        @Actor
        public void user(IIII_Result r) {
            hit(r);
        }

        /** deleteOrGet of P; a handed-over entry is released at once, as ext4 would after its wait. */
        @Actor
        public void deleter(IIII_Result r) {
            CacheEntry handed = cache.deleteOrGet(KEY, VALUE);
            r.r2 = handed == null ? 1 : 0;
            releaseIfHeld(handed);
        }

        /** Checks the held entry is cached, releases it, counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The claim of a reclaim pass over everything. */
    @JCStressTest
    @JCStressMeta(HotHitVsClaim.class)
    @State
    public static class ByReclaim extends Race {
        /** A cache holding P, hot. */
        public ByReclaim() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** get of P, and hold it. */
        @Actor
        public void user(IIII_Result r) {
            hit(r);
        }

        /** One reclaim pass over everything. */
        @Actor
        public void shrinker(IIII_Result r) {
            r.r2 = (int) cache.shrink(Long.MAX_VALUE);
        }

        /** Checks the held entry is cached, releases it, counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** {@link ByDeleteOrGet} in the compact layout (a hot slot); the claim of {@code deleteOrGet}: it deletes P if unused, else hands it over (then released). */
    @JCStressTest
    @JCStressMeta(HotHitVsClaim.class)
    @State
    public static class CompactByDeleteOrGet extends Race {
        /** A cache holding P, hot. */
        public CompactByDeleteOrGet() {
            super(Backend.COMPACT);
        }

        /** get of P, and hold it. */
        @Actor
        public void user(IIII_Result r) {
            hit(r);
        }

        /** deleteOrGet of P; a handed-over entry is released at once, as ext4 would after its wait. */
        @Actor
        public void deleter(IIII_Result r) {
            CacheEntry handed = cache.deleteOrGet(KEY, VALUE);
            r.r2 = handed == null ? 1 : 0;
            releaseIfHeld(handed);
        }

        /** Checks the held entry is cached, releases it, counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** {@link ByReclaim} in the compact layout: the claim of the clock's pass over everything. */
    @JCStressTest
    @JCStressMeta(HotHitVsClaim.class)
    @State
    public static class CompactByReclaim extends Race {
        /** A cache holding P, hot. */
        public CompactByReclaim() {
            super(Backend.COMPACT);
        }

        /** get of P, and hold it. */
        @Actor
        public void user(IIII_Result r) {
            hit(r);
        }

        /** One reclaim pass over everything. */
        @Actor
        public void shrinker(IIII_Result r) {
            r.r2 = (int) cache.shrink(Long.MAX_VALUE);
        }

        /** Checks the held entry is cached, releases it, counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }
}
