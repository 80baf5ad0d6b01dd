package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The compact layout's CLOCK hand on its own ({@link CompactClock}), on a real one-bucket
 * {@link CompactTable}: the pass's extent, the hand's wrap, a referenced slot's second chance, a
 * held slot kept, a free slot {@code EMPTY}, and the look-ahead window.
 */
class CompactClockTest {

    private final CompactTable table = new CompactTable(1, 16, 10, KeyedIndex.seed(7L));
    private final CompactClock clock = new CompactClock(table);

    /** A live slot of a fresh key, hashed as the newest of bucket 0's chain, with {@code references} callers. */
    private int live(int callers, boolean referenced) {
        int slot = table.allocate();
        int key = slot * 0x9E37_79B9;
        long[] page = table.slotPage(slot);
        int at = table.valueIndex(slot);
        long meta = CompactSlots.liveMeta(key, CompactSlots.generation(CompactSlots.lvMeta(page, at)), true)
                + callers | (referenced ? CompactSlots.REFERENCED : 0);
        CompactSlots.soMeta(page, at, meta);
        table.lock(0);
        try {
            table.ensureRoom(0);
            table.addNewest(0, table.fingerprintOf(key) | slot, table.filterMix(key));
        } finally {
            table.unlock(0);
        }
        return slot;
    }

    private long meta(int slot) {
        return CompactSlots.lvMeta(table.slotPage(slot), table.valueIndex(slot));
    }

    @Test
    void aPassExtendsOverTheSlotsHandedOut() {
        assertEquals(0, clock.beginPass());
        for (int i = 0; i < 5; i++) {
            live(1, false);
        }
        assertEquals(5, clock.beginPass());
        clock.endPass();
    }

    @Test
    void anUnheldUnreferencedSlotIsFreedAndLeavesItsChain() {
        int slot = live(0, false);
        clock.beginPass();
        assertEquals(ReclaimBooks.Sweep.FREED, clock.step());
        clock.endPass();
        assertEquals(0, CompactSlots.count(meta(slot)));
        assertEquals(0, table.length(0));
        assertEquals(1, table.freeSlots());
    }

    @Test
    void aReferencedSlotGetsASecondChanceThenIsFreed() {
        int slot = live(0, true);
        clock.beginPass();
        assertEquals(ReclaimBooks.Sweep.SECOND_CHANCE, clock.step());
        assertEquals(0, meta(slot) & CompactSlots.REFERENCED);
        assertEquals(1, table.length(0));
        assertEquals(ReclaimBooks.Sweep.FREED, clock.step()); // wrapped back to it
        clock.endPass();
        assertEquals(0, table.length(0));
    }

    @Test
    void aHeldSlotIsKept() {
        int slot = live(1, false);
        clock.beginPass();
        assertEquals(ReclaimBooks.Sweep.KEPT, clock.step());
        assertEquals(ReclaimBooks.Sweep.KEPT, clock.step());
        clock.endPass();
        assertEquals(2, CompactSlots.count(meta(slot)));
        assertEquals(1, table.length(0));
    }

    @Test
    void aFreeSlotIsEmpty() {
        live(1, false);
        int freed = live(0, false);
        live(1, false);
        clock.beginPass();
        assertEquals(ReclaimBooks.Sweep.KEPT, clock.step());
        assertEquals(ReclaimBooks.Sweep.FREED, clock.step());
        assertEquals(ReclaimBooks.Sweep.KEPT, clock.step());
        assertEquals(ReclaimBooks.Sweep.KEPT, clock.step()); // slot 1 again
        assertEquals(ReclaimBooks.Sweep.EMPTY, clock.step()); // the slot it freed
        clock.endPass();
        assertEquals(0, CompactSlots.count(meta(freed)));
        CompactWalk.checkChains(table);
    }

    @Test
    void theHandWrapsAndStartsWhereThePreviousPassStopped() {
        for (int i = 0; i < 3; i++) {
            live(1, false);
        }
        clock.beginPass();
        clock.step();
        clock.step();
        clock.endPass();
        int end = table.end();
        assertEquals(3, clock.handWithin(end));
        clock.beginPass();
        clock.step(); // slot 3, the last
        assertEquals(1, clock.handWithin(end)); // past the end: slot 1 next
        clock.step();
        assertEquals(2, clock.handWithin(end));
        clock.endPass();
    }

    @Test
    void theLookAheadCoversTheNextSixteenSlotsAndMovesOnWithTheHand() {
        int slots = 2 * CompactClock.LOOKAHEAD + 5;
        for (int i = 0; i < slots; i++) {
            live(1, false);
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
        assertTrue(table.length(0) == slots, "the look-ahead changed nothing");
    }
}
