package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * {@link CompactDelayRing}'s in-place clock: reuses (frees through the ring and refills in place)
 * counted in epochs of a ring's length, epoch {@code e} owning the generations {@code [4e, 4e + 3]};
 * a line reclaim may refill a slot in place within its epoch's range, jumps a slot that is behind
 * it to its first generation, and refuses a slot at its last or ahead of it.
 */
class CompactDelayRingClockTest {

    private static final int MASK = CompactSlots.GENERATION_MASK;

    /** The smallest ring: 512 places. */
    private static CompactDelayRing ring() {
        CompactDelayRing ring = new CompactDelayRing(12);
        assertEquals(512, ring.size());
        return ring;
    }

    private static void freeThroughTheRing(CompactDelayRing ring, int frees) {
        for (int i = 0; i < frees; i++) {
            ring.exchange(1 + (i & 7));
        }
    }

    @Test
    void inTheFirstEpochASlotTakesThreeRefillsFromGenerationZero() {
        CompactDelayRing ring = ring();
        assertEquals(1, ring.inPlaceGeneration(0));
        assertEquals(2, ring.inPlaceGeneration(1));
        assertEquals(3, ring.inPlaceGeneration(2));
        assertEquals(-1, ring.inPlaceGeneration(3), "the epoch's last generation: it waits");
    }

    @Test
    void aSlotAheadOfItsEpochWaits() {
        CompactDelayRing ring = ring();
        assertEquals(-1, ring.inPlaceGeneration(4));
        assertEquals(-1, ring.inPlaceGeneration(MASK >>> 1), "ahead by just under half the generations");
    }

    @Test
    void aSlotBehindItsEpochJumpsToTheEpochsFirstGeneration() {
        CompactDelayRing ring = ring();
        freeThroughTheRing(ring, 10 * 512);
        assertEquals(40, ring.inPlaceGeneration(7));
        assertEquals(40, ring.inPlaceGeneration(39));
        assertEquals(40, ring.inPlaceGeneration((40 + (MASK >>> 1) + 1) & MASK), "behind by half the generations");
        assertEquals(41, ring.inPlaceGeneration(40));
        assertEquals(43, ring.inPlaceGeneration(42));
        assertEquals(-1, ring.inPlaceGeneration(43));
        assertEquals(-1, ring.inPlaceGeneration(44), "ahead");
    }

    @Test
    void refillsInPlaceMoveTheClockAsFreesThroughTheRingDo() {
        CompactDelayRing ring = ring();
        freeThroughTheRing(ring, 300);
        for (int i = 0; i < 211; i++) {
            ring.countRefill();
        }
        assertEquals(-1, ring.inPlaceGeneration(3), "511 reuses: still the first epoch");
        ring.countRefill();
        assertEquals(4, ring.inPlaceGeneration(3), "512: the second epoch's first generation");
    }

    @Test
    void theEpochsGenerationsWrapWithTheGeneration() {
        CompactDelayRing ring = ring();
        int epochs = (MASK + 1) / CompactDelayRing.EPOCH_GENERATIONS - 1; // the last epoch before the wrap
        freeThroughTheRing(ring, epochs * 512);
        int first = MASK + 1 - CompactDelayRing.EPOCH_GENERATIONS;
        assertEquals(first + 1, ring.inPlaceGeneration(first));
        assertEquals(-1, ring.inPlaceGeneration(MASK));
        freeThroughTheRing(ring, 512);
        assertEquals(0, ring.inPlaceGeneration(MASK), "the next epoch owns 0-3 again");
        assertEquals(1, ring.inPlaceGeneration(0));
    }
}
