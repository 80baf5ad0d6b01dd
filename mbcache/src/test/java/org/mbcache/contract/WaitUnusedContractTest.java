package org.mbcache.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;
import org.mbcache.testing.Backend;

/**
 * The {@link DedupCache} contract's {@code waitUnused} ({@code docs/contract.md}, sections 2 and 6):
 * when it returns, waits and times out, and its interrupt policy, one behaviour per test, run
 * against every {@link Backend}. Waits are bounded, so a broken backend fails an assertion rather
 * than hanging the build.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
@ParameterizedClass(name = "{0}")
@EnumSource(Backend.class)
class WaitUnusedContractTest extends DedupCacheFixture {

    @Test
    void waitUnusedReturnsAtOnceWhenOnlyTheCallerHoldsTheEntry() throws Exception {
        cache.create(KEY, 1, true);
        try (CacheEntry entry = cache.get(KEY, 1)) {
            cache.waitUnused(entry);
        }
    }

    @Test
    void timedWaitUnusedReturnsTrueAtOnceWhenOnlyTheCallerHoldsTheEntry() throws Exception {
        cache.create(KEY, 1, true);
        try (CacheEntry entry = cache.get(KEY, 1)) {
            assertTrue(cache.waitUnused(entry, 0, TimeUnit.NANOSECONDS));
        }
    }

    @Test
    void timedWaitUnusedReturnsFalseWhenTheTimeRunsOut() throws Exception {
        cache.create(KEY, 1, true);
        try (CacheEntry mine = cache.get(KEY, 1); CacheEntry other = cache.get(KEY, 1)) {
            long start = System.nanoTime();
            assertFalse(cache.waitUnused(mine, 50, TimeUnit.MILLISECONDS));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(40), "waited the time out");
            assertFalse(cache.waitUnused(mine, 0, TimeUnit.SECONDS));
        }
    }

    @Test
    void timedWaitUnusedWithANegativeTimeoutDoesNotWaitHoweverLarge() throws Exception {
        cache.create(KEY, 1, true);
        try (CacheEntry mine = cache.get(KEY, 1); CacheEntry other = cache.get(KEY, 1)) {
            assertFalse(cache.waitUnused(mine, -1, TimeUnit.NANOSECONDS));
            assertFalse(cache.waitUnused(mine, Long.MIN_VALUE, TimeUnit.NANOSECONDS));
            assertFalse(cache.waitUnused(mine, -Long.MAX_VALUE, TimeUnit.MILLISECONDS)); // saturates to MIN_VALUE ns
            assertFalse(cache.waitUnused(mine, Long.MIN_VALUE, TimeUnit.DAYS));
        }
    }

    @Test
    void waitUnusedReturnsWhenTheOtherHolderReleases() throws Exception {
        cache.create(KEY, 1, true);
        CacheEntry mine = cache.get(KEY, 1);
        CacheEntry other = cache.get(KEY, 1);
        CountDownLatch waiting = new CountDownLatch(1);
        Future<Void> waiter = inThread(() -> {
            waiting.countDown();
            assertTrue(cache.waitUnused(mine, PATIENCE_SECONDS, TimeUnit.SECONDS));
        });
        waiting.await();
        Thread.sleep(20); // let the waiter block (not needed for correctness)
        cache.release(other);
        join(waiter);
        cache.release(mine);
    }

    @Test
    void untimedWaitUnusedReturnsWhenTheOtherHolderReleases() throws Exception {
        cache.create(KEY, 1, true);
        CacheEntry mine = cache.get(KEY, 1);
        CacheEntry other = cache.get(KEY, 1);
        Future<Void> waiter = inThread(() -> cache.waitUnused(mine));
        Thread.sleep(20);
        cache.release(other);
        join(waiter);
        cache.release(mine);
    }

    @Test
    void waitUnusedWaitsForEveryOtherHolder() throws Exception {
        cache.create(KEY, 1, true);
        CacheEntry mine = cache.get(KEY, 1);
        CacheEntry first = cache.get(KEY, 1);
        CacheEntry second = cache.get(KEY, 1);
        cache.release(first);
        assertFalse(cache.waitUnused(mine, 20, TimeUnit.MILLISECONDS), "one other holder is left");
        cache.release(second);
        assertTrue(cache.waitUnused(mine, PATIENCE_SECONDS, TimeUnit.SECONDS));
        cache.release(mine);
    }

    @Test
    void waitUnusedIsInterruptible() throws Exception {
        cache.create(KEY, 1, true);
        try (CacheEntry mine = cache.get(KEY, 1); CacheEntry other = cache.get(KEY, 1)) {
            Thread.currentThread().interrupt();
            assertThrows(InterruptedException.class, () -> cache.waitUnused(mine));
            assertFalse(Thread.interrupted(), "the interrupt status is cleared");
            Thread.currentThread().interrupt();
            assertThrows(InterruptedException.class, () -> cache.waitUnused(mine, PATIENCE_SECONDS, TimeUnit.SECONDS));
            Thread.interrupted();
        }
    }

    /** The interrupt policy (as {@code Lock.lockInterruptibly}): checked first, whatever the count. */
    @Test
    void waitUnusedOfAnInterruptedThreadThrowsEvenWhenTheEntryIsAlreadyUnused() {
        cache.create(KEY, 1, true);
        try (CacheEntry mine = cache.get(KEY, 1)) {
            Thread.currentThread().interrupt();
            assertThrows(InterruptedException.class, () -> cache.waitUnused(mine));
            assertFalse(Thread.interrupted(), "the interrupt status is cleared");
        }
    }

    @Test
    void timedWaitUnusedOfAnInterruptedThreadThrowsEvenWhenTheEntryIsAlreadyUnused() {
        cache.create(KEY, 1, true);
        try (CacheEntry mine = cache.get(KEY, 1)) {
            Thread.currentThread().interrupt();
            assertThrows(InterruptedException.class, () -> cache.waitUnused(mine, 0, TimeUnit.SECONDS));
            assertFalse(Thread.interrupted(), "the interrupt status is cleared");
        }
    }

    @Test
    void waitUnusedOfABlockedThreadIsInterruptible() throws Exception {
        cache.create(KEY, 1, true);
        CacheEntry mine = cache.get(KEY, 1);
        CacheEntry other = cache.get(KEY, 1);
        CountDownLatch started = new CountDownLatch(1);
        AtomicInteger interrupted = new AtomicInteger();
        Thread waiter = new Thread(() -> {
            started.countDown();
            try {
                cache.waitUnused(mine);
            } catch (InterruptedException e) {
                interrupted.incrementAndGet();
            }
        });
        waiter.setDaemon(true);
        waiter.start();
        started.await();
        Thread.sleep(20);
        waiter.interrupt();
        waiter.join(TimeUnit.SECONDS.toMillis(PATIENCE_SECONDS));
        assertFalse(waiter.isAlive(), "waiter still blocked after interrupt");
        assertEquals(1, interrupted.get());
        cache.release(other);
        cache.release(mine);
    }
}
