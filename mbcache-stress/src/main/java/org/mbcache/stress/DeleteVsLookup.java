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
import org.openjdk.jcstress.infra.results.III_Result;
import org.mbcache.testing.Backend;

/**
 * {@code deleteOrGet} vs a lookup of the same pair: the pair P is cached and nobody holds it; one
 * actor looks it up ({@code get}) and lets go of what it found, the other deletes it (and, where
 * it got P back as held, releases it and deletes again, as ext4 does). The deletion hands P back
 * as held only if somebody holds it, and the lookup is the only one who can: a deletion that
 * answered "held" while the lookup answered a miss met a holder that never was (an optimistic
 * lookup's reference taken before its read was validated, given back when the validation failed,
 * and the lookup's retry then missing the pair the second deletion removed).
 *
 * <p>Result: {@code r1} = {@code get} found P (1) or not (0); {@code r2} = the first
 * {@code deleteOrGet} returned P (1) or {@code null} (0); {@code r3} = P is cached at the end (1)
 * or not (0).
 */
@Outcome(id = "1, 1, [01]", expect = ACCEPTABLE, desc = "The lookup held P, so the deletion got it back; the second deletion removed it or met the hold.")
@Outcome(id = "1, 0, 0", expect = ACCEPTABLE, desc = "The lookup found P and let go; then the deletion removed it.")
@Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "The deletion removed P; then the lookup missed it.")
@Outcome(id = "0, 1, [01]", expect = FORBIDDEN, desc = "The deletion saw P held, but the lookup never had it.")
@Outcome(expect = FORBIDDEN, desc = "Any other combination.")
public final class DeleteVsLookup {

    private DeleteVsLookup() {
    }

    /** The steps of the race: P is cached, nobody holds it. */
    abstract static class Race extends CacheRace {
        Race(Backend backend) {
            super(backend);
            cache.create(KEY, VALUE, true);
        }

        void lookUp(III_Result r) {
            CacheEntry got = cache.get(KEY, VALUE);
            r.r1 = found(got);
            releaseIfHeld(got);
        }

        void delete(III_Result r) {
            CacheEntry returned = cache.deleteOrGet(KEY, VALUE);
            r.r2 = found(returned);
            if (returned != null) { // as ext4 does: let go, and delete again
                cache.release(returned);
                releaseIfHeld(cache.deleteOrGet(KEY, VALUE));
            }
        }

        void settle(III_Result r) {
            r.r3 = isCached(KEY, VALUE);
            cache.close();
        }
    }

    /** The race on the kernel port with the in-progress request list. */
    @JCStressTest
    @JCStressMeta(DeleteVsLookup.class)
    @State
    public static class RequestList extends Race {
        /** A fresh cache holding P, unheld. */
        public RequestList() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** Looks P up and lets go of it. */
        @Actor
        public void reader(III_Result r) {
            lookUp(r);
        }

        /** Deletes P, or takes and releases it if somebody holds it. */
        @Actor
        public void deleter(III_Result r) {
            delete(r);
        }

        /** Looks P up and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on the kernel port in the compact layout. */
    @JCStressTest
    @JCStressMeta(DeleteVsLookup.class)
    @State
    public static class Compact extends Race {
        /** A fresh cache holding P, unheld. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** Looks P up and lets go of it. */
        @Actor
        public void reader(III_Result r) {
            lookUp(r);
        }

        /** Deletes P, or takes and releases it if somebody holds it. */
        @Actor
        public void deleter(III_Result r) {
            delete(r);
        }

        /** Looks P up and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on the kernel port with mainline's allocate-first create. */
    @JCStressTest
    @JCStressMeta(DeleteVsLookup.class)
    @State
    public static class AllocateFirst extends Race {
        /** A fresh cache holding P, unheld. */
        public AllocateFirst() {
            super(Backend.MBCACHE_ALLOCATE_FIRST);
        }

        /** Looks P up and lets go of it. */
        @Actor
        public void reader(III_Result r) {
            lookUp(r);
        }

        /** Deletes P, or takes and releases it if somebody holds it. */
        @Actor
        public void deleter(III_Result r) {
            delete(r);
        }

        /** Looks P up and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on the Caffeine backend. */
    @JCStressTest
    @JCStressMeta(DeleteVsLookup.class)
    @State
    public static class Caffeine extends Race {
        /** A fresh cache holding P, unheld. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** Looks P up and lets go of it. */
        @Actor
        public void reader(III_Result r) {
            lookUp(r);
        }

        /** Deletes P, or takes and releases it if somebody holds it. */
        @Actor
        public void deleter(III_Result r) {
            delete(r);
        }

        /** Looks P up and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }
}
