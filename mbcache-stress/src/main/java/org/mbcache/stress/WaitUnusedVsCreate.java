package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.VALUE;

import java.util.concurrent.TimeUnit;
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
 * waitUnused vs create (the contract, sections 6.4 and 6.7 together): {@code deleteOrGet} can catch an entry while
 * {@code create} still holds its initial reference, and then ext4 waits for the entry to become unused.
 * The create's final drop of that reference is a release like any other and must wake the waiter; the
 * kernel's {@code mb_cache_entry_create()} ends with {@code mb_cache_entry_put()}, which wakes waiters
 * (kernel fix 5fc4cbd9fde5 plus the 2022 {@code mb_cache_entry_wait_unused()}).
 *
 * <p>The wait is bounded ({@value WaitUnusedVsRelease#WAIT_SECONDS} s) so that a lost wake-up shows as
 * an outcome instead of a hang. Result: {@code r1} = create won (1); {@code r2} = {@code deleteOrGet}
 * returned the entry (1) or {@code null} (0); {@code r3} = the wait succeeded (1), timed out (0), was
 * interrupted (-1), or was not needed (2); {@code r4} = {@code size()} at the end.
 *
 * <p>No Caffeine variant: that backend's create takes no initial reference (it publishes the entry at
 * count 1 by one atomic map insert), so {@code deleteOrGet} can never catch an entry mid-create and
 * the race reduces to {@link CreateVsDeleteOrGet.Caffeine}.
 */
@Outcome(id = {"1, 0, 2, 0", "1, 0, 2, 1"}, expect = ACCEPTABLE,
        desc = "deleteOrGet ran before (nothing to delete) or after the create (deleted the unused entry).")
@Outcome(id = "1, 1, 1, 1", expect = ACCEPTABLE_INTERESTING,
        desc = "deleteOrGet caught the entry mid-create; the create's final release woke the waiter.")
@Outcome(id = "1, 1, 0, .*", expect = FORBIDDEN,
        desc = "Lost wake-up: create dropped its initial reference without waking the waiter.")
@Outcome(expect = FORBIDDEN, desc = "Any other combination breaks reference counting or the entry count.")
public final class WaitUnusedVsCreate {

    private WaitUnusedVsCreate() {
    }

    /** The steps of the race: the cache starts empty. */
    abstract static class Race extends CacheRace {
        Race(Backend backend) {
            super(backend);
        }

        void create(IIII_Result r) {
            r.r1 = cache.create(KEY, VALUE, true) ? 1 : 0;
        }

        void deleteAndWait(IIII_Result r) {
            CacheEntry held = cache.deleteOrGet(KEY, VALUE);
            r.r2 = found(held);
            if (held == null) {
                r.r3 = 2;
                return;
            }
            try {
                r.r3 = cache.waitUnused(held, WaitUnusedVsRelease.WAIT_SECONDS, TimeUnit.SECONDS) ? 1 : 0;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                r.r3 = -1;
            } finally {
                cache.release(held);
            }
        }

        void settle(IIII_Result r) {
            r.r4 = size();
            cache.close();
        }
    }

    /** The race on the kernel port with the in-progress request list. */
    @JCStressTest
    @JCStressMeta(WaitUnusedVsCreate.class)
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

        /** ext4's delete: deleteOrGet, and wait (bounded) if the entry comes back. */
        @Actor
        public void deleter(IIII_Result r) {
            deleteAndWait(r);
        }

        /** Counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The race on the kernel port with mainline's allocate-first create. */
    @JCStressTest
    @JCStressMeta(WaitUnusedVsCreate.class)
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

        /** ext4's delete: deleteOrGet, and wait (bounded) if the entry comes back. */
        @Actor
        public void deleter(IIII_Result r) {
            deleteAndWait(r);
        }

        /** Counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }
}
