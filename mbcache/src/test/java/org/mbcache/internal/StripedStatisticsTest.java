package org.mbcache.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.mbcache.AllocatedBytes;
import org.mbcache.contract.ConcurrentRounds;

/**
 * The cache's event counters: exact once quiet, independent of each other, and never allocating; and
 * the stripes every per-thread structure of the cache is split into.
 */
class StripedStatisticsTest {

    @Test
    void eachCounterSumsExactlyAfterConcurrentAdds() throws Exception {
        StripedStatistics statistics = new StripedStatistics(3);
        ConcurrentRounds.together(
                () -> { for (int i = 0; i < 100_000; i++) statistics.add(0, 1); },
                () -> { for (int i = 0; i < 100_000; i++) statistics.add(0, 1); },
                () -> { for (int i = 0; i < 50_000; i++) statistics.add(2, 3); });
        assertEquals(200_000, statistics.sum(0));
        assertEquals(0, statistics.sum(1));
        assertEquals(150_000, statistics.sum(2));
    }

    @Test
    void addingAllocatesNothingEvenOnAThreadOfItsOwn() throws Exception {
        int adds = 20_000;
        StripedStatistics statistics = new StripedStatistics(4);
        long[] allocated = new long[1];
        Thread fresh = new Thread(() -> {
            long before = AllocatedBytes.byCurrentThread();
            for (int i = 0; i < adds; i++) {
                statistics.add(i & 3, 1);
            }
            allocated[0] = AllocatedBytes.byCurrentThread() - before;
        });
        fresh.start();
        fresh.join();
        // Under a byte an add: the smallest object is 16 bytes, so any allocation per add fails this
        // by far; what remains is the reflective counter call's own few hundred bytes.
        assertTrue(allocated[0] < adds, allocated[0] + " bytes allocated by " + adds + " adds");
        assertEquals(adds, statistics.sum(0) + statistics.sum(1) + statistics.sum(2) + statistics.sum(3));
    }

    @Test
    void aCounterOutsideTheSetIsRefused() {
        StripedStatistics statistics = new StripedStatistics(2);
        assertThrows(IndexOutOfBoundsException.class, () -> statistics.add(2, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> statistics.sum(-1));
        assertThrows(IllegalArgumentException.class, () -> new StripedStatistics(0));
        assertThrows(IllegalArgumentException.class, () -> new StripedStatistics(17));
    }

    @Test
    void threadsWithConsecutiveIdsNeverShareAStripe() {
        for (int mask : new int[] {15, 31, 63, 127, 255}) {
            for (long id = 0; id < 100_000; id++) {
                assertNotEquals(StripedStatistics.stripeOf(id, mask), StripedStatistics.stripeOf(id + 1, mask),
                        "ids " + id + " and " + (id + 1) + " of " + (mask + 1) + " stripes");
                assertNotEquals(StripedStatistics.stripeOf(id, mask), StripedStatistics.stripeOf(id + 2, mask),
                        "ids " + id + " and " + (id + 2) + " of " + (mask + 1) + " stripes");
            }
        }
    }

    @Test
    void everyStripeIsInRange() {
        for (long id = 0; id < 10_000; id++) {
            int stripe = StripedStatistics.stripeOf(id, 15);
            assertTrue(stripe >= 0 && stripe < 16, "stripe " + stripe);
        }
    }
}
