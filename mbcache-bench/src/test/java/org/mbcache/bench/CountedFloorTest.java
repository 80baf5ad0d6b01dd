package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The counted floor's table: lookups, refused duplicates, and churn's removal with its backward shift. */
class CountedFloorTest {

    @Test
    void churnKeepsExactlyTheNewestNKeysFindable() {
        int n = 1000;
        CountedFloor floor = new CountedFloor(n);
        for (int i = 0; i < n; i++) {
            floor.create(ScaleBench.key(i), i);
        }
        for (int j = n; j < 20 * n; j++) {
            floor.churn(ScaleBench.key(j), j, ScaleBench.key(j - n));
        }
        for (int i = 0; i < 20 * n; i++) {
            assertEquals(i >= 19 * n ? 1 : 0, floor.lookup(ScaleBench.key(i)), "key of " + i);
        }
    }

    @Test
    void aPresentKeyIsADuplicateAndAnAbsentOneIsAdded() {
        CountedFloor floor = new CountedFloor(1000);
        floor.create(0, 5);
        assertEquals(1, floor.duplicate(0, 6));
        assertEquals(0, floor.duplicate(7, 7));
        assertEquals(1, floor.lookup(7));
        assertEquals(0, floor.lookup(8));
        assertEquals(16L * 2048, floor.footprint());
    }
}
