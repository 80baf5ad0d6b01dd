package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.filler;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;
import org.mbcache.testing.Backend;

/**
 * A lookup vs a chain shift (hits without the bucket lock). A lookup that reads a chain
 * optimistically, validated by the bucket's version, races a removal that moves every newer entry one
 * place: a scan that reads some slots before the move and some after can step over an entry that was
 * there all along. Validation must catch that, so a present pair is never missed.
 *
 * <p>One bucket ({@code bucketBits} 0), oldest first: O = (a neighbour key, {@code OTHER_VALUE}), then
 * the pair under test P = ({@code KEY}, {@code VALUE}), then four fillers newer than P (see
 * {@link PairLookupRace} for the neighbours' key on each backend). One actor deletes O, which shifts P
 * and every filler; the other looks P up by {@code get} and by {@code findFirst}.
 *
 * <p>In the compact layout nothing moves in a bucket's line: a removal rewrites the header's order
 * list (P's place in it shifts), which a reader reads in one load with the version ({@link Compact}:
 * the whole chain in the line). A chain longer than its line keeps its pool entries in a record
 * of the bucket's, where a removal does shift every newer pool slot one place down, and the
 * interleave of pool and home positions with them: {@link CompactRecordShift} fills the line with
 * seven fillers first, so that O, P and three more fillers are pool entries, and the reader, whose
 * key the header's pool filter lets through, walks the record while O's removal shifts P and the
 * fillers down.
 *
 * <p>Result: {@code r1} = {@code get} found P (1) or not (0); {@code r2} = {@code findFirst} returned P
 * (1), nothing (0) or another entry (-1); {@code r3} = {@code deleteOrGet} of O (of the newest filler
 * handed it back (1) or deleted it (0); {@code r4} = {@code size()} once everything is released (5; 11 in
 * {@link CompactRecordShift}), or -99 if the cache refused a release.
 */
@Outcome(id = "1, 1, 0, 5", expect = ACCEPTABLE, desc = "P found by both lookups, whenever the shift happened.")
@Outcome(id = "0, [-0-9]+, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "get missed P while a removal shifted the chain.")
@Outcome(id = "[-0-9]+, 0, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "findFirst missed P while a removal shifted the chain.")
@Outcome(expect = FORBIDDEN, desc = "A wrong entry, a lost entry, or a wrong count.")
public final class LookupVsChainShift {

    /** Fillers before O in {@link CompactRecordShift}: they fill the line's seven home slots. */
    private static final int LINE_FILLERS = 7;

    /** Fillers after P in {@link CompactRecordShift}, in pool slots as O and P are. */
    private static final int POOL_FILLERS = 3;

    private LookupVsChainShift() {
    }

    /** The steps of the race: O, P and the fillers are cached, and nobody holds any of them. */
    abstract static class Race extends PairLookupRace {
        /** O, P and four fillers, in a one-bucket cache of the backend. */
        Race(Backend backend) {
            this(backend, 4);
        }

        /** O, P and {@code fillers} fillers, in a one-bucket cache of the backend. */
        Race(Backend backend, int fillers) {
            this(backend, 0, fillers);
        }

        /** {@code first} fillers, O, P and {@code fillers} fillers, in a one-bucket cache of the backend. */
        Race(Backend backend, int first, int fillers) {
            super(backend);
            createShiftedChain(first, fillers);
        }

        void shift(IIII_Result r) {
            r.r3 = removeOldest();
        }

    }

    /** The race on the kernel port: one bucket chain, shifted in place by the removal. */
    @JCStressTest
    @JCStressMeta(LookupVsChainShift.class)
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

        /** Looks P up by its pair, then by its key. */
        @Actor
        public void reader(IIII_Result r) {
            lookUp(r);
        }

        /** Releases what the reader holds, counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The race on the kernel port in the compact layout (slots in primitive pages, a clock for reclaim). */
    @JCStressTest
    @JCStressMeta(LookupVsChainShift.class)
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

        /** Looks P up by its pair, then by its key. */
        @Actor
        public void reader(IIII_Result r) {
            lookUp(r);
        }

        /** Releases what the reader holds, counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /**
     * The compact layout's removal inside a chain's record: seven fillers in the line, then O, P and
     * three fillers in pool slots; O's removal shifts P and the newer fillers one place down in the
     * record the reader walks.
     */
    @JCStressTest
    @Outcome(id = "1, 1, 0, 11", expect = ACCEPTABLE, desc = "P found by both lookups, whenever the record shifted.")
    @Outcome(id = "0, [-0-9]+, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "get missed P while O's removal shifted the chain's record.")
    @Outcome(id = "[-0-9]+, 0, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "findFirst missed P while O's removal shifted the chain's record.")
    @Outcome(expect = FORBIDDEN, desc = "A wrong entry, a lost entry, or a wrong count.")
    @State
    public static class CompactRecordShift extends Race {
        /** A one-bucket cache: seven fillers in the line, then O, P and three fillers in the pool. */
        public CompactRecordShift() {
            super(Backend.COMPACT, LINE_FILLERS, POOL_FILLERS);
        }

        /** Deletes O: P and the fillers after it move one place down in the chain's record. */
        @Actor
        public void remover(IIII_Result r) {
            shift(r);
        }

        /** Looks P up by its pair, then by its key. */
        @Actor
        public void reader(IIII_Result r) {
            lookUp(r);
        }

        /** Releases what the reader holds, counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The race on the Caffeine backend: the key's group is replaced, copy-on-write, by the removal. */
    @JCStressTest
    @JCStressMeta(LookupVsChainShift.class)
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

        /** Looks P up by its pair, then by its key. */
        @Actor
        public void reader(IIII_Result r) {
            lookUp(r);
        }

        /** Releases what the reader holds, counts the entries and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }
}
