package org.mbcache.caffeine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mbcache.CacheEntry;

/**
 * What only the Caffeine backend promises: its builder, its executor, and the size bound when the
 * executor falls behind. The shared contract is in {@code org.mbcache.contract}.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class CaffeineDedupCacheTest {

    @Test
    void builderRejectsMaxEntriesOfZeroOrLess() {
        assertThrows(IllegalArgumentException.class, () -> CaffeineDedupCache.builder().maxEntries(0));
        assertThrows(IllegalArgumentException.class, () -> CaffeineDedupCache.create(-5));
    }

    @Test
    void builderRejectsANullExecutorNamingIt() {
        NullPointerException e = assertThrows(NullPointerException.class,
                () -> CaffeineDedupCache.builder().executor(null));
        assertTrue(e.getMessage().contains("executor"));
    }

    @Test
    void builderDefaultsToExt4sSixteenThousandEntries() {
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().build()) {
            assertEquals(16_384, cache.maxEntries());
        }
    }

    @Test
    void caffeinesMaintenanceRunsOnTheGivenExecutorAndCountsAsBackgroundPasses() {
        AtomicInteger tasks = new AtomicInteger();
        Executor counting = task -> {
            tasks.incrementAndGet();
            task.run();
        };
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(32).executor(counting).build()) {
            for (int key = 0; key < 1000; key++) {
                cache.create(key, key, true);
            }
            assertTrue(tasks.get() > 0, "no maintenance ran on the executor");
            assertTrue(cache.size() <= 32 + 1, "a same-thread executor keeps the size at maxEntries: " + cache.size());
            assertTrue(cache.stats().backgroundReclaimPasses() > 0);
            assertTrue(cache.stats().entriesReclaimed() >= 1000 - 33);
        }
    }

    @Test
    void theSizeStaysBoundedWhenTheExecutorNeverRunsAnything() {
        Executor stalled = task -> {};
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(32).executor(stalled).build()) {
            for (int key = 0; key < 2000; key++) {
                cache.create(key, key, true);
                assertTrue(cache.size() <= 64, "size " + cache.size() + " after create " + key);
            }
            assertTrue(cache.stats().synchronousReclaimPasses() > 0);
            assertEquals(0, cache.stats().backgroundReclaimPasses());
        }
    }

    @Test
    void theSizeStaysBoundedWhenTheExecutorNeverRunsAndEveryEntryIsUsed() {
        Executor stalled = task -> {};
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(64).executor(stalled).build()) {
            for (int key = 0; key < 5000; key++) {
                cache.create(key, key, true);
                CacheEntry entry = cache.findFirst(key); // pins it; the release leaves it pinned
                if (entry != null) {
                    cache.release(entry);
                }
                assertTrue(cache.size() <= 128, "size " + cache.size() + " after create " + key);
            }
        }
    }

    @Test
    void aLatelyUsedEntryLeftPinnedIsStillEvictedWhenTheCacheOverflows() {
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(16).executor(Runnable::run).build()) {
            cache.create(1, 1, true);
            for (int i = 0; i < 1000; i++) {
                cache.release(cache.findFirst(1));
            }
            for (int key = 100; key < 1000; key++) {
                cache.create(key, key, true);
            }
            assertTrue(cache.size() <= 16 + 1, "size " + cache.size());
            assertEquals(cache.size(), cache.shrink(Long.MAX_VALUE));
        }
    }

    @Test
    void heldEntriesAreKeptOutOfCaffeinesEvictionAndBackInOnceReleased() {
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(8).executor(Runnable::run).build()) {
            CacheEntry[] held = new CacheEntry[8];
            for (int key = 0; key < 8; key++) {
                cache.create(key, key, true);
                held[key] = cache.get(key, key);
            }
            for (int key = 100; key < 400; key++) {
                cache.create(key, key, true);
            }
            for (int key = 0; key < 8; key++) {
                CacheEntry again = cache.get(key, key);
                assertNotNull(again, "held entry " + key + " was evicted");
                cache.release(again);
                cache.release(held[key]);
            }
            for (int key = 400; key < 700; key++) {
                cache.create(key, key, true);
            }
            assertTrue(cache.size() <= 8 + 1, "released entries must weigh again: size " + cache.size());
        }
    }

    @Test
    void closeStopsHandingMaintenanceToTheExecutor() {
        AtomicInteger tasks = new AtomicInteger();
        CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(4).executor(task -> tasks.incrementAndGet()).build();
        for (int key = 0; key < 20; key++) {
            cache.create(key, key, true);
        }
        cache.close();
        int before = tasks.get();
        cache.close();
        assertEquals(before, tasks.get());
    }

    @Test
    void lookupsInACacheAtItsBoundNeedNoCaffeineWriteOnceTheEntriesArePinned() {
        AtomicInteger tasks = new AtomicInteger();
        Executor counting = task -> {
            tasks.incrementAndGet();
            task.run();
        };
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(64).executor(counting).build()) {
            for (int key = 0; key < 64; key++) {
                cache.create(key, key, true);
            }
            for (int key = 0; key < 64; key++) { // first use: pins by a compute (a Caffeine write)
                cache.release(cache.findFirst(key));
            }
            int afterFirstUse = tasks.get();
            for (int round = 0; round < 3; round++) {
                for (int key = 0; key < 64; key++) {
                    CacheEntry entry = cache.findFirst(key);
                    assertNotNull(entry);
                    cache.release(entry);
                    cache.release(cache.get(key, key));
                }
            }
            assertEquals(afterFirstUse, tasks.get(), "lookups of pinned entries must not write to Caffeine");
            assertEquals(64, cache.size());
            assertEquals(64, cache.unpinBacklog(), "at the bound nothing is unpinned");
        }
    }

    @Test
    void overTheBoundADrainLeavesOnlyTheNewestFewUnheldEntriesPinned() {
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(64).executor(Runnable::run).build()) {
            for (int key = 0; key < 64; key++) {
                cache.create(key, key, true);
                cache.release(cache.findFirst(key));
            }
            for (int key = 1000; key < 1500; key++) {
                cache.create(key, key, true);
                // unpinBatch 4: at most 4 released entries wait on the stack, and a drain keeps 2
                assertTrue(cache.size() <= 64 + 4, "size " + cache.size() + " after create " + key);
            }
            assertTrue(cache.unpinBacklog() < 4, "backlog " + cache.unpinBacklog());
        }
    }

    @Test
    void deadEntriesDoNotPileUpOnTheUnpinStackBelowTheBound() {
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(64).executor(Runnable::run).build()) {
            for (int key = 0; key < 32; key++) {
                cache.create(key, key, true);
                cache.release(cache.findFirst(key)); // 32 live pinned entries stay queued
            }
            for (int key = 100; key < 10_100; key++) {
                cache.create(key, key, true);
                cache.release(cache.findFirst(key));
                CacheEntry held = cache.deleteOrGet(key, key);
                if (held != null) {
                    cache.release(held);
                }
                assertTrue(cache.unpinBacklog() <= 2 * cache.size() + 4, "backlog " + cache.unpinBacklog());
            }
            for (int key = 0; key < 32; key++) {
                assertNotNull(cache.get(key, key), "live entry " + key + " lost");
            }
        }
    }
}
