package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
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
 * Create vs deleteOrGet (the contract, section 6.4): {@code deleteOrGet} runs while the pair is being created, so it
 * can meet the new entry in its chain before the entry is on the LRU list. It must not free the entry
 * early, and afterwards {@code size()} must equal the number of live entries and never go negative
 * (kernel fix 5fc4cbd9fde5: create starts the entry at count 2 and drops one only once it is listed).
 *
 * <p>Result: {@code r1} = create won (1); {@code r2} = {@code deleteOrGet} returned the entry (1) or
 * {@code null} (0); {@code r3} = {@code size()} at the end; {@code r4} = the pair is still cached (1) or
 * not (0).
 */
@Outcome(id = "1, 0, 0, 0", expect = ACCEPTABLE, desc = "Create first, then deleteOrGet deleted the unused entry.")
@Outcome(id = "1, 0, 1, 1", expect = ACCEPTABLE, desc = "deleteOrGet first found nothing; the created entry stays.")
@Outcome(id = "1, 1, 1, 1", expect = ACCEPTABLE_INTERESTING,
        desc = "deleteOrGet met the entry while create still held its initial reference, so got it back instead of freeing it.")
@Outcome(id = "1, 0, 1, 0", expect = FORBIDDEN, desc = "The entry was freed early but is still counted (5fc4cbd9fde5).")
@Outcome(expect = FORBIDDEN, desc = "Any other combination: size() disagrees with the live entries, or is negative.")
public final class CreateVsDeleteOrGet {

    private CreateVsDeleteOrGet() {
    }

    /** The steps of the race: the cache starts empty. */
    abstract static class Race extends CacheRace {
        Race(Backend backend) {
            super(backend);
        }

        void create(IIII_Result r) {
            r.r1 = cache.create(KEY, VALUE, true) ? 1 : 0;
        }

        void deleteOrGet(IIII_Result r) {
            CacheEntry returned = cache.deleteOrGet(KEY, VALUE);
            r.r2 = found(returned);
            releaseIfHeld(returned);
        }

        void settle(IIII_Result r) {
            r.r3 = size();
            r.r4 = isCached(KEY, VALUE);
            cache.close();
        }
    }

    /** The race on the kernel port with the in-progress request list. */
    @JCStressTest
    @JCStressMeta(CreateVsDeleteOrGet.class)
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

        /** Deletes the pair, or takes and releases it if somebody holds it. */
        @Actor
        public void deleter(IIII_Result r) {
            deleteOrGet(r);
        }

        /** Counts the entries, looks the pair up and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The race on the kernel port in the compact layout (slots in primitive pages, a clock for reclaim). */
    @JCStressTest
    @JCStressMeta(CreateVsDeleteOrGet.class)
    @State
    public static class Compact extends Race {
        /** A fresh, empty cache. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** Creates the pair. */
        @Actor
        public void creator(IIII_Result r) {
            create(r);
        }

        /** Deletes the pair, or takes and releases it if somebody holds it. */
        @Actor
        public void deleter(IIII_Result r) {
            deleteOrGet(r);
        }

        /** Counts the entries, looks the pair up and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The race on the kernel port with mainline's allocate-first create (where 5fc4cbd9fde5 applies). */
    @JCStressTest
    @JCStressMeta(CreateVsDeleteOrGet.class)
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

        /** Deletes the pair, or takes and releases it if somebody holds it. */
        @Actor
        public void deleter(IIII_Result r) {
            deleteOrGet(r);
        }

        /** Counts the entries, looks the pair up and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /**
     * The race on the Caffeine backend, whose create publishes the entry at count 1 by one atomic map
     * insert, so deleteOrGet finds it whole or not at all; the entry count must still come out exact.
     */
    @JCStressTest
    @JCStressMeta(CreateVsDeleteOrGet.class)
    @State
    public static class Caffeine extends Race {
        /** A fresh, empty cache. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** Creates the pair. */
        @Actor
        public void creator(IIII_Result r) {
            create(r);
        }

        /** Deletes the pair, or takes and releases it if somebody holds it. */
        @Actor
        public void deleter(IIII_Result r) {
            deleteOrGet(r);
        }

        /** Counts the entries, looks the pair up and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }
}
