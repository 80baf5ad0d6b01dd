package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.mbcache.MbCache.Entry;

/** The hash table on its own: chains, the request list, the cap, the optimistic reads and close. */
class BucketsTest {

    private final MbCache owner = MbCache.builder().bucketBits(0).executor(task -> {}).build();
    private final Buckets buckets = new Buckets(0, 1L);

    private Entry add(int key, long value) {
        Entry entry = new Entry(owner, key, value, true);
        buckets.lock(0);
        try {
            buckets.ensureRoom(0);
            buckets.addNewest(0, entry);
        } finally {
            buckets.unlock(0);
        }
        entry.releaseReference(); // the creator's reference: only the cache's is left
        return entry;
    }

    @Test
    void aChainIsWalkedNewestFirst() {
        add(1, 10);
        Entry newer = add(1, 11);
        Entry found = buckets.tryFindReusable(0, 1, null);
        assertSame(newer, found);
        assertEquals(2, Entry.count(found.lvState()));
    }

    @Test
    void anOptimisticReadWhileTheBitIsHeldAsksForTheLock() {
        add(1, 10);
        buckets.lock(0);
        try {
            assertSame(Buckets.RETRY_LOCKED, buckets.tryGet(0, 1, 10));
            assertSame(Buckets.RETRY_LOCKED, buckets.tryFindReusable(0, 2, null));
        } finally {
            buckets.unlock(0);
        }
    }

    @Test
    void anOptimisticMissIsAnsweredWithoutTheLock() {
        add(1, 10);
        assertNull(buckets.tryGet(0, 1, 99));
        assertNull(buckets.tryFindReusable(0, 2, null));
    }

    @Test
    void findNextContinuesBelowTheEntryItWasGiven() {
        Entry older = add(1, 10);
        Entry newer = add(1, 11);
        assertSame(older, buckets.tryFindReusable(0, 1, newer));
        assertNull(buckets.tryFindReusable(0, 1, older));
    }

    @Test
    void theCapClaimsTheOldestUnheldEntry() {
        Entry oldest = add(1, 0);
        Entry held = add(1, 1);
        held.tryAcquire();
        add(1, 2);
        buckets.lock(0);
        try {
            assertEquals(1, buckets.reclaimForRoom(0, 3));
            assertEquals(2, buckets.length(0));
        } finally {
            buckets.unlock(0);
        }
        assertEquals(0, Entry.count(oldest.lvState()));
        assertEquals(2, Entry.count(held.lvState()));
    }

    @Test
    void theCapNeverClaimsAHeldEntry() {
        for (int i = 0; i < 4; i++) {
            add(1, i).tryAcquire();
        }
        buckets.lock(0);
        try {
            assertEquals(0, buckets.reclaimForRoom(0, 2));
            assertEquals(4, buckets.length(0));
        } finally {
            buckets.unlock(0);
        }
    }

    @Test
    void aWithdrawnRequestIsForgotten() {
        buckets.lock(0);
        try {
            buckets.addRequest(0, 1, 10);
            assertTrue(buckets.hasRequest(0, 1, 10));
        } finally {
            buckets.unlock(0);
        }
        buckets.withdrawRequest(0, 1, 10);
        buckets.lock(0);
        try {
            assertFalse(buckets.hasRequest(0, 1, 10));
        } finally {
            buckets.unlock(0);
        }
    }

    @Test
    void killAllLeavesAnEmptyChainThatReadsConsistently() {
        Entry entry = add(1, 10);
        buckets.lock(0);
        try {
            buckets.killAll(0);
        } finally {
            buckets.unlock(0);
        }
        assertEquals(0, Entry.count(entry.lvState()));
        assertNull(buckets.tryGet(0, 1, 10));
        assertEquals(0, buckets.length(0));
    }

    @Test
    void theKeyedIndexDependsOnTheSeed() {
        Buckets one = new Buckets(16, 1L);
        Buckets two = new Buckets(16, 2L);
        int differ = 0;
        for (int key = 0; key < 100; key++) {
            differ += one.bucketOf(key) != two.bucketOf(key) ? 1 : 0;
            assertTrue(one.bucketOf(key) >= 0 && one.bucketOf(key) < 1 << 16);
        }
        assertTrue(differ > 90, differ + " of 100 keys moved");
        assertEquals(0, new Buckets(0, 3L).bucketOf(12345));
    }
}
