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
 * A lookup vs a chain that grows (hits without the bucket lock). A lookup that reads a chain
 * optimistically races creates that outgrow the chain's arrays: they are copied into bigger ones and
 * published, and a reader may hold the old arrays, the new ones, or (if the publication is wrong) a mix,
 * such as a new length over an old array, or a key array that is not the entry array's partner. The
 * present pair must be found every time, and nothing may throw.
 *
 * <p>One bucket ({@code bucketBits} 0): the pair under test P = ({@code KEY}, {@code VALUE}) and three
 * fillers fill the chain's first arrays (4 slots in the kernel port's layout). One actor creates six more
 * fillers (so the arrays grow twice: 4 to 6 to 9; see {@link PairLookupRace} for the fillers' key on each
 * backend); the other looks P up by {@code get} and by {@code findFirst}.
 *
 * <p>The compact layout's chain is its bucket's line (seven home slots, their order in the line's
 * header) and, once it outgrows the line, pool slots, named in a record of the bucket's with their
 * places among the home entries. Its variant ({@link Compact}) puts P in the pool: seven fillers
 * fill the line, then P and five more fillers fill a record of six pool entries. The first of the
 * six creates copies the record into a bigger one, while the reader, whose key the header's pool
 * filter lets through, walks the chain newest first down to P. A reader that read the old record,
 * or a count beyond the one it holds, must be caught by its validation. The bigger record is the
 * first of its size class, so that create also allocates and publishes a new record page, and the
 * reader may follow the bucket's new directory entry into a page it has not seen yet (it must find
 * it whole, or find no page and retry under the bucket's bit). A second variant
 * ({@link CompactPageArray}) starts from a record of the smallest class, so that the first create's
 * new page is one the records' page array has no place for: the create copies the array into a
 * bigger one and publishes the copy, and the reader may read the bucket's new directory entry with
 * the old array (it must find no page there and retry), or the new array with the page in it.
 *
 * <p>Result: {@code r1} = {@code get} found P (1) or not (0); {@code r2} = {@code findFirst} returned P
 * (1), nothing (0) or another entry (-1); {@code r3} = creates that inserted (6); {@code r4} =
 * {@code size()} once everything is released (10; 19 on the compact layout), or -99 if the cache refused a
 * release.
 */
@Outcome(id = "1, 1, 6, 10", expect = ACCEPTABLE, desc = "P found by both lookups while the chain grew.")
@Outcome(id = "0, [-0-9]+, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "get missed P while the chain's arrays grew.")
@Outcome(id = "[-0-9]+, 0, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "findFirst missed P while the chain's arrays grew.")
@Outcome(expect = FORBIDDEN, desc = "A wrong entry, a lost create, or a wrong count.")
public final class LookupVsChainGrow {

    /** Fillers created before the race: with P, they fill the chain's first arrays. */
    private static final int BEFORE = 3;

    /** Fillers created before the compact layout's P: they fill its line's home slots. */
    private static final int FIRST_COMPACT = 7;

    /** Fillers created before the compact layout's race: with P, they fill the line and a record of six pool entries. */
    private static final int BEFORE_COMPACT = 12;

    /** Fillers created before the compact page-array race: with P, they fill the line and a record of two pool entries (the smallest class). */
    private static final int BEFORE_COMPACT_PAGE_ARRAY = 8;

    /** Fillers created during the race. */
    private static final int DURING = 6;

    private LookupVsChainGrow() {
    }

    /** The steps of the race: P and the fillers before are cached, and nobody holds any of them. */
    abstract static class Race extends PairLookupRace {
        private final int before;

        /** Caches P, then {@code before} fillers after it, in a one-bucket cache of the backend. */
        Race(Backend backend, int before) {
            this(backend, 0, before);
        }

        /** Caches {@code first} fillers, P, then fillers up to {@code before} in all, in a one-bucket cache of the backend. */
        Race(Backend backend, int first, int before) {
            super(backend);
            this.before = before;
            for (int i = 0; i < first; i++) {
                createFiller(i);
            }
            cache.create(KEY, VALUE, true);
            for (int i = first; i < before; i++) {
                createFiller(i);
            }
        }

        void grow(IIII_Result r) {
            int inserted = 0;
            for (int i = before; i < before + DURING; i++) {
                if (createFiller(i)) {
                    inserted++;
                }
            }
            r.r3 = inserted;
        }
    }

    /** The race on the kernel port with the request list (the default create). */
    @JCStressTest
    @JCStressMeta(LookupVsChainGrow.class)
    @State
    public static class KernelPort extends Race {
        /** A one-bucket cache holding P and three fillers. */
        public KernelPort() {
            super(Backend.MBCACHE_REQUEST_LIST, BEFORE);
        }

        /** Creates six fillers in P's bucket. */
        @Actor
        public void creator(IIII_Result r) {
            grow(r);
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
     * The race on the kernel port in the compact layout (lines of home slots, a pool, a clock for
     * reclaim), P in a pool slot and the chain's record full: the first create replaces the record.
     */
    @JCStressTest
    @Outcome(id = "1, 1, 6, 19", expect = ACCEPTABLE, desc = "P found by both lookups while the chain's record grew.")
    @Outcome(id = "0, [-0-9]+, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "get missed P while the chain's record grew.")
    @Outcome(id = "[-0-9]+, 0, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "findFirst missed P while the chain's record grew.")
    @Outcome(expect = FORBIDDEN, desc = "A wrong entry, a lost create, or a wrong count.")
    @State
    public static class Compact extends Race {
        /** A one-bucket cache: seven fillers in the line, then P and five fillers in the pool. */
        public Compact() {
            super(Backend.COMPACT, FIRST_COMPACT, BEFORE_COMPACT);
        }

        /** Creates six fillers in P's bucket: the first copies the chain's record into a bigger one. */
        @Actor
        public void creator(IIII_Result r) {
            grow(r);
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
     * The race on the compact layout, P in a pool slot and the chain's record of the smallest class
     * full: the first create moves the chain into a record of the next class, whose first page
     * needs a place the records' page array does not have, so it grows the array too.
     */
    @JCStressTest
    @Outcome(id = "1, 1, 6, 15", expect = ACCEPTABLE, desc = "P found by both lookups while the record pages' array grew.")
    @Outcome(id = "0, [-0-9]+, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "get missed P while the record pages' array grew.")
    @Outcome(id = "[-0-9]+, 0, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "findFirst missed P while the record pages' array grew.")
    @Outcome(expect = FORBIDDEN, desc = "A wrong entry, a lost create, or a wrong count.")
    @State
    public static class CompactPageArray extends Race {
        /** A one-bucket cache: seven fillers in the line, then P and one filler in the pool. */
        public CompactPageArray() {
            super(Backend.COMPACT, FIRST_COMPACT, BEFORE_COMPACT_PAGE_ARRAY);
        }

        /** Creates six fillers in P's bucket: the first copies the chain's record onto a new page, growing the page array. */
        @Actor
        public void creator(IIII_Result r) {
            grow(r);
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

    /** The race on the kernel port with mainline's allocate-first create. */
    @JCStressTest
    @JCStressMeta(LookupVsChainGrow.class)
    @State
    public static class AllocateFirst extends Race {
        /** A one-bucket cache holding P and three fillers. */
        public AllocateFirst() {
            super(Backend.MBCACHE_ALLOCATE_FIRST, BEFORE);
        }

        /** Creates six fillers in P's bucket. */
        @Actor
        public void creator(IIII_Result r) {
            grow(r);
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

    /** The race on the Caffeine backend: P's group grows, copy-on-write. */
    @JCStressTest
    @JCStressMeta(LookupVsChainGrow.class)
    @State
    public static class Caffeine extends Race {
        /** A cache holding P and three fillers. */
        public Caffeine() {
            super(Backend.CAFFEINE, BEFORE);
        }

        /** Creates six fillers under P's key. */
        @Actor
        public void creator(IIII_Result r) {
            grow(r);
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
