package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link CompactSweepOrder}: the lines' region and the pool's, each in index order, interleaved in
 * proportion to their sizes, every index once a turn.
 */
class CompactSweepOrderTest {

    @Test
    void aTurnVisitsEveryIndexOnceWhateverTheRegionsSizes() {
        for (int homeSlots : new int[] {8, 16, 800}) {
            for (int end : new int[] {homeSlots + 1, homeSlots + 2, homeSlots + 7, 2 * homeSlots, 5 * homeSlots + 3}) {
                CompactSweepOrder order = new CompactSweepOrder(homeSlots);
                for (int turn = 0; turn < 3; turn++) {
                    Set<Integer> seen = new HashSet<>();
                    for (int step = 1; step < end; step++) {
                        int index = order.next(end);
                        assertTrue(index >= 1 && index < end, "index " + index);
                        assertTrue(seen.add(index), "index " + index + " twice in a turn, homeSlots " + homeSlots + " end " + end);
                    }
                    assertEquals(end - 1, seen.size());
                }
            }
        }
    }

    @Test
    void theRegionsAreInterleavedInProportionAndEachInIndexOrder() {
        CompactSweepOrder order = new CompactSweepOrder(16); // lines 1-15, pool 16-45: one line step, two pool steps
        List<Integer> lines = new ArrayList<>();
        List<Integer> pool = new ArrayList<>();
        for (int step = 0; step < 45; step++) {
            int index = order.next(46);
            (index < 16 ? lines : pool).add(index);
            if (step == 8) {
                assertEquals(3, lines.size(), "a third of the first nine steps in the lines");
            }
        }
        for (int i = 1; i < lines.size(); i++) {
            assertEquals(lines.get(i - 1) + 1, lines.get(i));
        }
        for (int i = 1; i < pool.size(); i++) {
            assertEquals(pool.get(i - 1) + 1, pool.get(i));
        }
    }

    @Test
    void aCopyGoesOnFromWhereTheOriginalIsWithoutMovingIt() {
        CompactSweepOrder order = new CompactSweepOrder(16);
        for (int i = 0; i < 5; i++) {
            order.next(40);
        }
        CompactSweepOrder copy = order.copy();
        int next = copy.next(40);
        assertEquals(next, order.next(40));
    }

    @Test
    void aTurnOverAnEndSmallerThanTheOneTheHandsMovedOverVisitsEveryIndexOnce() {
        // A snapshot may copy hands that a pass moved over a table that has grown since the
        // snapshot read its end: the hands are then past that end and the balance above its pool.
        for (int homeSlots : new int[] {8, 16, 800}) {
            for (int bigger : new int[] {homeSlots + 9, 3 * homeSlots, 6 * homeSlots}) {
                for (int moved = 1; moved < bigger; moved++) {
                    CompactSweepOrder hands = new CompactSweepOrder(homeSlots);
                    for (int step = 0; step < moved; step++) {
                        hands.next(bigger);
                    }
                    for (int end : new int[] {homeSlots + 1, homeSlots + 5, bigger - 1}) {
                        CompactSweepOrder walk = hands.copy();
                        Set<Integer> seen = new HashSet<>();
                        for (int step = 1; step < end; step++) {
                            int index = walk.next(end);
                            assertTrue(index >= 1 && index < end, "index " + index);
                            assertTrue(seen.add(index), "index " + index + " twice: homeSlots " + homeSlots
                                    + ", hands moved " + moved + " over end " + bigger + ", walked to " + end);
                        }
                    }
                }
            }
        }
    }
}
