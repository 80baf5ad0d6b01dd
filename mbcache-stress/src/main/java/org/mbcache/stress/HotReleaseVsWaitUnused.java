package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.mbcache.testing.Backend;

/**
 * {@link WaitUnusedVsRelease} on a hot entry (both kernel-port layouts): the user's reference is a
 * unit in a per-stripe cell, released by another thread than the one that took it, and the waiter's
 * condition is a frozen sum of the cells. The release that leaves only the waiter must wake it,
 * before or during the wait: the waiter sets the waiters bit in the CAS that freezes the word and
 * then sums; the release decrements a cell and then reads the bit.
 *
 * <p>Result: {@code r1} = the wait succeeded (1), timed out (0) or was interrupted (-1); {@code r2} =
 * the retried {@code deleteOrGet} then deleted the pair (1); {@code r3} = {@code size()} at the end.
 */
@Outcome(id = "1, 1, 0", expect = ACCEPTABLE, desc = "The waiter woke; ext4's retry then deletes the unused entry.")
@Outcome(id = "0, .*", expect = FORBIDDEN, desc = "Lost wake-up: the waiter timed out although the user released the entry.")
@Outcome(expect = FORBIDDEN, desc = "Any other combination: the wait failed, or the retry could not delete the unused entry.")
public final class HotReleaseVsWaitUnused {

    private HotReleaseVsWaitUnused() {
    }

    /** The race on the kernel port's entries. */
    @JCStressTest
    @JCStressMeta(HotReleaseVsWaitUnused.class)
    @State
    public static class KernelPort extends WaitUnusedVsRelease.Race {
        /** A cached pair, hot, held by a user and by the deleter (deleteOrGet handed it over). */
        public KernelPort() {
            super(Backend.MBCACHE_REQUEST_LIST, true);
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

    /** The race on a hot slot of the compact layout. */
    @JCStressTest
    @JCStressMeta(HotReleaseVsWaitUnused.class)
    @State
    public static class Compact extends WaitUnusedVsRelease.Race {
        /** A cached pair, hot, held by a user and by the deleter (deleteOrGet handed it over). */
        public Compact() {
            super(Backend.COMPACT, true);
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
