package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.VALUE;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;
import org.mbcache.testing.Backend;

/**
 * The in-progress request list (the contract, section 5): a create in progress refuses its twin. Under the request
 * list a twin that arrives while the winner allocates outside the lock is refused by the winner's
 * request, before the winner's entry is in the chain, so right after its refusal the twin may not find
 * the pair yet; with allocate-first a refusal means the twin saw the entry in the chain, so it must find
 * it. Guards the 2019 patch "mbcache: Speed up cache entry creation".
 *
 * <p>Result: {@code r1} = the first creator won (1) or was refused (0); {@code r2} = the twin won (1) or
 * was refused (0); {@code r3} = the twin's {@code get} right after its create found the pair (1) or not
 * (0); {@code r4} = {@code size()} at the end.
 *
 * <p>No Caffeine variant: the race is about the request list (section 5), which that backend lacks,
 * and the contract (section 3) lets any backend refuse a twin whose create is still in progress, so
 * the one outcome that tells the strategies apart ({@code 1, 0, 0, 1}) could not be forbidden there;
 * its racing creators are {@link RacingCreators.Caffeine}.
 */
public final class CreateRefusesTwin {

    private CreateRefusesTwin() {
    }

    /** The steps of the race: the cache starts empty. */
    abstract static class Race extends CacheRace {
        Race(Backend backend) {
            super(backend);
        }

        void create(IIII_Result r) {
            r.r1 = cache.create(KEY, VALUE, true) ? 1 : 0;
        }

        void createTwinThenLookUp(IIII_Result r) {
            r.r2 = cache.create(KEY, VALUE, true) ? 1 : 0;
            r.r3 = isCached(KEY, VALUE);
        }

        void settle(IIII_Result r) {
            r.r4 = size();
            cache.close();
        }
    }

    /** With the request list, a twin may be refused before the winner's entry is visible. */
    @JCStressTest
    @Outcome(id = {"1, 0, 1, 1", "0, 1, 1, 1"}, expect = ACCEPTABLE, desc = "One creator won; the twin sees the entry.")
    @Outcome(id = "1, 0, 0, 1", expect = ACCEPTABLE_INTERESTING,
            desc = "The twin was refused by the winner's in-progress request, before the entry was in its chain.")
    @Outcome(expect = FORBIDDEN, desc = "Both or neither won, a winner cannot see its own entry, or the count is not one.")
    @State
    public static class RequestList extends Race {
        /** A fresh, empty cache. */
        public RequestList() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** Creates the pair. */
        @Actor
        public void creator(IIII_Result r) {
            create(r);
        }

        /** Creates the same pair, then looks it up at once. */
        @Actor
        public void twin(IIII_Result r) {
            createTwinThenLookUp(r);
        }

        /** Counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** With allocate-first, a refusal means the entry was already in its chain. */
    @JCStressTest
    @Outcome(id = {"1, 0, 1, 1", "0, 1, 1, 1"}, expect = ACCEPTABLE, desc = "One creator won; the twin sees the entry.")
    @Outcome(id = "1, 0, 0, 1", expect = FORBIDDEN,
            desc = "The twin was refused, yet the pair was not in the cache: allocate-first has no request list.")
    @Outcome(expect = FORBIDDEN, desc = "Both or neither won, a winner cannot see its own entry, or the count is not one.")
    @State
    public static class AllocateFirst extends Race {
        /** A fresh, empty cache. */
        public AllocateFirst() {
            super(Backend.MBCACHE_ALLOCATE_FIRST);
        }

        /** Creates the pair. */
        @Actor
        public void creator(IIII_Result r) {
            create(r);
        }

        /** Creates the same pair, then looks it up at once. */
        @Actor
        public void twin(IIII_Result r) {
            createTwinThenLookUp(r);
        }

        /** Counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }
}
