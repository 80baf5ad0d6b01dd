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
import org.openjdk.jcstress.infra.results.II_Result;
import org.mbcache.testing.Backend;

/**
 * The switch of a held entry to hot mode vs {@code close()} (both kernel-port layouts). The switch
 * publishes the entry's cells in the cache's cell table (taking a place of the hot budget) before
 * the CAS that sets the hot bit; the close zeroes the count and retires the cells only of a word
 * that had the bit. A close between the two finds the word cold, and the switch, whose CAS then fails
 * and re-reads a dead word, retires its cells itself: whichever comes first, no place stays taken.
 *
 * <p>Result: {@code r1} = the switch's outcome as the test hook reports it (1: hot; the kernel port
 * reports the bit, which a close keeps, the compact layout a live hot slot); {@code r2} = the places
 * of the cache's cell table still taken once both are done.
 */
@Outcome(id = {"0, 0", "1, 0"}, expect = ACCEPTABLE, desc = "Switched before the close or not at all; every place given back.")
@Outcome(expect = FORBIDDEN, desc = "A place of the hot budget left taken by a closed cache.")
public final class HotSwitchVsClose {

    private HotSwitchVsClose() {
    }

    /** The steps of the race: a cached pair, cold, with one reference held. */
    abstract static class Race extends CacheRace {
        final CacheEntry held;

        Race(Backend backend) {
            super(backend);
            cache.create(KEY, VALUE, true);
            held = cache.get(KEY, VALUE);
        }

        void switchOver(II_Result r) {
            r.r1 = HotEntries.makeHot(held) ? 1 : 0;
        }

        void close() {
            cache.close();
        }

        void settle(II_Result r) {
            r.r2 = HotEntries.hotEntries(cache);
        }
    }

    /** The race on the kernel port's entries. */
    @JCStressTest
    @JCStressMeta(HotSwitchVsClose.class)
    @State
    public static class KernelPort extends Race {
        /** A cached pair, cold, with one reference held. */
        public KernelPort() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** A contended hit's switch to hot mode. */
        @Actor
        public void switcher(II_Result r) {
            switchOver(r);
        }

        /** Closes the cache. */
        @Actor
        public void closer(II_Result r) {
            close();
        }

        /** Counts the places left taken. */
        @Arbiter
        public void check(II_Result r) {
            settle(r);
        }
    }

    /** The race on a slot of the compact layout. */
    @JCStressTest
    @JCStressMeta(HotSwitchVsClose.class)
    @State
    public static class Compact extends Race {
        /** A cached pair, cold, with one reference held. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** A contended hit's switch to hot mode. */
        @Actor
        public void switcher(II_Result r) {
            switchOver(r);
        }

        /** Closes the cache. */
        @Actor
        public void closer(II_Result r) {
            close();
        }

        /** Counts the places left taken. */
        @Arbiter
        public void check(II_Result r) {
            settle(r);
        }
    }
}
