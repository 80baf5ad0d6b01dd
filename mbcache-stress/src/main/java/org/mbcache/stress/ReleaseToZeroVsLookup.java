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
 * Release to zero vs lookup (the contract, section 6.9): the last sharer releases its reference and deletes the
 * pair, taking the count to zero, while another thread looks the pair up by {@code get}. A lookup that
 * still sees the dying entry in its chain must not take a reference to it (increment-if-not-zero), so
 * it never returns an entry whose count reached zero; guards {@code __entry_find()} and
 * {@code mb_cache_entry_get()}'s {@code atomic_inc_not_zero} (mbcache2 rewrite, 2016, Jan Kara).
 *
 * <p>Result: {@code r1} = {@code deleteOrGet} returned the entry (1) or deleted it (0); {@code r2} = the
 * lookup returned the entry (1) or not (0); {@code r3} = {@code size()} after both released,
 * or -99 if the cache refused one of those releases (the entry had been freed under its holder).
 */
@Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "Delete first: the count reached zero and the lookup missed.")
@Outcome(id = "1, 1, 1", expect = ACCEPTABLE, desc = "Lookup first: its reference made deleteOrGet hand the entry back.")
@Outcome(id = "0, 1, .*", expect = FORBIDDEN, desc = "The lookup returned an entry whose count had reached zero (resurrected).")
@Outcome(expect = FORBIDDEN, desc = "Any other combination breaks reference counting.")
public final class ReleaseToZeroVsLookup {

    private ReleaseToZeroVsLookup() {
    }

    /** The steps of the race: the pair is cached and its last sharer holds a reference. */
    abstract static class Race extends CacheRace {
        final CacheEntry sharersReference;
        CacheEntry returned;
        CacheEntry found;

        Race(Backend backend) {
            super(backend);
            cache.create(KEY, VALUE, true);
            sharersReference = cache.get(KEY, VALUE);
        }

        void leave(III_Result r) {
            cache.release(sharersReference);
            returned = cache.deleteOrGet(KEY, VALUE);
            r.r1 = found(returned);
        }

        void lookUp(III_Result r) {
            found = cache.get(KEY, VALUE);
            r.r2 = found(found);
        }

        void settle(III_Result r) {
            r.r3 = sizeAfterReleasing(returned, found);
            cache.close();
        }
    }

    /** The race on the kernel port. */
    @JCStressTest
    @JCStressMeta(ReleaseToZeroVsLookup.class)
    @State
    public static class KernelPort extends Race {
        /** A cache holding the pair, referenced by its last sharer. */
        public KernelPort() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** The last sharer releases its reference and deletes the pair. */
        @Actor
        public void lastSharer(III_Result r) {
            leave(r);
        }

        /** Another thread looks the pair up and holds what it finds. */
        @Actor
        public void lookup(III_Result r) {
            lookUp(r);
        }

        /** Releases what the actors hold, counts the entries and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on the kernel port in the compact layout (slots in primitive pages, a clock for reclaim). */
    @JCStressTest
    @JCStressMeta(ReleaseToZeroVsLookup.class)
    @State
    public static class Compact extends Race {
        /** A cache holding the pair, referenced by its last sharer. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** The last sharer releases its reference and deletes the pair. */
        @Actor
        public void lastSharer(III_Result r) {
            leave(r);
        }

        /** Another thread looks the pair up and holds what it finds. */
        @Actor
        public void lookup(III_Result r) {
            lookUp(r);
        }

        /** Releases what the actors hold, counts the entries and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on the Caffeine backend, whose lookups take references lock-free by a CAS on pinned entries. */
    @JCStressTest
    @JCStressMeta(ReleaseToZeroVsLookup.class)
    @State
    public static class Caffeine extends Race {
        /** A cache holding the pair, referenced by its last sharer. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** The last sharer releases its reference and deletes the pair. */
        @Actor
        public void lastSharer(III_Result r) {
            leave(r);
        }

        /** Another thread looks the pair up and holds what it finds. */
        @Actor
        public void lookup(III_Result r) {
            lookUp(r);
        }

        /** Releases what the actors hold, counts the entries and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }
}
