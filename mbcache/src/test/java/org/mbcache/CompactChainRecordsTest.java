package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link CompactChainRecords} on its own: a record holds a chain's pool entries and the interleave
 * that merges them with the order list's home entries, across records of every size a chain grows
 * through, and records are allocated, replaced, reused and refused as their class comment says.
 */
class CompactChainRecordsTest {

    /** A bucket's chain as the test drives it: the order list the header would hold, and the model, oldest first. */
    private static final class Chain {
        final int bucket;
        int order;
        boolean overflowed;
        final List<Integer> slots = new ArrayList<>();
        final List<Boolean> pool = new ArrayList<>();

        Chain(int bucket) {
            this.bucket = bucket;
        }

        int poolCount() {
            int n = 0;
            for (boolean p : pool) {
                n += p ? 1 : 0;
            }
            return n;
        }

        int homeCount() {
            return CompactLine.lineLength(order);
        }
    }

    private static int nextPoolSlot = 1 << 20;

    private static void addPool(CompactChainRecords records, Chain chain) {
        int slot = nextPoolSlot++;
        int length = chain.slots.size();
        records.reserve(chain.bucket, chain.overflowed ? chain.poolCount() : 0, length);
        records.addPool(chain.bucket, chain.overflowed, length, slot);
        chain.overflowed = true;
        chain.slots.add(slot);
        chain.pool.add(true);
    }

    private static void addHome(CompactChainRecords records, Chain chain) {
        int used = CompactLine.positionsIn(chain.order);
        int position = Integer.numberOfTrailingZeros(~used & 0xFE);
        if (chain.overflowed) {
            records.addHome(chain.bucket, chain.slots.size());
        }
        chain.order = chain.order << 3 | position;
        chain.slots.add(CompactLine.homeSlot(chain.bucket, position));
        chain.pool.add(false);
    }

    private static void remove(CompactChainRecords records, Chain chain, int pos) {
        int slot = chain.slots.get(pos);
        if (chain.overflowed) {
            assertEquals(slot, records.slotAt(chain.bucket, chain.order, pos));
            assertEquals(chain.pool.get(pos), records.removeAt(chain.bucket, chain.slots.size(), pos));
        }
        if (!chain.pool.get(pos)) {
            chain.order = CompactLine.withoutPosition(chain.order, slot & 7);
        }
        chain.slots.remove(pos);
        chain.pool.remove(pos);
        chain.overflowed = chain.overflowed && chain.poolCount() > 0;
    }

    private static void assertHolds(CompactChainRecords records, Chain chain, String where) {
        if (!chain.overflowed) {
            return;
        }
        assertEquals(chain.poolCount(), records.poolCount(chain.bucket), where);
        for (int pos = 0; pos < chain.slots.size(); pos++) {
            assertEquals(chain.slots.get(pos), records.slotAt(chain.bucket, chain.order, pos), where + " position " + pos);
        }
    }

    @Test
    void chainsGrowingAndShrinkingThroughEveryRecordSizeMergeBackToTheirModels() {
        SplittableRandom random = new SplittableRandom(11);
        CompactChainRecords records = new CompactChainRecords(3);
        Chain[] chains = {new Chain(0), new Chain(1), new Chain(2)};
        int longest = 0;
        for (int step = 0; step < 40_000; step++) {
            Chain chain = chains[random.nextInt(chains.length)];
            int length = chain.slots.size();
            int op = random.nextInt(100);
            int growUntil = step % 10_000 < 5_000 ? 70 : 45; // phases that grow and shrink the chains
            if (op < growUntil) {
                if (chain.homeCount() < CompactLine.HOME_SLOTS && random.nextInt(4) == 0) {
                    addHome(records, chain);
                } else {
                    addPool(records, chain);
                }
            } else if (length > 0) {
                remove(records, chain, random.nextBoolean() ? 0 : random.nextInt(length));
            }
            longest = Math.max(longest, chain.slots.size());
            assertHolds(records, chain, "step " + step);
        }
        assertTrue(longest > 200, "the chains spanned several interleave words: " + longest);
    }

    @Test
    void aChainOfSevenHomeAndTwoPoolEntriesTakesTheSmallestRecord() {
        CompactChainRecords records = new CompactChainRecords(1);
        Chain chain = new Chain(0);
        for (int i = 0; i < CompactLine.HOME_SLOTS; i++) {
            addHome(records, chain);
        }
        addPool(records, chain);
        addPool(records, chain);
        int[] page = records.laPage(records.lpEntry(0));
        assertEquals(0, CompactChainRecords.classOf(page));
        assertEquals(16, 4 * CompactChainRecords.capacityOf(page), "bytes");
        assertHolds(records, chain, "7 + 2");
    }

    @Test
    void aReplacedRecordIsReusedByTheNextChainThatNeedsItsClass() {
        CompactChainRecords records = new CompactChainRecords(2);
        Chain first = new Chain(0);
        addPool(records, first);
        int small = records.lpEntry(0);
        for (int i = 0; i < CompactChainRecords.refCapacity(CompactChainRecords.capacity(0)); i++) {
            addPool(records, first);
        }
        assertNotEquals(small, records.lpEntry(0), "grown into a larger record");
        Chain second = new Chain(1);
        addPool(records, second);
        assertEquals(small, records.lpEntry(1));
        assertHolds(records, first, "first");
        assertHolds(records, second, "second");
    }

    @Test
    void aRecordTheTablesPagesCannotHoldIsRefusedAndNothingChanges() {
        CompactChainRecords records = new CompactChainRecords(4, 64, 3); // pages 1 and 2, a class each
        Chain small = new Chain(0);
        addPool(records, small); // class 0: page 1
        Chain larger = new Chain(1);
        for (int i = 0; i < CompactChainRecords.refCapacity(CompactChainRecords.capacity(1)); i++) {
            addPool(records, larger); // class 1 from the third: page 2
        }
        int entry = records.lpEntry(1);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> records.reserve(1, larger.poolCount(), larger.slots.size())); // class 2: a third page
        assertTrue(e.getMessage().contains("exhausted"), e.getMessage());
        assertEquals(entry, records.lpEntry(1));
        assertHolds(records, small, "small");
        assertHolds(records, larger, "larger");
    }

    @Test
    void aClassesPagesStartAtSixteenRecordsAndDoubleUpToFourThousandAndNinetySix() {
        CompactChainRecords records = new CompactChainRecords(1 << 20);
        long footprint = records.footprintBytes() - pageArrayBytes(records);
        int bucket = 0;
        for (int pageRecords = 16; pageRecords <= 4096; pageRecords *= 2) {
            for (int i = 0; i < pageRecords; i++) {
                records.reserve(bucket++, 0, CompactLine.HOME_SLOTS);
            }
            footprint += 16 + 4 * (CompactChainRecords.PAGE_HEADER + pageRecords * CompactChainRecords.capacity(0));
            assertEquals(footprint, records.footprintBytes() - pageArrayBytes(records), "pages up to " + pageRecords);
        }
        records.reserve(bucket, 0, CompactLine.HOME_SLOTS);
        footprint += 16 + 4 * (CompactChainRecords.PAGE_HEADER + 4096 * CompactChainRecords.capacity(0));
        assertEquals(footprint, records.footprintBytes() - pageArrayBytes(records), "no page beyond 4,096 records");
    }

    /** The bytes of the page array (it grows as pages are added). */
    private static long pageArrayBytes(CompactChainRecords records) {
        return 4L * records.pageSlots();
    }

    @Test
    void theLargestTablesPagesHoldARecordOfEachOfTheFiveSmallestClassesForEveryBucket() {
        long pages = 0;
        for (int c = 0; c < 5; c++) { // up to 124 pool entries a chain, each bucket's records of smaller classes freed
            long perPage = Math.min(4096, (1 << 16) / CompactChainRecords.capacity(c));
            pages += 9 + (CompactTable.MAX_BUCKETS + perPage - 1) / perPage; // 9: the first pages, 16 to 4,096 records
        }
        assertTrue(pages < CompactChainRecords.MAX_PAGES, pages + " pages");
    }

    @Test
    void theFirstRecordOfASecondClassGrowsThePageArrayAndEveryRecordStaysReachable() {
        CompactChainRecords records = new CompactChainRecords(2);
        assertEquals(2, records.pageSlots(), "room for the first page only");
        Chain small = new Chain(0);
        addPool(records, small); // class 0: page 1
        assertEquals(2, records.pageSlots());
        Chain larger = new Chain(1);
        for (int i = 0; i <= CompactChainRecords.refCapacity(CompactChainRecords.capacity(0)); i++) {
            addPool(records, larger); // class 1 from the third: page 2, beyond the array
        }
        assertEquals(4, records.pageSlots(), "grown by doubling");
        assertEquals(1, records.lpEntry(0) >>> 12);
        assertEquals(2, records.lpEntry(1) >>> 12);
        assertHolds(records, small, "small, on the page the copied array carries over");
        assertHolds(records, larger, "larger, on the page published with the copy");
    }

    @Test
    void aChainBeyondTheLargestRecordIsRefused() {
        CompactChainRecords records = new CompactChainRecords(1);
        assertThrows(IllegalStateException.class, () -> records.reserve(0, Integer.MAX_VALUE - 1, Integer.MAX_VALUE));
        assertEquals(0, records.lpEntry(0));
    }

    @Test
    void theLayoutHasRoomForSevenHomePositionsBesideEveryPoolEntry() {
        for (int c = 0; c <= CompactChainRecords.MAX_CLASS; c++) {
            int capacity = CompactChainRecords.capacity(c);
            int words = CompactChainRecords.maskWords(capacity);
            assertTrue(32L * words >= CompactChainRecords.refCapacity(capacity) + CompactLine.HOME_SLOTS, "class " + c);
            assertEquals(capacity, CompactChainRecords.refBase(capacity) + CompactChainRecords.refCapacity(capacity));
            assertTrue(CompactChainRecords.refCapacity(capacity) > 0, "class " + c);
        }
    }
}
