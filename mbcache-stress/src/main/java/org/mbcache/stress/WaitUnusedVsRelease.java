package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
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
import org.openjdk.jcstress.infra.results.III_Result;
import org.mbcache.testing.Backend;

/**
 * waitUnused vs release (the contract, section 6.7): the deleter got a held entry back from {@code deleteOrGet} and
 * waits for it to become unused while the user releases it. The release that brings the count down to
 * 2 must wake the waiter whether it comes before or during the wait, with no lost wake-up; guards
 * {@code mb_cache_entry_wait_unused()} and the wake-up in {@code mb_cache_entry_put()} (the 2022
 * race fixes that came with ext4 fix 65f8b80053a1).
 *
 * <p>The wait is bounded ({@value #WAIT_SECONDS} s, far above any scheduling delay) so that a lost
 * wake-up shows as an outcome instead of a hang. Result: {@code r1} = the wait succeeded (1), timed out
 * (0) or was interrupted (-1); {@code r2} = the retried {@code deleteOrGet} then deleted the pair (1);
 * {@code r3} = {@code size()} at the end.
 */
@Outcome(id = "1, 1, 0", expect = ACCEPTABLE, desc = "The waiter woke; ext4's retry then deletes the unused entry.")
@Outcome(id = "0, .*", expect = FORBIDDEN, desc = "Lost wake-up: the waiter timed out although the user released the entry.")
@Outcome(expect = FORBIDDEN, desc = "Any other combination: the wait failed, or the retry could not delete the unused entry.")
public final class WaitUnusedVsRelease {

    /** How long the waiter waits before the test calls the wake-up lost. */
    static final long WAIT_SECONDS = 10;

    private WaitUnusedVsRelease() {
    }

    /** The steps of the race: a user holds the entry and the deleter got it back from deleteOrGet. */
    abstract static class Race extends CacheRace {
        final CacheEntry usersReference;
        final CacheEntry deletersReference;

        Race(Backend backend) {
            this(backend, false);
        }

        /** The same with the entry switched to hot mode first ({@link HotReleaseVsWaitUnused}). */
        Race(Backend backend, boolean hot) {
            super(backend);
            if (hot) {
                createHot(KEY, VALUE);
            } else {
                cache.create(KEY, VALUE, true);
            }
            usersReference = cache.get(KEY, VALUE);
            deletersReference = cache.deleteOrGet(KEY, VALUE);
            if (usersReference == null || deletersReference == null) {
                throw new IllegalStateException("setup: deleteOrGet must hand back an entry a user holds");
            }
        }

        void release() {
            cache.release(usersReference);
        }

        void await(III_Result r) {
            try {
                r.r1 = cache.waitUnused(deletersReference, WAIT_SECONDS, TimeUnit.SECONDS) ? 1 : 0;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                r.r1 = -1;
            }
        }

        void settle(III_Result r) {
            cache.release(deletersReference);
            CacheEntry again = cache.deleteOrGet(KEY, VALUE);
            r.r2 = again == null ? 1 : 0;
            releaseIfHeld(again);
            r.r3 = size();
            cache.close();
        }
    }

    /** The race on the kernel port. */
    @JCStressTest
    @JCStressMeta(WaitUnusedVsRelease.class)
    @State
    public static class KernelPort extends Race {
        /** A cached pair held by a user and by the deleter. */
        public KernelPort() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** The user is done with the entry. */
        @Actor
        public void user(III_Result r) {
            release();
        }

        /** The deleter waits, bounded, until only the cache and itself hold the entry. */
        @Actor
        public void deleter(III_Result r) {
            await(r);
        }

        /** Releases, retries the delete as ext4 does, counts the entries and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on the kernel port in the compact layout (slots in primitive pages, a clock for reclaim). */
    @JCStressTest
    @JCStressMeta(WaitUnusedVsRelease.class)
    @State
    public static class Compact extends Race {
        /** A cached pair held by a user and by the deleter. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** The user is done with the entry. */
        @Actor
        public void user(III_Result r) {
            release();
        }

        /** The deleter waits, bounded, until only the cache and itself hold the entry. */
        @Actor
        public void deleter(III_Result r) {
            await(r);
        }

        /** Releases, retries the delete as ext4 does, counts the entries and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on the Caffeine backend. */
    @JCStressTest
    @JCStressMeta(WaitUnusedVsRelease.class)
    @State
    public static class Caffeine extends Race {
        /** A cached pair held by a user and by the deleter. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** The user is done with the entry. */
        @Actor
        public void user(III_Result r) {
            release();
        }

        /** The deleter waits, bounded, until only the cache and itself hold the entry. */
        @Actor
        public void deleter(III_Result r) {
            await(r);
        }

        /** Releases, retries the delete as ext4 does, counts the entries and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }
}
