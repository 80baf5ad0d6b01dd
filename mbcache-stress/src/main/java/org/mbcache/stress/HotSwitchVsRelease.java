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
import org.openjdk.jcstress.infra.results.IIII_Result;
import org.mbcache.testing.Backend;

/**
 * The switch of an entry to hot mode vs the release, on another thread, of a reference taken before
 * the switch (both kernel-port layouts). The switch is one CAS that adds the hot bit to the state
 * word it read, so a cold release CAS that read the word before fails and takes the hot path; either
 * way the reference comes out of the count exactly once.
 *
 * <p>Result: {@code r1} = the entry is hot after the race (1); {@code r2} = the release was accepted
 * (1); {@code r3} = a second release of the same reference was refused (1: nobody holds the entry any
 * more); {@code r4} = {@code deleteOrGet} then deleted the pair (1: the count is exactly the cache's).
 */
@Outcome(id = "1, 1, 1, 1", expect = ACCEPTABLE, desc = "Switched and released, in either order; the count is exact.")
@Outcome(expect = FORBIDDEN, desc = "A reference lost or counted twice across the switch.")
public final class HotSwitchVsRelease {

    private HotSwitchVsRelease() {
    }

    /** The steps of the race: a cached pair, cold, with one reference held (in the word's count). */
    abstract static class Race extends CacheRace {
        final CacheEntry entry;
        final CacheEntry held;

        Race(Backend backend) {
            super(backend);
            cache.create(KEY, VALUE, true);
            entry = cache.get(KEY, VALUE);
            held = cache.get(KEY, VALUE);
            cache.release(entry);
        }

        void switchOver() {
            HotEntries.makeHot(entry);
        }

        void release(IIII_Result r) {
            r.r2 = releaseAll(held) ? 1 : 0;
        }

        void settle(IIII_Result r) {
            r.r1 = HotEntries.isHot(entry) ? 1 : 0;
            r.r3 = releaseAll(held) ? 0 : 1;
            CacheEntry again = cache.deleteOrGet(KEY, VALUE);
            r.r4 = again == null ? 1 : 0;
            releaseIfHeld(again);
            cache.close();
        }
    }

    /** The race on the kernel port's entries. */
    @JCStressTest
    @JCStressMeta(HotSwitchVsRelease.class)
    @State
    public static class KernelPort extends Race {
        /** A cached pair, cold, with one reference held. */
        public KernelPort() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** A contended hit's switch to hot mode. */
        @Actor
        public void switcher(IIII_Result r) {
            switchOver();
        }

        /** The holder releases its reference. */
        @Actor
        public void holder(IIII_Result r) {
            release(r);
        }

        /** Checks the mode, that the reference is gone exactly once, and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The race on a slot of the compact layout. */
    @JCStressTest
    @JCStressMeta(HotSwitchVsRelease.class)
    @State
    public static class Compact extends Race {
        /** A cached pair, cold, with one reference held. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** A contended hit's switch to hot mode. */
        @Actor
        public void switcher(IIII_Result r) {
            switchOver();
        }

        /** The holder releases its reference. */
        @Actor
        public void holder(IIII_Result r) {
            release(r);
        }

        /** Checks the mode, that the reference is gone exactly once, and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }
}
