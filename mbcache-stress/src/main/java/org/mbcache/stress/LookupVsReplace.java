package org.mbcache.stress;

import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
import static org.mbcache.stress.Keys.VALUE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.mbcache.CacheEntry;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.I_Result;
import org.mbcache.testing.Backend;

/**
 * {@code findFirst} vs a writer that replaces the key's newest entry: the key has O (older) and N
 * (newer), both reusable, nobody holding them; one actor looks the key up, the other creates N2
 * (newest) and then deletes N. At every moment N or N2 is a live, reusable entry newer than O, so
 * the lookup answers N or N2, never O and never a miss (the Caffeine backend answered O: its walk
 * read the group before N2 came, found N deleted when it tried it, and took the next entry of its
 * stale copy).
 *
 * <p>Result: {@code r1} = the lookup found N (1), N2 (2), O (3), nothing (0).
 */
@Outcome(id = "1", expect = ACCEPTABLE, desc = "The lookup found N before it was deleted.")
@Outcome(id = "2", expect = ACCEPTABLE, desc = "The lookup found N2, created before N was deleted.")
@Outcome(id = "3", expect = FORBIDDEN, desc = "The lookup answered O while a newer reusable entry was cached throughout.")
@Outcome(expect = FORBIDDEN, desc = "A miss, while the key had a reusable entry throughout.")
public final class LookupVsReplace {

    /** The newest entry's value, created by the writer. */
    static final long NEWEST_VALUE = 0x0BAD_CAFE_1234L;

    private LookupVsReplace() {
    }

    /** The steps of the race: O (older) and N (newer) under one key, nobody holding them. */
    abstract static class Race extends CacheRace {
        Race(Backend backend) {
            super(backend);
            cache.create(KEY, OTHER_VALUE, true);
            cache.create(KEY, VALUE, true);
        }

        void lookUp(I_Result r) {
            CacheEntry found = cache.findFirst(KEY);
            r.r1 = found == null ? 0 : found.value() == VALUE ? 1 : found.value() == NEWEST_VALUE ? 2
                    : found.value() == OTHER_VALUE ? 3 : 4;
            releaseIfHeld(found);
        }

        void replace() {
            cache.create(KEY, NEWEST_VALUE, true);
            CacheEntry held = cache.deleteOrGet(KEY, VALUE);
            if (held != null) { // the lookup holds N: let go, and delete again, as ext4 does
                cache.release(held);
                releaseIfHeld(cache.deleteOrGet(KEY, VALUE));
            }
        }

        void settle() {
            cache.close();
        }
    }

    /** The race on the kernel port with the in-progress request list. */
    @JCStressTest
    @JCStressMeta(LookupVsReplace.class)
    @State
    public static class RequestList extends Race {
        /** A fresh cache holding O and N under one key, unheld. */
        public RequestList() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** Looks the key up and lets go of what it found. */
        @Actor
        public void reader(I_Result r) {
            lookUp(r);
        }

        /** Creates N2, then deletes N. */
        @Actor
        public void writer() {
            replace();
        }

        /** Closes the cache. */
        @Arbiter
        public void check() {
            settle();
        }
    }

    /** The race on the kernel port with mainline's allocate-first create. */
    @JCStressTest
    @JCStressMeta(LookupVsReplace.class)
    @State
    public static class AllocateFirst extends Race {
        /** A fresh cache holding O and N under one key, unheld. */
        public AllocateFirst() {
            super(Backend.MBCACHE_ALLOCATE_FIRST);
        }

        /** Looks the key up and lets go of what it found. */
        @Actor
        public void reader(I_Result r) {
            lookUp(r);
        }

        /** Creates N2, then deletes N. */
        @Actor
        public void writer() {
            replace();
        }

        /** Closes the cache. */
        @Arbiter
        public void check() {
            settle();
        }
    }

    /** The race on the kernel port in the compact layout. */
    @JCStressTest
    @JCStressMeta(LookupVsReplace.class)
    @State
    public static class Compact extends Race {
        /** A fresh cache holding O and N under one key, unheld. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** Looks the key up and lets go of what it found. */
        @Actor
        public void reader(I_Result r) {
            lookUp(r);
        }

        /** Creates N2, then deletes N. */
        @Actor
        public void writer() {
            replace();
        }

        /** Closes the cache. */
        @Arbiter
        public void check() {
            settle();
        }
    }

    /** The race on the Caffeine backend. */
    @JCStressTest
    @JCStressMeta(LookupVsReplace.class)
    @State
    public static class Caffeine extends Race {
        /** A fresh cache holding O and N under one key, unheld. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** Looks the key up and lets go of what it found. */
        @Actor
        public void reader(I_Result r) {
            lookUp(r);
        }

        /** Creates N2, then deletes N. */
        @Actor
        public void writer() {
            replace();
        }

        /** Closes the cache. */
        @Arbiter
        public void check() {
            settle();
        }
    }
}
