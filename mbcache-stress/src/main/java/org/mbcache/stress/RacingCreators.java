package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.VALUE;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.mbcache.testing.Backend;

/**
 * Racing creators (the contract, section 6.1): two threads create the same (key, value) pair at once. Exactly one
 * must be told it inserted the pair and exactly one entry must be cached afterwards; guards the
 * duplicate check of {@code mb_cache_entry_create()} (mbcache2 rewrite, 2016, Jan Kara) under both
 * create strategies.
 *
 * <p>Result: {@code r1}, {@code r2} = whether each creator won (1) or was refused (0); {@code r3} =
 * {@code size()} once both are done.
 */
@Outcome(id = {"1, 0, 1", "0, 1, 1"}, expect = ACCEPTABLE, desc = "Exactly one creator won; one entry is cached.")
@Outcome(expect = FORBIDDEN, desc = "Both or neither creator won, or the cache does not hold exactly one entry.")
public final class RacingCreators {

    private RacingCreators() {
    }

    /** The steps of the race. */
    abstract static class Race extends CacheRace {
        Race(Backend backend) {
            super(backend);
        }

        int create() {
            return cache.create(KEY, VALUE, true) ? 1 : 0;
        }

        void count(III_Result r) {
            r.r3 = size();
            cache.close();
        }
    }

    /** The race on the kernel port with the in-progress request list. */
    @JCStressTest
    @JCStressMeta(RacingCreators.class)
    @State
    public static class RequestList extends Race {
        /** A fresh, empty cache. */
        public RequestList() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** First creator. */
        @Actor
        public void creator1(III_Result r) {
            r.r1 = create();
        }

        /** Second creator. */
        @Actor
        public void creator2(III_Result r) {
            r.r2 = create();
        }

        /** Counts the entries and closes the cache. */
        @Arbiter
        public void settle(III_Result r) {
            count(r);
        }
    }

    /** The race on the kernel port in the compact layout (slots in primitive pages, a clock for reclaim). */
    @JCStressTest
    @JCStressMeta(RacingCreators.class)
    @State
    public static class Compact extends Race {
        /** A fresh, empty cache. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** First creator. */
        @Actor
        public void creator1(III_Result r) {
            r.r1 = create();
        }

        /** Second creator. */
        @Actor
        public void creator2(III_Result r) {
            r.r2 = create();
        }

        /** Counts the entries and closes the cache. */
        @Arbiter
        public void settle(III_Result r) {
            count(r);
        }
    }

    /** The race on the kernel port with mainline's allocate-first create. */
    @JCStressTest
    @JCStressMeta(RacingCreators.class)
    @State
    public static class AllocateFirst extends Race {
        /** A fresh, empty cache. */
        public AllocateFirst() {
            super(Backend.MBCACHE_ALLOCATE_FIRST);
        }

        /** First creator. */
        @Actor
        public void creator1(III_Result r) {
            r.r1 = create();
        }

        /** Second creator. */
        @Actor
        public void creator2(III_Result r) {
            r.r2 = create();
        }

        /** Counts the entries and closes the cache. */
        @Arbiter
        public void settle(III_Result r) {
            count(r);
        }
    }

    /** The race on the Caffeine backend. */
    @JCStressTest
    @JCStressMeta(RacingCreators.class)
    @State
    public static class Caffeine extends Race {
        /** A fresh, empty cache. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** First creator. */
        @Actor
        public void creator1(III_Result r) {
            r.r1 = create();
        }

        /** Second creator. */
        @Actor
        public void creator2(III_Result r) {
            r.r2 = create();
        }

        /** Counts the entries and closes the cache. */
        @Arbiter
        public void settle(III_Result r) {
            count(r);
        }
    }
}
