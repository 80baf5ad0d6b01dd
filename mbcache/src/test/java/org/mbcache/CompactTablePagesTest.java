package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The pages of a {@link CompactTable}'s meta and value spaces ({@link CompactTableSizes#pageBits}):
 * small enough that the last page of a small table's lines, and each page its pool grows by, add a
 * few percent at most; large enough that the page directories stay small; never larger than
 * 256 KiB.
 */
class CompactTablePagesTest {

    private static final int LINE = CompactLine.LINE_LONGS;

    /** A table's page bits as the constructor computes them. */
    private static int pageBits(int buckets, long poolSlots) {
        CompactTable table = new CompactTable(buckets, poolSlots, KeyedIndex.seed(1L));
        return table.pageBits;
    }

    @Test
    void aSmallTablesPageIsAtMostA32ndOfItsLines() {
        int buckets = 16_667; // a cache sized for 100,000 entries
        int bits = pageBits(buckets, 400_000);
        assertTrue(1 << bits <= buckets * LINE / 32, () -> "2^" + bits + " longs a page");
    }

    @Test
    void aLargeTablesPagesAre256KiB() {
        assertEquals(15, pageBits(1 << 20, 4L << 20));
    }

    @Test
    void aTableWithFewLinesAndALargePoolHas256KiBPages() {
        assertEquals(15, pageBits(1, CompactTable.MAX_POOL_SLOTS));
    }

    @Test
    void aPageDirectoryHasAtMost8192EntriesWherePagesOf256KiBAllowIt() {
        for (int homeSlots = LINE; homeSlots <= 1 << 29; homeSlots <<= 1) {
            for (int slotLimit = homeSlots + LINE; slotLimit > 0 && slotLimit <= 1 << 30; slotLimit <<= 2) {
                int pages = slotLimit >>> CompactTableSizes.pageBits(homeSlots, slotLimit);
                assertTrue(pages <= Math.max(8192, slotLimit >>> 15), () -> pages + " pages");
            }
        }
    }

    @Test
    void noPageIsSmallerThanALineNorLargerThan256KiB() {
        for (int homeSlots = LINE; homeSlots <= 1 << 29; homeSlots <<= 1) {
            for (int slotLimit = homeSlots + LINE; slotLimit > 0 && slotLimit <= 1 << 30; slotLimit <<= 2) {
                int bits = CompactTableSizes.pageBits(homeSlots, slotLimit);
                assertTrue(bits >= CompactTableSizes.MIN_PAGE_BITS && bits <= CompactTableSizes.MAX_PAGE_BITS, () -> "2^" + bits + " longs a page");
            }
        }
    }
}
