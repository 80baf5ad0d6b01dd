package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The compact layout's CLOCK hand on its own ({@link CompactClock}), on a real two-bucket
 * {@link CompactTable} (bucket 0's home slots are 1-7, bucket 1's header is index 8 and its home
 * slots 9-15, index 16 is skipped, the pool starts at 17): the pass's extent, the hands' wrap, a
 * referenced slot's second chance, a held slot kept, headers and free slots {@code EMPTY}, a pool
 * slot claimed in its key's chain, and the look-ahead windows. The lines' region is 15 indices,
 * the pool's {@code end - 16}, interleaved by {@link CompactSweepOrder}.
 */
class CompactClockTest {

    private final CompactTable table = new CompactTable(2, 512, KeyedIndex.seed(7L));
    private final CompactClock clock = new CompactClock(table, true);
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
            CompactSlots.makeLive(table, slot, key, key, true,
                    CompactPoolTwins.twinOfNewEntry(table, bucket, slot, key, table.filterMix(key)));
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

    private int freeHomeSlot(int bucket) {
        table.lock(bucket);
        try {
            return table.freeHomeSlot(bucket);
        } finally {
            table.unlock(bucket);
        }
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
        assertEquals(0, length(0));
    }

    @Test
    void aFreedHomeSlotTheInPlaceClockAllowsGoesStraightBackToItsBucket() {
        int slot = live(0, 0, false, false);
        int generation = CompactSlots.generation(meta(slot));
        clock.beginPass();
        assertEquals(ReclaimBooks.Sweep.FREED, clock.step());
        clock.endPass();
        assertEquals(generation + 1, CompactSlots.generation(meta(slot)));
        assertEquals(0, meta(slot) & CompactTable.RESTING, "not resting in the delay ring");
        assertEquals(slot, freeHomeSlot(0), "its bucket's next create may take it");
    }

    @Test
    void aFreedHomeSlotAtTheLastGenerationOfItsEpochRestsInTheDelayRing() {
        int slot = live(0, 0, false, false);
        long[] page = table.metaPage(slot);
        int at = table.metaIndex(slot);
        long lastOfEpochZero = CompactDelayRing.EPOCH_GENERATIONS - 1;
        CompactSlots.soMeta(page, at, CompactSlots.lvMeta(page, at)
                & ~((long) CompactSlots.GENERATION_MASK << CompactSlots.GENERATION_SHIFT)
                | lastOfEpochZero << CompactSlots.GENERATION_SHIFT);
        clock.beginPass();
        assertEquals(ReclaimBooks.Sweep.FREED, clock.step());
        clock.endPass();
        assertEquals(lastOfEpochZero + 1, CompactSlots.generation(meta(slot)));
        assertNotEquals(0, meta(slot) & CompactTable.RESTING, "resting in the delay ring");
        assertEquals(2, freeHomeSlot(0), "its bucket's creates pass it over");
    }

    @Test
    void theClockOfATableWithoutLineReclaimRestsEveryHomeSlotItFreesInTheDelayRing() {
        CompactClock ringOnly = new CompactClock(table, false);
        int slot = live(0, 0, false, false);
        ringOnly.beginPass();
        assertEquals(ReclaimBooks.Sweep.FREED, ringOnly.step());
        ringOnly.endPass();
        assertNotEquals(0, meta(slot) & CompactTable.RESTING, "resting in the delay ring");
        assertEquals(2, freeHomeSlot(0), "its bucket's creates pass it over");
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
        for (int i = 0; i < 9; i++) { // slot 1, the pool's index 16 (skipped), slots 2-7, bucket 1's header
            assertEquals(ReclaimBooks.Sweep.EMPTY, clock.step(), "step " + i);
        }
        assertEquals(ReclaimBooks.Sweep.KEPT, clock.step());
        clock.endPass();
        assertEquals(1, length(1), "the header's order list is as it was");
    }

    @Test
    void aPoolSlotIsClaimedInItsKeysChain() {
        int slot = live(1, 0, false, true);
        assertEquals(17, slot);
        int freed = 0;
        for (long step = clock.beginPass(); step > 0; step--) { // one turn: every index once
            int outcome = clock.step();
            freed += outcome == ReclaimBooks.Sweep.FREED ? 1 : 0;
            assertTrue(outcome == ReclaimBooks.Sweep.EMPTY || outcome == ReclaimBooks.Sweep.FREED);
        }
        clock.endPass();
        assertEquals(1, freed);
        assertEquals(0, length(1));
        assertEquals(0, meta(slot) & CompactTable.RESTING, "a pool slot rests in the ring without the flag");
        CompactWalk.checkChains(table);
    }

    @Test
    void theHandsWrapAndAPassStartsWhereThePreviousOneStopped() {
        clock.beginPass();
        clock.step(); // slot 1
        clock.step(); // the pool's first index, 16: the pool region is one index long, and its share is due
        clock.endPass();
        assertEquals(2, clock.order().homeHand());
        assertEquals(17, clock.order().poolHand());
        clock.beginPass();
        for (int i = 0; i < 14; i++) {
            clock.step(); // slots 2-15
        }
        assertEquals(16, clock.order().homeHand());
        clock.step();
        assertEquals(2, clock.order().homeHand(), "wrapped: slot 1 again");
        clock.endPass();
    }

    @Test
    void eachRegionHasItsLookAheadWindowCutAtTheRegionsEnd() {
        for (int i = 0; i < 20; i++) {
            live(0, 1, false, true); // pool slots 17-23, 25-31, 33-38: the table's end is 39
        }
        clock.beginPass();
        clock.step(); // slot 1
        assertEquals(1, clock.lookAheadFrom());
        assertEquals(16, clock.lookAheadTo(), "cut at the lines' end");
        clock.step(); // the pool's share is due: index 16
        assertEquals(16, clock.lookAheadFrom());
        assertEquals(16 + CompactClock.LOOKAHEAD, clock.lookAheadTo());
        while (clock.order().poolHand() != 16 + CompactClock.LOOKAHEAD + 1) {
            clock.step(); // until the pool's hand has looked at index 32, past its first window
        }
        assertEquals(16 + CompactClock.LOOKAHEAD, clock.lookAheadFrom(), "the pool's next window");
        assertEquals(table.end(), clock.lookAheadTo(), "cut at the table's end");
        clock.endPass();
        assertEquals(20, length(0), "the look-ahead changed nothing");
    }
}
