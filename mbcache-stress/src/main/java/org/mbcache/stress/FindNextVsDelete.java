package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
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
 * A chain walk vs a delete (the contract, section 6.6): one thread walks the two colliding entries of a key with
 * {@code findFirst} then {@code findNext}, while another deletes the second one. The walk must either
 * reach the entry and hold it (so the delete hands it back) or end cleanly after it is gone, and never
 * return a deleted entry or fail; guards {@code mb_cache_entry_find_next()}/{@code __entry_find()}
 * (mbcache2 rewrite, 2016, Jan Kara).
 *
 * <p>Through the public API a held entry is never unlinked, so {@code findNext}'s restart from the chain
 * head cannot be forced from outside; this test races the step that can be: the walk onto an entry
 * that is being deleted. Result: {@code r1} = the walk started at the newest entry (1); {@code r2} =
 * {@code findNext} returned the other entry (1), {@code null} (0) or a wrong one (-1); {@code r3} =
 * {@code deleteOrGet} returned the entry (1) or deleted it (0); {@code r4} = {@code size()} at the end,
 * or -99 if the cache refused to take back a held reference (the entry had been freed under it).
 */
@Outcome(id = "1, 1, 1, 2", expect = ACCEPTABLE, desc = "Walk first: findNext holds the second entry, so deleteOrGet hands it back.")
@Outcome(id = "1, 0, 0, 1", expect = ACCEPTABLE, desc = "Delete first: the walk ends after the first entry.")
@Outcome(id = "1, 1, 0, .*", expect = FORBIDDEN, desc = "findNext returned an entry that deleteOrGet deleted.")
@Outcome(expect = FORBIDDEN, desc = "Any other combination: a wrong entry, a lost entry, or a wrong count.")
public final class FindNextVsDelete {

    private FindNextVsDelete() {
    }

    /** The steps of the race: two entries collide on one key, the second created last (chain head). */
    abstract static class Race extends CacheRace {
        CacheEntry reached;
        CacheEntry returned;

        Race(Backend backend) {
            super(backend);
            cache.create(KEY, OTHER_VALUE, true);
            cache.create(KEY, VALUE, true);
        }

        void walk(IIII_Result r) {
            CacheEntry first = cache.findFirst(KEY);
            r.r1 = first != null && first.value() == VALUE ? 1 : 0;
            if (first == null) {
                return;
            }
            reached = cache.findNext(first);
            r.r2 = reached == null ? 0 : reached.value() == OTHER_VALUE ? 1 : -1;
        }

        void delete(IIII_Result r) {
            returned = cache.deleteOrGet(KEY, OTHER_VALUE);
            r.r3 = found(returned);
        }

        void settle(IIII_Result r) {
            r.r4 = sizeAfterReleasing(reached, returned);
            cache.close();
        }
    }

    /** The race on the kernel port. */
    @JCStressTest
    @JCStressMeta(FindNextVsDelete.class)
    @State
    public static class KernelPort extends Race {
        /** A cache holding two entries under one key. */
        public KernelPort() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** Walks the key's chain: findFirst, then findNext (which releases the first). */
        @Actor
        public void walker(IIII_Result r) {
            walk(r);
        }

        /** Deletes the older entry, unless the walker holds it. */
        @Actor
        public void deleter(IIII_Result r) {
            delete(r);
        }

        /** Releases what the actors hold, counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The race on the kernel port in the compact layout (slots in primitive pages, a clock for reclaim). */
    @JCStressTest
    @JCStressMeta(FindNextVsDelete.class)
    @State
    public static class Compact extends Race {
        /** A cache holding two entries under one key. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** Walks the key's chain: findFirst, then findNext (which releases the first). */
        @Actor
        public void walker(IIII_Result r) {
            walk(r);
        }

        /** Deletes the older entry, unless the walker holds it. */
        @Actor
        public void deleter(IIII_Result r) {
            delete(r);
        }

        /** Releases what the actors hold, counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The race on the Caffeine backend, whose walk continues in the key's group as it read it. */
    @JCStressTest
    @JCStressMeta(FindNextVsDelete.class)
    @State
    public static class Caffeine extends Race {
        /** A cache holding two entries under one key. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** Walks the key's chain: findFirst, then findNext (which releases the first). */
        @Actor
        public void walker(IIII_Result r) {
            walk(r);
        }

        /** Deletes the older entry, unless the walker holds it. */
        @Actor
        public void deleter(IIII_Result r) {
            delete(r);
        }

        /** Releases what the actors hold, counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }
}
