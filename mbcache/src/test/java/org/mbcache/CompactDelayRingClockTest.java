package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link CompactDelayRing}'s in-place clock: reuses (frees through the ring and refills in place)
 * counted in epochs of sixteen ring lengths, epoch {@code e} owning the generations
 * {@code [4e, 4e + 3]}; a line reclaim may refill a slot whose generation is behind that range, or
 * within it below its last, and refuses one at its last or ahead of it.
 */
class CompactDelayRingClockTest {

    private static final int MASK = CompactSlots.GENERATION_MASK;

    /** The smallest ring: 512 places. */
    private static CompactDelayRing ring() {
        CompactDelayRing ring = new CompactDelayRing(12);
        assertEquals(512, ring.size());
        return ring;
    }

    /** Reuses in an epoch of {@link #ring()}'s clock. */
    private static final int EPOCH = CompactDelayRing.EPOCH_RINGS * 512;

    private static void freeThroughTheRing(CompactDelayRing ring, long frees) {
        for (long i = 0; i < frees; i++) {
            ring.exchange(1 + (int) (i & 7));
        }
    }

    @Test
    void inTheFirstEpochASlotTakesThreeRefillsFromGenerationZero() {
        CompactDelayRing ring = ring();
        assertTrue(ring.mayRefillInPlace(0));
        assertTrue(ring.mayRefillInPlace(1));
        assertTrue(ring.mayRefillInPlace(2));
        assertFalse(ring.mayRefillInPlace(3), "the epoch's last generation: it waits");
    }

    @Test
    void aSlotAheadOfItsEpochWaits() {
        CompactDelayRing ring = ring();
        assertFalse(ring.mayRefillInPlace(4));
        assertFalse(ring.mayRefillInPlace(MASK >>> 1), "ahead by just under half the generations");
    }

    @Test
    void aSlotBehindItsEpochMayBeRefilled() {
        CompactDelayRing ring = ring();
        freeThroughTheRing(ring, 10L * EPOCH); // epoch 10: generations 40-43
        assertTrue(ring.mayRefillInPlace(7));
        assertTrue(ring.mayRefillInPlace(39));
        assertTrue(ring.mayRefillInPlace((40 - (MASK >>> 1) - 1) & MASK), "behind by half the generations");
        assertFalse(ring.mayRefillInPlace((40 - (MASK >>> 1) - 2) & MASK), "more than half behind reads as ahead");
        assertTrue(ring.mayRefillInPlace(42));
        assertFalse(ring.mayRefillInPlace(43));
        assertFalse(ring.mayRefillInPlace(44), "ahead");
    }

    @Test
    void refillsInPlaceMoveTheClockAsFreesThroughTheRingDo() {
        CompactDelayRing ring = ring();
        freeThroughTheRing(ring, 300);
        for (int i = 300; i < EPOCH - 1; i++) {
            ring.countRefill();
        }
        assertFalse(ring.mayRefillInPlace(3), "one reuse short of an epoch: still the first");
        ring.countRefill();
        assertTrue(ring.mayRefillInPlace(3), "an epoch's reuses: the second epoch, 3 is behind it");
    }

    @Test
    void theEpochsGenerationsWrapWithTheGeneration() {
        CompactDelayRing ring = ring();
        int epochs = (MASK + 1) / CompactDelayRing.EPOCH_GENERATIONS - 1; // the last epoch before the wrap
        freeThroughTheRing(ring, (long) epochs * EPOCH);
        int first = MASK + 1 - CompactDelayRing.EPOCH_GENERATIONS;
        assertTrue(ring.mayRefillInPlace(first));
        assertFalse(ring.mayRefillInPlace(MASK));
        freeThroughTheRing(ring, EPOCH);
        assertTrue(ring.mayRefillInPlace(MASK), "the next epoch owns 0-3 again: the last generation is behind");
        assertTrue(ring.mayRefillInPlace(2));
        assertFalse(ring.mayRefillInPlace(3));
    }

    /**
     * The premise of the wrap bound: a slot refilled whenever the clock lets it, however the reuses
     * come, never gets more than three generations ahead of its epoch's first, so its generation
     * gains at most four an epoch on the clock, apart from frees through the ring.
     */
    @Test
    void aSlotRefilledWheneverItMayNeverGetsMoreThanThreeAheadOfItsEpoch() {
        CompactDelayRing ring = ring();
        SplittableRandom random = new SplittableRandom(7);
        long reuses = 0;
        long generation = 0; // unreduced
        for (int step = 0; step < 100_000; step++) {
            if (random.nextInt(8) == 0) {
                int frees = random.nextInt(EPOCH / 2);
                freeThroughTheRing(ring, frees);
                reuses += frees;
            } else if (ring.mayRefillInPlace((int) generation & MASK)) {
                generation++;
                ring.countRefill();
                reuses++;
            }
            long ahead = generation - reuses / EPOCH * CompactDelayRing.EPOCH_GENERATIONS;
            assertTrue(ahead <= CompactDelayRing.EPOCH_GENERATIONS - 1, () -> "ahead of its epoch's first by " + ahead);
        }
    }
}
