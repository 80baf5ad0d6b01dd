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
 * Reclaim vs user (the contract, section 6.3): a reclaim pass runs while a user looks the only entry up and holds
 * it. Reclaim may free the entry only if it claims it (count 1 to 0) before the lookup takes its
 * reference, and then the lookup must miss; it must never free an entry a caller holds (kernel fix
 * 58318914186c).
 *
 * <p>Result: {@code r1} = the user found the entry (1) or not (0); {@code r2} = entries freed by
 * {@code shrink(1)}; {@code r3} = {@code size()} after the user released its reference,
 * or -99 if the cache refused that release (the entry had been freed under the user).
 */
@Outcome(id = "1, 0, 1", expect = ACCEPTABLE, desc = "User first: reclaim skips the held entry, which stays cached.")
@Outcome(id = "0, 1, 0", expect = ACCEPTABLE, desc = "Reclaim first: the entry is freed and the lookup misses it.")
@Outcome(id = "1, 1, .*", expect = FORBIDDEN, desc = "Reclaim freed an entry the user holds (58318914186c).")
@Outcome(expect = FORBIDDEN, desc = "Any other combination breaks reference counting or the entry count.")
public final class ReclaimVsUser {

    private ReclaimVsUser() {
    }

    /** The steps of the race: the pair is cached, unreferenced, and nobody holds it. */
    abstract static class Race extends CacheRace {
        CacheEntry held;

        Race(Backend backend) {
            super(backend);
            cache.create(KEY, VALUE, true);
        }

        void use(III_Result r) {
            held = cache.get(KEY, VALUE);
            r.r1 = found(held);
        }

        void reclaim(III_Result r) {
            r.r2 = (int) cache.shrink(1);
        }

        void settle(III_Result r) {
            r.r3 = sizeAfterReleasing(held);
            cache.close();
        }
    }

    /** The race on the kernel port. */
    @JCStressTest
    @JCStressMeta(ReclaimVsUser.class)
    @State
    public static class KernelPort extends Race {
        /** A cache holding the pair. */
        public KernelPort() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** Looks the pair up and keeps holding it. */
        @Actor
        public void user(III_Result r) {
            use(r);
        }

        /** One reclaim pass over the LRU head. */
        @Actor
        public void shrinker(III_Result r) {
            reclaim(r);
        }

        /** Releases the user's reference, counts the entries and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on the kernel port in the compact layout (slots in primitive pages, a clock for reclaim). */
    @JCStressTest
    @JCStressMeta(ReclaimVsUser.class)
    @State
    public static class Compact extends Race {
        /** A cache holding the pair. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** Looks the pair up and keeps holding it. */
        @Actor
        public void user(III_Result r) {
            use(r);
        }

        /** One reclaim pass over the LRU head. */
        @Actor
        public void shrinker(III_Result r) {
            reclaim(r);
        }

        /** Releases the user's reference, counts the entries and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }

    /** The race on the Caffeine backend, whose shrink walks Caffeine's coldest-first order. */
    @JCStressTest
    @JCStressMeta(ReclaimVsUser.class)
    @State
    public static class Caffeine extends Race {
        /** A cache holding the pair. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** Looks the pair up and keeps holding it. */
        @Actor
        public void user(III_Result r) {
            use(r);
        }

        /** One reclaim pass over the LRU head. */
        @Actor
        public void shrinker(III_Result r) {
            reclaim(r);
        }

        /** Releases the user's reference, counts the entries and closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            settle(r);
        }
    }
}
