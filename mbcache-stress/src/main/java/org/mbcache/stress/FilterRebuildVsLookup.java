package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
import static org.mbcache.stress.Keys.VALUE;
import static org.mbcache.stress.Keys.filler;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.mbcache.FilterKeys;
import org.mbcache.testing.Backend;

/**
 * A key-filter rebuild vs a lookup of a key that stays (misses answered without the chain). When
 * more than a quarter of a chain's keys have left since its key filters were built, the removal that
 * tips it rebuilds both filters, the head word's and the wide one, from the keys left. A lookup racing
 * the rebuild must never be turned away by a filter that lacks a key the chain holds throughout.
 *
 * <p>One bucket ({@code bucketBits} 0, a fixed hash seed), oldest first: D = (a decoy key that shares
 * {@code KEY}'s head-filter bit but not both its wide-filter bits, {@code OTHER_VALUE}), then P =
 * ({@code KEY}, {@code VALUE}). One actor deletes D (one removal of two keys: a rebuild); the other
 * looks P up by {@code findFirst}, then by {@code get}.
 *
 * <p>In the compact layout the filter in question is a bucket header's pool filter, over the keys
 * of the chain's entries in pool slots; a removal of a pool entry rebuilds it from the pool entries
 * left, reading their keys while lookups run. Its race first fills the bucket's home slots and
 * deletes those fillers (their slots then rest in the delay ring), so that D and P both go to pool
 * slots, and its decoy has a pool-filter bit other than {@code KEY}'s: a rebuild that lost P's bit
 * would turn P away, the lookup deciding from the (empty) line alone.
 *
 * <p>Kernel port, both layouts: the Caffeine backend has no key filters.
 *
 * <p>Result: {@code r1} = {@code findFirst} found P (1) or not (0); {@code r2} = {@code get} found P
 * (1) or not (0); {@code r3} = {@code size()} afterwards (1).
 */
@Outcome(id = "1, 1, 1", expect = ACCEPTABLE, desc = "P found by both lookups, before or after the rebuild.")
@Outcome(id = "0, [01], [0-9]+", expect = FORBIDDEN, desc = "findFirst missed P during the filter rebuild.")
@Outcome(id = "1, 0, [0-9]+", expect = FORBIDDEN, desc = "get missed P during the filter rebuild.")
@Outcome(expect = FORBIDDEN, desc = "A wrong count: D not deleted, or P lost.")
public final class FilterRebuildVsLookup {

    private FilterRebuildVsLookup() {
    }

    /** The steps of the race on a one-bucket cache with {@link KeyFilterRace#SEED}. */
    abstract static class Race extends KeyFilterRace {
        /** The decoy D, chosen for the layout's filter bits. */
        final int decoy;

        Race(Backend backend, int decoy) {
            super(backend);
            this.decoy = decoy;
        }

        /** Caches D, then P. */
        void createDecoyAndPair() {
            cache.create(decoy, OTHER_VALUE, true);
            cache.create(KEY, VALUE, true);
        }

        /** Deletes D: the filters are rebuilt from P alone. */
        void removeDecoy() {
            releaseIfHeld(cache.deleteOrGet(decoy, OTHER_VALUE));
        }

        /** Looks P up by key, then by pair. */
        void lookUp(III_Result r) {
            r.r1 = isKeyCached(KEY);
            r.r2 = isCached(KEY, VALUE);
        }

        /** Counts the entries and closes the cache. */
        void settle(III_Result r) {
            r.r3 = size();
            cache.close();
        }
    }

    /** The race on the kernel port, D and P cached and nobody holding either. */
    @JCStressTest
    @JCStressMeta(FilterRebuildVsLookup.class)
    @State
    public static class KernelPort extends Race {
        /** A one-bucket cache holding D, then P. */
        public KernelPort() {
            super(Backend.MBCACHE_REQUEST_LIST, DECOY);
            createDecoyAndPair();
        }

        /** Deletes D: the filters are rebuilt from P alone. */
        @Actor
        public void remover() {
            removeDecoy();
        }

        /** Looks P up by key, then by pair. */
        @Actor
        public void reader(III_Result r) {
            lookUp(r);
        }

        /** Counts the entries and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on the compact layout, D and P cached in pool slots. */
    @JCStressTest
    @JCStressMeta(FilterRebuildVsLookup.class)
    @State
    public static class Compact extends Race {
        /**
         * A one-bucket compact cache holding D, then P, both in pool slots (the home slots rest,
         * their fillers deleted): deleting D rebuilds the pool filter from P's key.
         */
        public Compact() {
            super(Backend.COMPACT, FilterKeys.compactPoolDecoyOf(KEY, SEED));
            int fillers = FilterKeys.compactHomeSlots();
            for (int i = 0; i < fillers; i++) {
                cache.create(OTHER_KEY, filler(i), true);
            }
            for (int i = 0; i < fillers; i++) {
                releaseIfHeld(cache.deleteOrGet(OTHER_KEY, filler(i)));
            }
            createDecoyAndPair();
        }

        /** Deletes D: the removal that rebuilds the pool filter. */
        @Actor
        public void remover() {
            removeDecoy();
        }

        /** Looks P up by key, then by pair. */
        @Actor
        public void reader(III_Result r) {
            lookUp(r);
        }

        /** Counts the entries and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }
}
