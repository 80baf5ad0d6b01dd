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
 * Publication of a new entry (the contract, section 6.8): one thread creates a pair while another looks its key up.
 * A lookup that finds the entry must see its key, value and reusable flag fully initialised, never a
 * default 0/false from an unsafely published object; guards the hashing of a fully built entry under
 * the bucket lock in {@code mb_cache_entry_create()} (mbcache2 rewrite, 2016, Jan Kara), for both create
 * strategies (the request list builds the entry outside the lock).
 *
 * <p>Result: {@code r1} = {@code findFirst} found an entry (1) or not (0); {@code r2}, {@code r3},
 * {@code r4} = its key, value and reusable flag read as created (1) or not (0); all 0 when not found.
 */
@Outcome(id = "0, 0, 0, 0", expect = ACCEPTABLE, desc = "The lookup ran before the entry was published.")
@Outcome(id = "1, 1, 1, 1", expect = ACCEPTABLE, desc = "The lookup found the entry fully initialised.")
@Outcome(expect = FORBIDDEN, desc = "The lookup found an entry with a field not yet initialised (unsafe publication).")
public final class Publication {

    private Publication() {
    }

    /** The steps of the race: the cache starts empty. */
    abstract static class Race extends CacheRace {
        Race(Backend backend) {
            super(backend);
        }

        void create() {
            cache.create(KEY, VALUE, true);
        }

        void lookUp(IIII_Result r) {
            CacheEntry entry = cache.findFirst(KEY);
            if (entry != null) {
                r.r1 = 1;
                r.r2 = entry.key() == KEY ? 1 : 0;
                r.r3 = entry.value() == VALUE ? 1 : 0;
                r.r4 = entry.reusable() ? 1 : 0;
                cache.release(entry);
            }
        }

        void settle() {
            cache.close();
        }
    }

    /** Publication on the kernel port with the in-progress request list. */
    @JCStressTest
    @JCStressMeta(Publication.class)
    @State
    public static class RequestList extends Race {
        /** A fresh, empty cache. */
        public RequestList() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** Creates a reusable pair. */
        @Actor
        public void creator() {
            create();
        }

        /** Looks the key up and reads every field of what it finds. */
        @Actor
        public void reader(IIII_Result r) {
            lookUp(r);
        }

        /** Closes the cache. */
        @Arbiter
        public void check() {
            settle();
        }
    }

    /** The race on the kernel port in the compact layout (slots in primitive pages, a clock for reclaim). */
    @JCStressTest
    @JCStressMeta(Publication.class)
    @State
    public static class Compact extends Race {
        /** A fresh, empty cache. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** Creates a reusable pair. */
        @Actor
        public void creator() {
            create();
        }

        /** Looks the key up and reads every field of what it finds. */
        @Actor
        public void reader(IIII_Result r) {
            lookUp(r);
        }

        /** Closes the cache. */
        @Arbiter
        public void check() {
            settle();
        }
    }

    /** Publication on the kernel port with mainline's allocate-first create. */
    @JCStressTest
    @JCStressMeta(Publication.class)
    @State
    public static class AllocateFirst extends Race {
        /** A fresh, empty cache. */
        public AllocateFirst() {
            super(Backend.MBCACHE_ALLOCATE_FIRST);
        }

        /** Creates a reusable pair. */
        @Actor
        public void creator() {
            create();
        }

        /** Looks the key up and reads every field of what it finds. */
        @Actor
        public void reader(IIII_Result r) {
            lookUp(r);
        }

        /** Closes the cache. */
        @Arbiter
        public void check() {
            settle();
        }
    }

    /** Publication on the Caffeine backend, whose lookups read the key's group without a lock. */
    @JCStressTest
    @JCStressMeta(Publication.class)
    @State
    public static class Caffeine extends Race {
        /** A fresh, empty cache. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** Creates a reusable pair. */
        @Actor
        public void creator() {
            create();
        }

        /** Looks the key up and reads every field of what it finds. */
        @Actor
        public void reader(IIII_Result r) {
            lookUp(r);
        }

        /** Closes the cache. */
        @Arbiter
        public void check() {
            settle();
        }
    }
}
