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
 * Reuse vs release (the contract, section 6.2): one thread takes the cached block for reuse with
 * {@code findFirst} and holds it, while the last sharer of the same block calls {@code deleteOrGet}
 * on the pair. The deleter must get the held entry back instead of deleting it; deleting a held entry
 * let ext4 reuse a freed block and corrupted journals (ext4 fix 65f8b80053a1).
 *
 * <p>Result: {@code r1} = the reuser found the entry (1) or not (0), -1 if it found a wrong one;
 * {@code r2} = {@code deleteOrGet} returned the entry (1) or {@code null} (0); {@code r3} = {@code size()}
 * after both gave their references back, or -99 if the cache refused one (the entry had been freed
 * under its holder).
 */
@Outcome(id = "1, 1, 1", expect = ACCEPTABLE, desc = "Reuser first: deleteOrGet hands the held entry back, nothing is deleted.")
@Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "Deleter first: the entry is gone, the reuser finds nothing.")
@Outcome(id = "1, 0, .*", expect = FORBIDDEN, desc = "deleteOrGet deleted an entry the reuser holds (the journal corruption of 65f8b80053a1).")
@Outcome(expect = FORBIDDEN, desc = "Any other combination breaks reference counting.")
public final class ReuseVsRelease {

    private ReuseVsRelease() {
    }

    /** The steps of the race: the pair is cached and reusable before the actors start. */
    abstract static class Race extends CacheRace {
        CacheEntry reused;
        CacheEntry returned;

        Race(Backend backend) {
            super(backend);
            cache.create(KEY, VALUE, true);
        }

        void reuse(III_Result r) {
            reused = cache.findFirst(KEY);
            r.r1 = reused == null ? 0 : reused.value() == VALUE ? 1 : -1;
        }

        void deleteOrGet(III_Result r) {
            returned = cache.deleteOrGet(KEY, VALUE);
            r.r2 = found(returned);
        }

        void settle(III_Result r) {
            r.r3 = sizeAfterReleasing(reused, returned);
            cache.close();
        }
    }

    /** The race on the kernel port. */
    @JCStressTest
    @JCStressMeta(ReuseVsRelease.class)
    @State
    public static class KernelPort extends Race {
        /** A cache holding the pair. */
        public KernelPort() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** Takes the entry for reuse and keeps holding it. */
        @Actor
        public void reuser(III_Result r) {
            reuse(r);
        }

        /** The last sharer leaves: delete the pair unless someone holds it. */
        @Actor
        public void lastSharer(III_Result r) {
            deleteOrGet(r);
        }

        /** Releases what the actors hold, counts the entries and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on the kernel port in the compact layout (slots in primitive pages, a clock for reclaim). */
    @JCStressTest
    @JCStressMeta(ReuseVsRelease.class)
    @State
    public static class Compact extends Race {
        /** A cache holding the pair. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** Takes the entry for reuse and keeps holding it. */
        @Actor
        public void reuser(III_Result r) {
            reuse(r);
        }

        /** The last sharer leaves: delete the pair unless someone holds it. */
        @Actor
        public void lastSharer(III_Result r) {
            deleteOrGet(r);
        }

        /** Releases what the actors hold, counts the entries and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on the Caffeine backend, where a held entry is pinned and deleteOrGet must see its reference. */
    @JCStressTest
    @JCStressMeta(ReuseVsRelease.class)
    @State
    public static class Caffeine extends Race {
        /** A cache holding the pair. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** Takes the entry for reuse and keeps holding it. */
        @Actor
        public void reuser(III_Result r) {
            reuse(r);
        }

        /** The last sharer leaves: delete the pair unless someone holds it. */
        @Actor
        public void lastSharer(III_Result r) {
            deleteOrGet(r);
        }

        /** Releases what the actors hold, counts the entries and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }
}
