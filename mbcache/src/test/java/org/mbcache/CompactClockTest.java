package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

/**
 * The compact layout's CLOCK hand on its own ({@link CompactClock}), on a real two-bucket
 * {@link CompactTable} (bucket 0's home slots are 1-7, bucket 1's header is index 8 and its home
 * slots 9-15, index 16 is skipped, the pool starts at 17): the pass's extent, the hand's wrap, a
 * referenced slot's second chance, a held slot kept, headers and free slots {@code EMPTY}, a pool
 * slot claimed in its key's chain, and the look-ahead window.
 */
class CompactClockTest {

    private final CompactTable table = new CompactTable(2, 512, KeyedIndex.seed(7L));
    private final CompactClock clock = new CompactClock(table);
    private int nextKey;

    private int keyIn(int bucket) {
        while (table.bucketOf(nextKey) != bucket) {
            nextKey++;
        }
        return nextKey++;
    }

    /** A live slot of a fresh key of {@code bucket}, hashed as its chain's newest, with {@code callers} callers. */
    private int live(int bucket, int callers, boolean referenced, boolean pool) {
        int key = keyIn(bucket);
        table.lock(bucket);
        try {
            int slot = pool ? table.allocate() : table.freeHomeSlot(bucket);
            long[] page = table.metaPage(slot);
            int at = table.metaIndex(slot);
            table.ensureRoom(bucket, slot);
            CompactSlots.makeLive(table, slot, key, key, true);
            CompactSlots.soMeta(page, at, CompactSlots.lvMeta(page, at) + callers | (referenced ? CompactSlots.REFERENCED : 0));
            table.addNewest(bucket, slot, table.filterMix(key));
            return slot;
        } finally {
            table.unlock(bucket);
        }
    }

    private long meta(int slot) {
        return CompactSlots.lvMeta(table.metaPage(slot), table.metaIndex(slot));
    }

    private int length(int bucket) {
        table.lock(bucket);
        try {
            return table.length(bucket);
        } finally {
            table.unlock(bucket);
        }
    }

    @Test
    void aPassExtendsOverTheLinesAndThePoolHandedOut() {
        assertEquals(16, clock.beginPass());
        live(0, 1, false, true);
        live(0, 1, false, true);
        assertEquals(18, clock.beginPass());
        clock.endPass();
    }

    @Test
    void anUnheldUnreferencedSlotIsFreedAndLeavesItsChain() {
        int slot = live(0, 0, false, false);
        assertEquals(1, slot);
        clock.beginPass();
        assertEquals(ReclaimBooks.Sweep.FREED, clock.step());
        clock.endPass();
        assertEquals(0, CompactSlots.count(meta(slot)));
        assertNotEquals(0, meta(slot) & CompactTable.RESTING, "resting in the delay ring");
        assertEquals(0, length(0));
    }

    @Test
    void aReferencedSlotGetsASecondChanceThenIsFreed() {
        int slot = live(0, 0, true, false);
        clock.beginPass();
        assertEquals(ReclaimBooks.Sweep.SECOND_CHANCE, clock.step());
        assertEquals(0, meta(slot) & CompactSlots.REFERENCED);
        assertEquals(1, length(0));
        for (int next = 2; next <= 16; next++) {
            assertEquals(ReclaimBooks.Sweep.EMPTY, clock.step(), "slot " + next);
        }
        assertEquals(ReclaimBooks.Sweep.FREED, clock.step()); // wrapped back to it
        clock.endPass();
        assertEquals(0, length(0));
    }

    @Test
    void aHeldSlotIsKept() {
        int slot = live(0, 1, false, false);
        clock.beginPass();
        assertEquals(ReclaimBooks.Sweep.KEPT, clock.step());
        clock.endPass();
        assertEquals(2, CompactSlots.count(meta(slot)));
        assertEquals(1, length(0));
    }

    @Test
    void aHeaderIsEmptyToTheHandAndKeepsItsChain() {
        int slot = live(1, 1, false, false);
        assertEquals(9, slot);
        clock.beginPass();
        for (int next = 1; next <= 8; next++) { // bucket 0's free home slots, then bucket 1's header
            assertEquals(ReclaimBooks.Sweep.EMPTY, clock.step(), "slot " + next);
        }
        assertEquals(ReclaimBooks.Sweep.KEPT, clock.step());
        clock.endPass();
        assertEquals(1, length(1), "the header's order list is as it was");
    }

    @Test
    void aPoolSlotIsClaimedInItsKeysChain() {
        int slot = live(1, 0, false, true);
        assertEquals(17, slot);
        clock.beginPass();
        for (int next = 1; next <= 16; next++) {
            assertEquals(ReclaimBooks.Sweep.EMPTY, clock.step(), "slot " + next);
        }
        assertEquals(ReclaimBooks.Sweep.FREED, clock.step());
        clock.endPass();
        assertEquals(0, length(1));
        assertEquals(0, meta(slot) & CompactTable.RESTING, "a pool slot rests in the ring without the flag");
        CompactWalk.checkChains(table);
    }

    @Test
    void theHandWrapsAndStartsWhereThePreviousPassStopped() {
        clock.beginPass();
        clock.step();
        clock.step();
        clock.endPass();
        int end = table.end();
        assertEquals(3, clock.handWithin(end));
        clock.beginPass();
        for (int next = 3; next < end; next++) {
            clock.step();
        }
        assertEquals(1, clock.handWithin(end)); // past the end: slot 1 next
        clock.step();
        assertEquals(2, clock.handWithin(end));
        clock.endPass();
    }

    @Test
    void theLookAheadCoversTheNextSixteenSlotsAndMovesOnWithTheHand() {
        for (int i = 0; i < 20; i++) {
            live(0, 1, false, true); // pool slots 17-23, 25-31, 33-38: the table's end is 39
        }
        clock.beginPass();
        clock.step();
        assertEquals(1, clock.lookAheadFrom());
        assertEquals(1 + CompactClock.LOOKAHEAD, clock.lookAheadTo());
        for (int i = 1; i < CompactClock.LOOKAHEAD; i++) {
            clock.step();
        }
        assertEquals(1, clock.lookAheadFrom()); // still inside the window
        clock.step();
        assertEquals(1 + CompactClock.LOOKAHEAD, clock.lookAheadFrom());
        for (int i = 0; i < CompactClock.LOOKAHEAD; i++) {
            clock.step();
        }
        assertEquals(1 + 2 * CompactClock.LOOKAHEAD, clock.lookAheadFrom());
        assertEquals(table.end(), clock.lookAheadTo()); // cut at the end of the table
        clock.endPass();
        assertEquals(20, length(0), "the look-ahead changed nothing");
    }
}
