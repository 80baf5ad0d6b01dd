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
 * A lookup vs a chain shift (issue 10: hits without the bucket lock). A lookup that reads a chain
 * optimistically, validated by the bucket's version, races a removal that moves every newer entry one
 * place: a scan that reads some slots before the move and some after can step over an entry that was
 * there all along. Validation must catch that, so a present pair is never missed.
 *
 * <p>One bucket ({@code bucketBits} 0), oldest first: O = (a neighbour key, {@code OTHER_VALUE}), then
 * the pair under test P = ({@code KEY}, {@code VALUE}), then four fillers newer than P (see
 * {@link PairLookupRace} for the neighbours' key on each backend). One actor deletes O, which shifts P
 * and every filler; the other looks P up by {@code get} and by {@code findFirst}.
 *
 * <p>The compact layout's chain is a record of the newest 15 references and an overflow array of the
 * older ones, so a removal can move a reference from one to the other besides the shift inside the
 * record ({@link Compact}). {@link CompactIntoRecord}: O, P and 15 fillers, so O and P are the
 * overflow array's two entries, P its newest; the removal of the newest filler moves the record's
 * other 14 one place up and P from the overflow array into the record's first place, under a reader
 * that walks the record newest first and then reads the overflow array, where P was. (A removal
 * inside the overflow array moves its references down in index order, lowest first, so a reader
 * walking down cannot miss P there even unvalidated on x86; no race is kept for it.)
 *
 * <p>Result: {@code r1} = {@code get} found P (1) or not (0); {@code r2} = {@code findFirst} returned P
 * (1), nothing (0) or another entry (-1); {@code r3} = {@code deleteOrGet} of O (of the newest filler
 * in {@link CompactIntoRecord}) handed it back (1) or deleted it (0); {@code r4} = {@code size()} once everything is released (5; 16 in
 * {@link CompactIntoRecord}), or -99 if the cache refused a release.
 */
@Outcome(id = "1, 1, 0, 5", expect = ACCEPTABLE, desc = "P found by both lookups, whenever the shift happened.")
@Outcome(id = "0, [-0-9]+, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "get missed P while a removal shifted the chain.")
@Outcome(id = "[-0-9]+, 0, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "findFirst missed P while a removal shifted the chain.")
@Outcome(expect = FORBIDDEN, desc = "A wrong entry, a lost entry, or a wrong count.")
public final class LookupVsChainShift {

    /** Fillers after P in {@link CompactIntoRecord}: a chain of 17, O and P in the overflow array. */
    private static final int INTO_RECORD_FILLERS = 15;

    private LookupVsChainShift() {
    }

    /** The steps of the race: O, P and the fillers are cached, and nobody holds any of them. */
    abstract static class Race extends PairLookupRace {
        private final int fillers;

        /** O, P and four fillers, in a one-bucket cache of the backend. */
        Race(Backend backend) {
            this(backend, 4);
        }

        /** O, P and {@code fillers} fillers, in a one-bucket cache of the backend. */
        Race(Backend backend, int fillers) {
            super(backend);
            this.fillers = fillers;
            createShiftedChain(fillers);
        }

        void shift(IIII_Result r) {
            r.r3 = removeOldest();
        }

        /** Deletes the newest filler: the entries older than it, P among them, keep their positions. */
        void removeNewest(IIII_Result r) {
            r.r3 = removeNeighbour(filler(fillers - 1));
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
     * The compact layout's removal from the record of a chain longer than it: O and P, P the newest,
     * are in the overflow array, and the removal of the newest filler moves the record's 14 others
     * one place up and P into the record's first place, emptying P's place in the array.
     */
    @JCStressTest
    @Outcome(id = "1, 1, 0, 16", expect = ACCEPTABLE, desc = "P found by both lookups, whenever it moved into the record.")
    @Outcome(id = "0, [-0-9]+, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "get missed P while it moved from the overflow array into the record.")
    @Outcome(id = "[-0-9]+, 0, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "findFirst missed P while it moved from the overflow array into the record.")
    @Outcome(expect = FORBIDDEN, desc = "A wrong entry, a lost entry, or a wrong count.")
    @State
    public static class CompactIntoRecord extends Race {
        /** A one-bucket cache holding O, P and fifteen fillers: O and P in the overflow array. */
        public CompactIntoRecord() {
            super(Backend.COMPACT, INTO_RECORD_FILLERS);
        }

        /** Deletes the newest filler: P moves from the overflow array into the record. */
        @Actor
        public void remover(IIII_Result r) {
            removeNewest(r);
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
