package org.mbcache;

import static org.mbcache.CompactLine.HOME_SLOTS;
import static org.mbcache.CompactLine.LINE_LONGS;

/**
 * The sizes a {@link CompactTable} derives from its buckets and pool slots, static and free of
 * state: the end of its meta space, the longs of its pages, and the bits its delay ring is sized
 * from. {@code CompactTablePagesTest} tests the pages.
 */
final class CompactTableSizes {

    private CompactTableSizes() {}

    /** log2 of the longs a page holds, at most: 256 KiB, below half of G1's smallest region. */
    static final int MAX_PAGE_BITS = 15;
    /** log2 of the longs a page holds, at least: a line never spans two pages. */
    static final int MIN_PAGE_BITS = 6;

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
