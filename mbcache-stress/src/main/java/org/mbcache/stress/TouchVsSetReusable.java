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
import org.openjdk.jcstress.infra.results.III_Result;
import org.mbcache.testing.Backend;

/**
 * Touch vs setReusable (the contract, section 6.5): one thread touches an entry (sets its referenced flag) while
 * another flips its reusable flag. Both updates must survive: the flags share a word in the kernel, and
 * a non-atomic read-modify-write lost the reusable update and made ext4 loop forever (kernel fix
 * a44e84a9b776, which made the flag updates atomic).
 *
 * <p>The referenced flag is not visible through the API, so the arbiter observes it through reclaim:
 * after the test's reference is released, {@code shrink(1)} frees the entry only if it was not touched.
 * Result: {@code r1} = {@code reusable()} at the end; {@code r2} = entries freed by {@code shrink(1)}
 * (0 = the touch survived); {@code r3} = {@code findFirst} still offers the entry (1) or not (0).
 */
public final class TouchVsSetReusable {

    private TouchVsSetReusable() {
    }

    /** The steps of the race: the pair is cached and the test holds a reference to it. */
    abstract static class Race extends CacheRace {
        final CacheEntry entry;

        Race(Backend backend, boolean initiallyReusable) {
            super(backend);
            cache.create(KEY, VALUE, initiallyReusable);
            entry = cache.get(KEY, VALUE);
        }

        void touch() {
            cache.touch(entry);
        }

        void setReusable(boolean reusable) {
            entry.setReusable(reusable);
        }

        void settle(III_Result r) {
            r.r1 = entry.reusable() ? 1 : 0;
            cache.release(entry);
            r.r2 = (int) cache.shrink(1);
            CacheEntry offered = cache.findFirst(KEY);
            r.r3 = found(offered);
            releaseIfHeld(offered);
            cache.close();
        }
    }

    /** ext4 reaching a block's sharing limit: clear reusable while the block is touched. */
    @JCStressTest
    @Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "Both updates kept: not reusable, and the touch bought a second chance.")
    @Outcome(id = {"1, 0, .*", "1, 1, .*"}, expect = FORBIDDEN, desc = "The cleared reusable flag was lost (a44e84a9b776: ext4 loops forever).")
    @Outcome(id = "0, 1, .*", expect = FORBIDDEN, desc = "The touch was lost: reclaim freed a just-touched entry.")
    @Outcome(expect = FORBIDDEN, desc = "Flags and lookups disagree.")
    @State
    public static class ClearReusable extends Race {
        /** A cache holding a reusable pair, referenced by the test. */
        public ClearReusable() {
            super(Backend.MBCACHE_REQUEST_LIST, true);
        }

        /** Marks the entry recently used. */
        @Actor
        public void toucher() {
            touch();
        }

        /** Clears the reusable flag. */
        @Actor
        public void clearer() {
            setReusable(false);
        }

        /** Reads the flags back (reusable directly, referenced through reclaim) and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** A sharer leaving a full block: set reusable again while the block is touched. */
    @JCStressTest
    @Outcome(id = "1, 0, 1", expect = ACCEPTABLE, desc = "Both updates kept: reusable and offered again, and the touch bought a second chance.")
    @Outcome(id = {"0, 0, .*", "0, 1, .*"}, expect = FORBIDDEN, desc = "The set reusable flag was lost (a44e84a9b776).")
    @Outcome(id = "1, 1, .*", expect = FORBIDDEN, desc = "The touch was lost: reclaim freed a just-touched entry.")
    @Outcome(expect = FORBIDDEN, desc = "Flags and lookups disagree.")
    @State
    public static class SetReusable extends Race {
        /** A cache holding a non-reusable pair, referenced by the test. */
        public SetReusable() {
            super(Backend.MBCACHE_REQUEST_LIST, false);
        }

        /** Marks the entry recently used. */
        @Actor
        public void toucher() {
            touch();
        }

        /** Sets the reusable flag. */
        @Actor
        public void setter() {
            setReusable(true);
        }

        /** Reads the flags back (reusable directly, referenced through reclaim) and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** {@link ClearReusable} on the Caffeine backend, whose flags share one word too. */
    @JCStressTest
    @JCStressMeta(ClearReusable.class)
    @State
    public static class CaffeineClearReusable extends Race {
        /** A cache holding a reusable pair, referenced by the test. */
        public CaffeineClearReusable() {
            super(Backend.CAFFEINE, true);
        }

        /** Marks the entry recently used. */
        @Actor
        public void toucher() {
            touch();
        }

        /** Clears the reusable flag. */
        @Actor
        public void clearer() {
            setReusable(false);
        }

        /** Reads the flags back (reusable directly, referenced through reclaim) and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** {@link SetReusable} on the Caffeine backend, whose flags share one word too. */
    @JCStressTest
    @JCStressMeta(SetReusable.class)
    @State
    public static class CaffeineSetReusable extends Race {
        /** A cache holding a non-reusable pair, referenced by the test. */
        public CaffeineSetReusable() {
            super(Backend.CAFFEINE, false);
        }

        /** Marks the entry recently used. */
        @Actor
        public void toucher() {
            touch();
        }

        /** Sets the reusable flag. */
        @Actor
        public void setter() {
            setReusable(true);
        }

        /** Reads the flags back (reusable directly, referenced through reclaim) and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }
}
