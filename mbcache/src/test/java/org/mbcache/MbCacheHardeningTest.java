package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mbcache.contract.ConcurrentRounds;

/**
 * The kernel port under faults a careful review found: executors that throw or drop work, passes
 * that others keep busy, close racing lookups and creates, and sizes at the edge of {@code long}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MbCacheHardeningTest {

    private static MbCache cache(long maxEntries, Executor executor) {
        return MbCache.builder().bucketBits(4).maxEntries(maxEntries).executor(executor).build();
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
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(MbCache.STALE_BACKGROUND_PASS_NANOS) + 100);
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
        Runtime runtime = Runtime.getRuntime();
        try (MbCache cache = MbCache.builder().bucketBits(22).executor(task -> {}).build()) {
            assertTrue(cache.create(1, 1, true));
            CacheEntry entry = cache.get(1, 1);
            assertNotNull(entry);
            entry.close();
            // 2^22 buckets: a small array each would be > 100 MB; the shared empty ones cost nothing.
            assertTrue(runtime.totalMemory() - runtime.freeMemory() < 1L << 30);
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

    /** A queue lock whose next {@code lock()} throws, as a contended lock's node allocation can. */
    private static final class FailingLock extends ReentrantLock {
        private static final long serialVersionUID = 1L;
        final AtomicBoolean armed = new AtomicBoolean();

        @Override
        public void lock() {
            if (armed.getAndSet(false)) {
                throw new OutOfMemoryError("injected: the queue lock's node allocation");
            }
            super.lock();
        }
    }

    /** Puts a failing lock into each of the cache's wait queues (fault injection by reflection). */
    private static List<FailingLock> failingWaitQueueLocks(MbCache cache) throws Exception {
        Object waitQueues = field(cache, "unusedWaiters");
        List<FailingLock> locks = new ArrayList<>();
        for (Object queue : (Object[]) field(waitQueues, "queues")) {
            FailingLock lock = new FailingLock();
            setField(queue, "lock", lock);
            setField(queue, "changed", lock.newCondition());
            locks.add(lock);
        }
        return locks;
    }

    private static Object field(Object target, String name) throws Exception {
        Field field = target.getClass().getDeclaredField(name);
        field.setAccessible(true);
        return field.get(target);
    }

    private static void setField(Object target, String name, Object value) throws Exception {
        Field field = target.getClass().getDeclaredField(name);
        field.setAccessible(true);
        field.set(target, value);
    }

    /** Starts a thread waiting for {@code entry} to be unused; returns once it sleeps. */
    private static Thread waiterFor(MbCache cache, CacheEntry entry, AtomicBoolean returned) throws Exception {
        Thread waiter = new Thread(() -> {
            try {
                cache.waitUnused(entry);
            } catch (InterruptedException e) {
                return;
            } catch (IllegalStateException closed) {
                // closing wakes waiters with this: it counts as returning
            }
            returned.set(true);
        });
        waiter.setDaemon(true);
        waiter.start();
        while (waiter.getState() != Thread.State.WAITING) {
            Thread.sleep(1);
        }
        return waiter;
    }

    @Test
    void aWakeUpThatFailedIsDoneByTheNextRelease() throws Exception {
        try (MbCache cache = cache(1024, task -> {})) {
            List<FailingLock> locks = failingWaitQueueLocks(cache);
            cache.create(3, 30, true);
            CacheEntry mine = cache.get(3, 30);
            CacheEntry other = cache.get(3, 30);
            AtomicBoolean returned = new AtomicBoolean();
            Thread waiter = waiterFor(cache, mine, returned);
            locks.forEach(lock -> lock.armed.set(true));
            assertThrows(OutOfMemoryError.class, () -> cache.release(other)); // released; the wake-up failed
            locks.forEach(lock -> lock.armed.set(false));
            cache.release(cache.get(3, 30)); // the next release that leaves the entry unused
            waiter.join(10_000);
            boolean stuck = waiter.isAlive();
            waiter.interrupt();
            cache.release(mine);
            assertFalse(stuck, "the waiter still sleeps although the entry is unused");
            assertTrue(returned.get());
        }
    }

    @Test
    void aCloseThatFailedWakingTheWaitersIsFinishedByTheNextClose() throws Exception {
        MbCache cache = cache(1024, task -> {});
        List<FailingLock> locks = failingWaitQueueLocks(cache);
        cache.create(3, 30, true);
        CacheEntry mine = cache.get(3, 30);
        cache.get(3, 30); // a second holder: the waiter waits for it
        AtomicBoolean returned = new AtomicBoolean();
        Thread waiter = waiterFor(cache, mine, returned);
        locks.forEach(lock -> lock.armed.set(true));
        assertThrows(OutOfMemoryError.class, cache::close);
        locks.forEach(lock -> lock.armed.set(false));
        assertThrows(IllegalStateException.class, () -> cache.get(3, 30), "closed from the first close() on");
        cache.close();
        waiter.join(10_000);
        boolean stuck = waiter.isAlive();
        waiter.interrupt();
        assertFalse(stuck, "a waiter still sleeps in waitUnused of a closed cache");
        assertTrue(returned.get());
    }
}
