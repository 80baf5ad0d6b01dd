package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Racing acquires across a cold pair's caller limit ({@link CompactSlots#MAX_COLD_CALLERS}), with and without hot budget left, through
 * getHandle, findFirstHandle, deleteOrGetHandle, findNextHandle and findFirstHandles: every acquire
 * either takes exactly one reference or throws, and the count is exact afterwards.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AdversarySaturationRaceTest {

    private static final int KEY = 0xABCDEF;
    private static final long VALUE = 5;

    @Test
    void withHotBudgetSpent() throws Exception {
        race(true);
    }

    @Test
    void withHotBudgetLeft() throws Exception {
        race(false);
    }

    private static void race(boolean spendHotBudget) throws Exception {
        try (CompactMbCache cache = CompactMbCache.builder().bucketBits(4).maxEntries(1024).executor(Runnable::run)
                .memoryPressureReclaim(false).hashSeed(1).build()) {
            List<Long> hot = new ArrayList<>();
            if (spendHotBudget) {
                for (int i = 0; i < HotReferences.MAX_HOT_ENTRIES; i++) {
                    assertTrue(cache.create(i, i, true));
                    long other = cache.getHandle(i, i);
                    assertTrue(HotEntries.makeHot(cache, other));
                    hot.add(other);
                }
            }
            assertTrue(cache.create(KEY, VALUE + 1, true)); // an older pair of the key, for findNext
            assertTrue(cache.create(KEY, VALUE, true));
            long handle = cache.getHandle(KEY, VALUE);
            int base = CompactSlots.MAX_COLD_CALLERS - 16;
            for (int i = 1; i < base; i++) {
                assertEquals(handle, cache.getHandle(KEY, VALUE));
            }
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            int threads = 4;
            for (int round = 0; round < 300 && failures.isEmpty(); round++) {
                CyclicBarrier barrier = new CyclicBarrier(threads);
                List<Thread> list = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int kind = (t + round) % 5;
                    list.add(new Thread(() -> {
                        List<Long> got = new ArrayList<>();
                        try {
                            barrier.await();
                            for (int i = 0; i < 6; i++) {
                                try {
                                    switch (kind) {
                                        case 0 -> got.add(cache.getHandle(KEY, VALUE));
                                        case 1 -> got.add(cache.findFirstHandle(KEY));
                                        case 2 -> got.add(cache.deleteOrGetHandle(KEY, VALUE));
                                        case 3 -> {
                                            long[] hs = new long[3];
                                            cache.findFirstHandles(new int[] {KEY, KEY + 7, KEY}, hs);
                                            for (long h : hs) {
                                                if (h != CompactMbCache.NO_ENTRY) {
                                                    got.add(h);
                                                }
                                            }
                                        }
                                        default -> {
                                            long older = cache.getHandle(KEY, VALUE + 1);
                                            // findNext from the older pair: nothing older (reusable), so NO_ENTRY.
                                            long next = cache.findNextHandle(older);
                                            if (next != CompactMbCache.NO_ENTRY) {
                                                got.add(next);
                                            }
                                        }
                                    }
                                } catch (IllegalStateException refused) {
                                    if (!refused.getMessage().contains("too many references")) {
                                        throw refused;
                                    }
                                }
                            }
                            for (long h : got) {
                                if (h == CompactMbCache.NO_ENTRY) {
                                    throw new AssertionError("a lookup of a held pair missed");
                                }
                                cache.release(h);
                            }
                        } catch (Throwable failure) {
                            failures.add(failure);
                        }
                    }));
                }
                list.forEach(Thread::start);
                for (Thread thread : list) {
                    thread.join();
                }
            }
            if (!failures.isEmpty()) {
                AssertionError error = new AssertionError("saturation race failed: " + failures.peek());
                failures.forEach(error::addSuppressed);
                throw error;
            }
            for (int i = 0; i < base; i++) {
                cache.release(handle);
            }
            assertThrows(IllegalStateException.class, () -> cache.release(handle), "a reference leaked or was lost");
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE), "a reference leaked");
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE + 1), "a reference leaked (older)");
            hot.forEach(cache::release);
        }
    }
}
