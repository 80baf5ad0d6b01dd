package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.VALUE;

import org.mbcache.CacheEntry;
import org.mbcache.HotEntries;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.mbcache.testing.Backend;

/**
 * An over-release vs a release on a hot entry (both kernel-port layouts). Two references are held: one
 * taken before the switch (in the state word's count), one after (in a per-stripe cell). One thread
 * releases the second; the other releases the first twice, which is one release too many. A hot
 * release takes a unit from any cell or from the count, and calls a release an over-release only
 * after a frozen, exact look found none, so exactly two of the three releases are accepted, whatever
 * the order (which one is refused depends on it: references are interchangeable), and the count is
 * exact afterwards.
 *
 * <p>Result: {@code r1} = releases the first thread got accepted (0 or 1); {@code r2} = those the
 * second thread got accepted (0 to 2); {@code r3} = {@code deleteOrGet} then deleted the pair (1).
 */
@Outcome(id = "1, 1, 1", expect = ACCEPTABLE, desc = "The second thread's extra release was refused.")
@Outcome(id = "0, 2, 1", expect = ACCEPTABLE,
        desc = "The second thread spent the first thread's reference too; the first thread's release was refused.")
@Outcome(id = "1, 2, .*", expect = FORBIDDEN, desc = "Three releases accepted for two references: the cache's own was spent.")
@Outcome(id = {"0, [01], .*", "1, 0, .*"}, expect = FORBIDDEN,
        desc = "A legitimate release was refused: a spurious over-release.")
@Outcome(expect = FORBIDDEN, desc = "Any other combination: the count is not exact afterwards.")
public final class HotOverReleaseVsRelease {

    private HotOverReleaseVsRelease() {
    }

    /** The steps of the race: a cached pair with one reference in the count and one in a cell. */
    abstract static class Race extends CacheRace {
        final CacheEntry takenCold;
        final CacheEntry takenHot;

        Race(Backend backend) {
            super(backend);
            cache.create(KEY, VALUE, true);
            takenCold = cache.get(KEY, VALUE);
            if (!HotEntries.makeHot(takenCold)) {
                throw new IllegalStateException("setup: the entry did not switch to hot mode");
            }
            takenHot = cache.get(KEY, VALUE);
        }

        void releaseHot(III_Result r) {
            r.r1 = releaseAll(takenHot) ? 1 : 0;
        }

        void overRelease(III_Result r) {
            r.r2 = (releaseAll(takenCold) ? 1 : 0) + (releaseAll(takenCold) ? 1 : 0);
        }

        void settle(III_Result r) {
            CacheEntry again = cache.deleteOrGet(KEY, VALUE);
            r.r3 = again == null ? 1 : 0;
            releaseIfHeld(again);
            cache.close();
        }
    }

    /** The race on the kernel port's entries. */
    @JCStressTest
    @JCStressMeta(HotOverReleaseVsRelease.class)
    @State
    public static class KernelPort extends Race {
        /** A cached pair with one reference in the count and one in a cell. */
        public KernelPort() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** Releases the reference taken in hot mode. */
        @Actor
        public void holder(III_Result r) {
            releaseHot(r);
        }

        /** Releases the reference taken in cold mode, twice. */
        @Actor
        public void overReleaser(III_Result r) {
            overRelease(r);
        }

        /** Checks the count is exactly the cache's own, and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on a hot slot of the compact layout. */
    @JCStressTest
    @JCStressMeta(HotOverReleaseVsRelease.class)
    @State
    public static class Compact extends Race {
        /** A cached pair with one reference in the count and one in a cell. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** Releases the reference taken in hot mode. */
        @Actor
        public void holder(III_Result r) {
            releaseHot(r);
        }

        /** Releases the reference taken in cold mode, twice. */
        @Actor
        public void overReleaser(III_Result r) {
            overRelease(r);
        }

        /** Checks the count is exactly the cache's own, and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }
}
