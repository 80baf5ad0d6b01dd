package org.mbcache;

import static org.mbcache.CompactLine.HOME_SLOTS;
import static org.mbcache.CompactLine.LINE_LONGS;

/**
 * The sizes of a {@link CompactMbCache}'s table, static and free of state: the buckets a cache
 * sized from its bound gets, its pool slots, and what a {@link CompactTable} derives from those
 * (the end of its meta space, the longs of its pages, the bits its delay ring is sized from).
 * {@code CompactTablePagesTest} tests the pages.
 */
final class CompactTableSizes {

    private CompactTableSizes() {}

    /** log2 of the longs a page holds, at most: 256 KiB, below half of G1's smallest region. */
    static final int MAX_PAGE_BITS = 15;
    /** log2 of the longs a page holds, at least: a line never spans two pages. */
    static final int MIN_PAGE_BITS = 6;

    /** The fewest pool slots a table has. */
    private static final long MIN_POOL_SLOTS = 512;
    /**
     * Entries a bucket at the bound of a cache sized from {@code maxEntries}: six of a line's seven
     * home slots on average, so that about one chain in four has pool entries.
     */
    static final int SIZED_ENTRIES_PER_BUCKET = 6;

    /**
     * The bucket count of a cache sized from its bound: {@value #SIZED_ENTRIES_PER_BUCKET} entries a
     * bucket at the bound, whatever the size (a bucket count need not be a power of two), at least
     * 1 and at most 2^26.
     */
    static long defaultBuckets(long maxEntries) {
        long buckets = maxEntries / SIZED_ENTRIES_PER_BUCKET + (maxEntries % SIZED_ENTRIES_PER_BUCKET == 0 ? 0 : 1);
        return Math.max(1, Math.min(CompactTable.MAX_BUCKETS, buckets));
    }

    /**
     * {@code buckets}, checked before anything is built: a count in {@code [1, 2^26]} whose bucket
     * lines and home values ({@value CompactTable#BUCKET_BYTES} bytes a bucket before any entry) fit the heap.
     *
     * @throws IllegalArgumentException if not
     */
    static long checkedBuckets(long buckets) {
        if (buckets < 1 || buckets > CompactTable.MAX_BUCKETS) {
            throw new IllegalArgumentException("a CompactMbCache has 1 to 2^26 buckets, was " + buckets);
        }
        KernelPortOptions.requireHeapFor(buckets, CompactTable.BUCKET_BYTES, "a CompactMbCache");
        return buckets;
    }

    /**
     * The pool slots of a table of {@code buckets} buckets bounded at {@code maxEntries}:
     * {@code 4 * maxEntries}, at least 512, and at least twice its delay ring's places. A freed slot
     * waits in the ring for a ring's length of further frees only while the free list has slots to
     * hand out meanwhile; with fewer, every create would drain the ring, and a key created and
     * deleted in turn would cycle through the pool's few slots, wrapping a kept handle's generation
     * that many times sooner (a table of many buckets and a small bound: 2^14 buckets and a
     * {@code maxEntries} of 100 have a ring of 8192 places). The pool's pages are allocated as it
     * grows, so the capacity costs nothing until used.
     */
    static long poolSlots(int buckets, long maxEntries) {
        long pool = Math.max(MIN_POOL_SLOTS, Math.min(CompactTable.MAX_POOL_SLOTS, 4 * Math.min(maxEntries, 1L << 30)));
        while (pool < 2L * ringSizeFor(buckets, pool)) {
            pool *= 2; // the ring grows with the meta space, to at most 8192 places: this ends
        }
        return pool;
    }

    /** The meta space of a table: its home slots' lines, then the pool's, every eighth index skipped. */
    static int slotLimit(int buckets, long poolSlots) {
        long poolRange = (poolSlots + HOME_SLOTS - 1) / HOME_SLOTS * LINE_LONGS;
        return (int) ((long) buckets * LINE_LONGS + poolRange); // below 2^29 + 2^30 * 8/7 + 8
    }

    /**
     * log2 of a page's longs in a table of {@code homeSlots} line indices and a meta space of
     * {@code slotLimit}: a 32nd of the lines at most, so that a page allocated as the pool grows, and
     * the last page of the lines and of their values, adds a few percent to a small table's memory
     * at most; but at least an 8192nd of the meta space, so that a page directory has at most 8192
     * entries (or what pages of 256 KiB need); within {@code [MIN_PAGE_BITS, MAX_PAGE_BITS]}.
     */
    static int pageBits(int homeSlots, int slotLimit) {
        int bits = Math.max(bitsOf(homeSlots) - 6, bitsOf(slotLimit) - 13);
        return Math.max(MIN_PAGE_BITS, Math.min(MAX_PAGE_BITS, bits));
    }

    /** The bits of a meta space of {@code slotLimit} indices, as the delay ring is sized from ({@link CompactDelayRing#sizeFor}). */
    static int ringBits(int slotLimit) {
        return Math.max(12, bitsOf(slotLimit - 1));
    }

    /** The delay ring's length in a table of {@code buckets} buckets and {@code poolSlots} pool slots. */
    static int ringSizeFor(int buckets, long poolSlots) {
        return CompactDelayRing.sizeFor(ringBits(slotLimit(buckets, poolSlots)));
    }

    /** The bits of {@code n}: 1 + floor(log2 n), 0 for 0. */
    private static int bitsOf(int n) {
        return 32 - Integer.numberOfLeadingZeros(n);
    }
}
