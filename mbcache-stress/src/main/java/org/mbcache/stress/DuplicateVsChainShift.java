package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.VALUE;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;
import org.mbcache.testing.Backend;

/**
 * A duplicate create vs a chain shift (duplicates refused without the bucket lock). The
 * kernel port refuses a create whose pair an optimistic read finds in its chain, and takes the bucket
 * bit only if that read cannot say. Its scan races a removal that moves every newer entry one place:
 * a scan that steps over the pair must not conclude anything from that (it falls back to the lock,
 * which refuses too), and a scan that finds it must be validated. Either way the pair is never cached
 * twice.
 *
 * <p>The chain is {@link LookupVsChainShift}'s: O, then the pair P = ({@code KEY}, {@code VALUE}),
 * then four fillers. One actor deletes O; the other creates P again.
 *
 * <p>Result: {@code r1} = the create of P returned {@code true} (1) or {@code false} (0); {@code r2} =
 * {@code deleteOrGet} of O handed it back (1) or deleted it (0); {@code r3} = {@code size()} at the
 * end (5); {@code r4} = P is cached (1) or not (0).
 */
@Outcome(id = "0, 0, 5, 1", expect = ACCEPTABLE, desc = "The duplicate was refused, whenever the shift happened.")
@Outcome(id = "1, [-0-9]+, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "P was cached twice.")
@Outcome(expect = FORBIDDEN, desc = "A lost entry, or a wrong count.")
public final class DuplicateVsChainShift {

    private DuplicateVsChainShift() {
    }

    /** The steps of the race: O, P and the fillers are cached, and nobody holds any of them. */
    abstract static class Race extends PairLookupRace {
        Race(Backend backend) {
            super(backend);
            createShiftedChain();
        }

        void shift(IIII_Result r) {
            r.r2 = removeOldest();
        }

        void createAgain(IIII_Result r) {
            r.r1 = cache.create(KEY, VALUE, true) ? 1 : 0;
        }

        void count(IIII_Result r) {
            r.r3 = size();
            r.r4 = isCached(KEY, VALUE);
            cache.close();
        }
    }

    /** The race on the kernel port: the optimistic duplicate check over a chain shifted in place. */
    @JCStressTest
    @JCStressMeta(DuplicateVsChainShift.class)
    @State
    public static class KernelPort extends Race {
        /** A one-bucket cache holding O, P and the fillers. */
        public KernelPort() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** Deletes O, the oldest entry: every newer one moves. */
        @Actor
        public void remover(IIII_Result r) {
            shift(r);
        }

        /** Creates P, which is cached already. */
        @Actor
        public void creator(IIII_Result r) {
            createAgain(r);
        }

        /** Counts the entries, looks P up and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            count(r);
        }
    }

    /** The race on the kernel port in the compact layout (slots in primitive pages, a clock for reclaim). */
    @JCStressTest
    @JCStressMeta(DuplicateVsChainShift.class)
    @State
    public static class Compact extends Race {
        /** A one-bucket cache holding O, P and the fillers. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** Deletes O, the oldest entry: every newer one moves. */
        @Actor
        public void remover(IIII_Result r) {
            shift(r);
        }

        /** Creates P, which is cached already. */
        @Actor
        public void creator(IIII_Result r) {
            createAgain(r);
        }

        /** Counts the entries, looks P up and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            count(r);
        }
    }

    /** The race on the Caffeine backend: P's group is replaced, copy-on-write, by the removal. */
    @JCStressTest
    @JCStressMeta(DuplicateVsChainShift.class)
    @State
    public static class Caffeine extends Race {
        /** A cache holding O, P and the fillers. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** Deletes O, the oldest entry of P's key. */
        @Actor
        public void remover(IIII_Result r) {
            shift(r);
        }

        /** Creates P, which is cached already. */
        @Actor
        public void creator(IIII_Result r) {
            createAgain(r);
        }

        /** Counts the entries, looks P up and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            count(r);
        }
    }
}
