package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mbcache.contract.ConcurrentRounds;

/**
 * The kernel port under faults a careful review found: executors that throw or drop work, passes
 * that others keep busy, close racing lookups and creates, and sizes at the edge of {@code long}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MbCacheHardeningTest {

    /**
     * A cache of 16 buckets. Its seed is fixed: these tests count on sequential keys spreading over
     * the buckets, which a fixed seed makes certain (a chain at the default cap would reclaim some).
     */
    private static MbCache cache(long maxEntries, Executor executor) {
        return MbCache.builder().bucketBits(4).maxEntries(maxEntries).hashSeed(42).executor(executor).build();
    }

    @Test
    void anExecutorThatThrowsGetsThePassRunOnTheCreatingThread() {
        AtomicInteger offered = new AtomicInteger();
        Executor throwing = task -> {
            offered.incrementAndGet();
            throw new IllegalStateException("broken executor");
        };
        try (MbCache cache = cache(64, throwing)) {
            for (int i = 0; i < 1_000; i++) {
                assertTrue(cache.create(i, i, true));
            }
            assertTrue(offered.get() > 1, "background reclaim was offered again after a failure");
            assertTrue(cache.stats().backgroundReclaimPasses() >= offered.get());
            assertTrue(cache.size() < 2 * 64, "size " + cache.size());
        }
    }

    @Test
    void anExecutorThatThrowsAnErrorDoesNotFailTheCreate() {
        try (MbCache cache = cache(8, task -> { throw new OutOfMemoryError("simulated"); })) {
            for (int i = 0; i < 100; i++) {
                assertTrue(cache.create(i, i, true));
            }
        }
    }

    @Test
    void aPassTheExecutorDroppedIsHandedOverAgain() throws Exception {
        AtomicInteger offered = new AtomicInteger();
        AtomicBoolean drop = new AtomicBoolean(true);
        Executor droppingOnce = task -> {
            offered.incrementAndGet();
            if (!drop.getAndSet(false)) {
                task.run();
            }
        };
        try (MbCache cache = cache(64, droppingOnce)) {
            for (int i = 0; i < 64; i++) {
                cache.create(i, i, true);
            }
            cache.create(-1, -1, true); // schedules the pass the executor drops
            assertEquals(1, offered.get());
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(BackgroundReclaim.STALE_PASS_NANOS) + 100);
            for (int i = 64; i < 200; i++) {
                cache.create(i, i, true); // reaches 2 * maxEntries: the stale pass is resubmitted
            }
            assertTrue(offered.get() >= 2, "offered " + offered.get());
            assertTrue(cache.stats().backgroundReclaimPasses() >= 1);
        }
    }

    @Test
    void shrinkOfEverythingReturnsWhileOthersTouchAndCreate() throws Exception {
        try (MbCache cache = cache(Long.MAX_VALUE / 4, task -> {})) {
            for (int i = 0; i < 2_000; i++) {
                cache.create(i, i, true);
            }
            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentRounds.together(
                    () -> {
                        for (int round = 0; round < 50; round++) {
                            cache.shrink(Long.MAX_VALUE);
                        }
                        stop.set(true);
                    },
                    () -> {
                        for (int i = 0; !stop.get(); i++) {
                            CacheEntry entry = cache.get(i % 2_000, i % 2_000);
                            if (entry != null) {
                                cache.touch(entry);
                                cache.release(entry);
                            }
                            cache.create(10_000 + i, i, true);
                        }
                    });
        }
    }

    @Test
    void lookupsRacingCloseReturnOrSayClosed() throws Exception {
        for (int round = 0; round < 200; round++) {
            MbCache cache = cache(1 << 20, task -> {});
            for (int i = 0; i < 200; i++) {
                cache.create(i & 7, i, true);
            }
            ConcurrentRounds.together(
                    cache::close,
                    () -> {
                        for (int i = 0; i < 200; i++) {
                            try {
                                CacheEntry entry = cache.findFirst(i & 7);
                                if (entry != null) {
                                    entry = cache.findNext(entry);
                                }
                                cache.get(i & 7, i);
                            } catch (IllegalStateException closed) {
                                return; // the contract's answer once closed
                            }
                        }
                    });
        }
    }

    @Test
    void aCreateRacingCloseSaysClosed() throws Exception {
        for (int round = 0; round < 200; round++) {
            MbCache cache = cache(1 << 20, task -> {});
            ConcurrentRounds.together(
                    cache::close,
                    () -> {
                        for (int i = 0; i < 500; i++) {
                            try {
                                cache.create(i, i, true);
                            } catch (IllegalStateException closed) {
                                assertEquals("cache is closed", closed.getMessage());
                                return;
                            }
                        }
                    });
        }
    }

    @Test
    void findNextReleasesThePreviousEntryWhenTheCacheClosedMeanwhile() {
        MbCache cache = cache(1024, task -> {});
        cache.create(1, 1, true);
        CacheEntry entry = cache.findFirst(1);
        cache.close();
        assertThrows(IllegalStateException.class, () -> cache.findNext(entry));
    }

    @Test
    void theSynchronousThresholdSaturatesForHugeMaxEntries() {
        try (MbCache cache = cache(Long.MAX_VALUE, task -> { throw new AssertionError("no reclaim expected"); })) {
            for (int i = 0; i < 1_000; i++) {
                assertTrue(cache.create(i, i, true));
            }
            assertEquals(0, cache.stats().reclaimPasses());
        }
    }

    @Test
    void aLargeTableAllocatesNoPerBucketArraysUpFront() {
        int bucketBits = 22;
        long before = AllocatedBytes.byCurrentThread();
        try (MbCache cache = MbCache.builder().bucketBits(bucketBits).executor(task -> {}).build()) {
            long perBucket = (AllocatedBytes.byCurrentThread() - before) >> bucketBits;
            // The table's own columns take 20 bytes a bucket (32 without compressed references); an
            // empty int[] and Entry[] of each bucket's own would add at least 32 more.
            assertTrue(perBucket < 48, perBucket + " bytes a bucket");
            assertTrue(cache.create(1, 1, true));
            CacheEntry entry = cache.get(1, 1);
            assertNotNull(entry);
            entry.close();
        }
    }

    @Test
    void anInterruptedWaiterIsInterruptedEvenIfTheEntryIsUnused() {
        try (MbCache cache = cache(1024, task -> {})) {
            cache.create(1, 1, true);
            CacheEntry entry = cache.get(1, 1);
            Thread.currentThread().interrupt();
            assertThrows(InterruptedException.class, () -> cache.waitUnused(entry));
            assertFalse(Thread.currentThread().isInterrupted());
            cache.release(entry);
        }
    }
}
