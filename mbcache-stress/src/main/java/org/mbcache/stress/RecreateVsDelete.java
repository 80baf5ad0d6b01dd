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
 * A create after a miss vs the deletion that caused the miss: the pair P is cached and nobody
 * holds it; one actor deletes it ({@code deleteOrGet}), the other looks it up ({@code get}), lets
 * go of what it found, and creates it. A lookup that missed P saw it deleted, and nobody else
 * creates it, so the create must insert it: a create refused for a pair whose deletion had already
 * answered a lookup (a reader that still finds the dead entry where the deletion has not yet taken
 * it out of its chain or group) would leave the caller believing a pair cached that no lookup can
 * find.
 *
 * <p>Result: {@code r1} = {@code deleteOrGet} returned the entry (1) or {@code null} (0); {@code r2}
 * = {@code get} found P (1) or not (0); {@code r3} = the create inserted P (1) or was refused (0);
 * {@code r4} = P is cached at the end (1) or not (0).
 */
@Outcome(id = "0, 0, 1, 1", expect = ACCEPTABLE, desc = "Deleted, then missed, then created again.")
@Outcome(id = "0, 1, 1, 1", expect = ACCEPTABLE, desc = "Found and let go, then deleted, then created again.")
@Outcome(id = "0, 1, 0, 0", expect = ACCEPTABLE, desc = "Found and let go, the create refused (cached), then deleted.")
@Outcome(id = "1, 1, 0, 1", expect = ACCEPTABLE, desc = "Found and held, so handed to the deleter; the create refused (cached).")
@Outcome(id = "0, 0, 0, [01]", expect = FORBIDDEN, desc = "The lookup missed the deleted pair, but the create was refused as if it were cached.")
@Outcome(expect = FORBIDDEN, desc = "Any other combination.")
public final class RecreateVsDelete {

    private RecreateVsDelete() {
    }

    /** The steps of the race: P is cached, nobody holds it. */
    abstract static class Race extends CacheRace {
        Race(Backend backend) {
            super(backend);
            cache.create(KEY, VALUE, true);
        }

        void delete(IIII_Result r) {
            CacheEntry returned = cache.deleteOrGet(KEY, VALUE);
            r.r1 = found(returned);
            releaseIfHeld(returned);
        }

        void lookUpThenCreate(IIII_Result r) {
            CacheEntry got = cache.get(KEY, VALUE);
            r.r2 = found(got);
            releaseIfHeld(got);
            r.r3 = cache.create(KEY, VALUE, true) ? 1 : 0;
        }

        void settle(IIII_Result r) {
            r.r4 = isCached(KEY, VALUE);
            cache.close();
        }
    }

    /** The race on the kernel port with the in-progress request list. */
    @JCStressTest
    @JCStressMeta(RecreateVsDelete.class)
    @State
    public static class RequestList extends Race {
        /** A fresh cache holding P, unheld. */
        public RequestList() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** Deletes P, or takes and releases it if somebody holds it. */
        @Actor
        public void deleter(IIII_Result r) {
            delete(r);
        }

        /** Looks P up, lets go of it, and creates it. */
        @Actor
        public void recreator(IIII_Result r) {
            lookUpThenCreate(r);
        }

        /** Looks P up and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The race on the kernel port in the compact layout. */
    @JCStressTest
    @JCStressMeta(RecreateVsDelete.class)
    @State
    public static class Compact extends Race {
        /** A fresh cache holding P, unheld. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** Deletes P, or takes and releases it if somebody holds it. */
        @Actor
        public void deleter(IIII_Result r) {
            delete(r);
        }

        /** Looks P up, lets go of it, and creates it. */
        @Actor
        public void recreator(IIII_Result r) {
            lookUpThenCreate(r);
        }

        /** Looks P up and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The race on the kernel port with mainline's allocate-first create. */
    @JCStressTest
    @JCStressMeta(RecreateVsDelete.class)
    @State
    public static class AllocateFirst extends Race {
        /** A fresh cache holding P, unheld. */
        public AllocateFirst() {
            super(Backend.MBCACHE_ALLOCATE_FIRST);
        }

        /** Deletes P, or takes and releases it if somebody holds it. */
        @Actor
        public void deleter(IIII_Result r) {
            delete(r);
        }

        /** Looks P up, lets go of it, and creates it. */
        @Actor
        public void recreator(IIII_Result r) {
            lookUpThenCreate(r);
        }

        /** Looks P up and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The race on the Caffeine backend, whose create refuses a pair its lock-free read of the key's group finds. */
    @JCStressTest
    @JCStressMeta(RecreateVsDelete.class)
    @State
    public static class Caffeine extends Race {
        /** A fresh cache holding P, unheld. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** Deletes P, or takes and releases it if somebody holds it. */
        @Actor
        public void deleter(IIII_Result r) {
            delete(r);
        }

        /** Looks P up, lets go of it, and creates it. */
        @Actor
        public void recreator(IIII_Result r) {
            lookUpThenCreate(r);
        }

        /** Looks P up and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }
}
