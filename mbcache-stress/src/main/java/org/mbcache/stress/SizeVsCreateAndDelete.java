package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
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
 * {@code size()} while one thread creates and another deletes (the contract, sections 3 and 6.4):
 * the kernel port keeps its entry count in per-thread cells, so this create and this delete count
 * in different cells, and a count read cell by cell could mix a moment before the create with one
 * after the delete. Each thread reads {@code size()} after its own operation; both answers must be
 * counts the cache really had, in an order the two operations allow.
 *
 * <p>The cache starts with pair A cached. The creator creates pair B, then reads {@code size()}
 * ({@code r1}); the deleter deletes A (nobody holds it), then reads {@code size()} ({@code r2});
 * {@code r3} = {@code size()} at the end. B is live from the creator's create on, so the deleter,
 * whose answer counts A gone, sees 0 only if its read came before B's create ended, and then the
 * creator, reading after its create, after the delete, sees 1.
 */
@Outcome(id = "2, 1, 1", expect = ACCEPTABLE, desc = "The creator read between the create and the delete.")
@Outcome(id = "1, 1, 1", expect = ACCEPTABLE, desc = "Both read after both operations.")
@Outcome(id = "1, 0, 1", expect = ACCEPTABLE, desc = "The deleter read before the create ended.")
@Outcome(id = "2, 0, 1", expect = FORBIDDEN,
        desc = "The creator saw A and B live, yet the later read after the delete saw B missing: a count no moment had.")
@Outcome(expect = FORBIDDEN, desc = "Any other combination: a count below zero, above the entries, or off once quiet.")
public final class SizeVsCreateAndDelete {

    private SizeVsCreateAndDelete() {
    }

    /** The steps of the race: pair A is cached, nobody holds it. */
    abstract static class Race extends CacheRace {
        Race(Backend backend) {
            super(backend);
            cache.create(OTHER_KEY, OTHER_VALUE, true);
        }

        void createThenCount(III_Result r) {
            cache.create(KEY, VALUE, true);
            r.r1 = size();
        }

        void deleteThenCount(III_Result r) {
            CacheEntry held = cache.deleteOrGet(OTHER_KEY, OTHER_VALUE);
            releaseIfHeld(held);
            r.r2 = size();
        }

        void settle(III_Result r) {
            r.r3 = size();
            cache.close();
        }
    }

    /** The race on the kernel port (its striped entry count). */
    @JCStressTest
    @JCStressMeta(SizeVsCreateAndDelete.class)
    @State
    public static class RequestList extends Race {
        /** A cache holding pair A. */
        public RequestList() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** Creates pair B, then counts. */
        @Actor
        public void creator(III_Result r) {
            createThenCount(r);
        }

        /** Deletes pair A, then counts. */
        @Actor
        public void deleter(III_Result r) {
            deleteThenCount(r);
        }

        /** Counts once both are done, and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on the kernel port in the compact layout (slots in primitive pages, a clock for reclaim). */
    @JCStressTest
    @JCStressMeta(SizeVsCreateAndDelete.class)
    @State
    public static class Compact extends Race {
        /** A cache holding pair A. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** Creates pair B, then counts. */
        @Actor
        public void creator(III_Result r) {
            createThenCount(r);
        }

        /** Deletes pair A, then counts. */
        @Actor
        public void deleter(III_Result r) {
            deleteThenCount(r);
        }

        /** Counts once both are done, and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on the Caffeine backend (one atomic entry count). */
    @JCStressTest
    @JCStressMeta(SizeVsCreateAndDelete.class)
    @State
    public static class Caffeine extends Race {
        /** A cache holding pair A. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** Creates pair B, then counts. */
        @Actor
        public void creator(III_Result r) {
            createThenCount(r);
        }

        /** Deletes pair A, then counts. */
        @Actor
        public void deleter(III_Result r) {
            deleteThenCount(r);
        }

        /** Counts once both are done, and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }
}
