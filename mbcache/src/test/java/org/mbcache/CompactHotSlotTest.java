package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The hot mode of {@link CompactMbCache}'s slots ({@link HotReferences}): {@link HotEntryTest}'s
 * specifications on the compact layout, plus slot reuse: a hot slot's cells never outlive its pair.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CompactHotSlotTest {
    private static final int KEY = 7;
    private static final long VALUE = 70;

    private CompactMbCache cache;
    private ExecutorService other;

    @BeforeEach
    void setUp() {
        cache = CompactMbCache.builder().bucketBits(0).maxEntries(1 << 12).executor(Runnable::run).build();
        other = Executors.newSingleThreadExecutor();
    }

    @AfterEach
    void tearDown() {
        other.shutdownNow();
        cache.close();
    }

    /** The pair, cached and switched to hot mode; nobody holds it. Its handle. */
    private long hotPair() {
        assertTrue(cache.create(KEY, VALUE, true));
        long handle = cache.getHandle(KEY, VALUE);
        assertTrue(HotEntries.makeHot(cache, handle));
        cache.release(handle);
        return handle;
    }

    private <T> T onOtherThread(Callable<T> task) throws Exception {
        try {
            return other.submit(task).get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IllegalStateException refused) {
                throw refused;
            }
            throw e;
        }
    }

    private void releaseOnOtherThread(long handle) throws Exception {
        onOtherThread(() -> {
            cache.release(handle);
            return null;
        });
    }

    @Test
    void contendedHitsSwitchTheSlotToHotMode() throws Exception {
        assertTrue(cache.create(KEY, VALUE, true));
        long probe = cache.getHandle(KEY, VALUE);
        cache.release(probe);
        assertFalse(HotEntries.isHot(cache, probe));
        AtomicBoolean stop = new AtomicBoolean();
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Long>> hits = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                hits.add(pool.submit(() -> {
                    long n = 0;
                    while (!stop.get()) {
                        long h = cache.findFirstHandle(KEY);
                        assertEquals(probe, h);
                        cache.touch(h);
                        cache.release(h);
                        n++;
                    }
                    return n;
                }));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!HotEntries.isHot(cache, probe) && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            Thread.sleep(50); // some hits in hot mode too
            stop.set(true);
            for (Future<Long> f : hits) {
                assertTrue(f.get() > 0);
            }
        } finally {
            pool.shutdownNow();
        }
        assertTrue(HotEntries.isHot(cache, probe), "contended hits never switched the slot to hot mode");
        assertEquals(1, cache.hotSlots());
        // Every reference went back: the delete claims it at once, and the cells are retired.
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
        assertEquals(CompactMbCache.NO_ENTRY, cache.getHandle(KEY, VALUE));
        assertEquals(0, cache.hotSlots());
        assertEquals(0, cache.size());
    }

    @Test
    void aReferenceTakenOnOneThreadIsReleasedOnAnother() throws Exception {
        long handle = hotPair();
        List<Long> taken = onOtherThread(() -> {
            List<Long> refs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                refs.add(cache.getHandle(KEY, VALUE));
            }
            return refs;
        });
        for (long ref : taken) {
            assertEquals(handle, ref);
            cache.release(ref);
        }
        assertThrows(IllegalStateException.class, () -> cache.release(handle));
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
        assertEquals(0, cache.hotSlots());
    }

    @Test
    void aReferenceTakenBeforeTheSwitchIsReleasedAfterIt() throws Exception {
        assertTrue(cache.create(KEY, VALUE, true));
        long cold = cache.getHandle(KEY, VALUE); // counted in the meta word
        assertTrue(HotEntries.makeHot(cache, cold));
        long hot = onOtherThread(() -> cache.getHandle(KEY, VALUE)); // counted in a cell
        cache.release(cold);
        releaseOnOtherThread(hot);
        assertThrows(IllegalStateException.class, () -> cache.release(cold));
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
    }

    @Test
    void overReleaseIsRefusedInHotModeAndChangesNothing() throws Exception {
        long handle = hotPair();
        long held = cache.getHandle(KEY, VALUE);
        long second = onOtherThread(() -> cache.getHandle(KEY, VALUE));
        cache.release(held);
        releaseOnOtherThread(second);
        assertThrows(IllegalStateException.class, () -> cache.release(held));
        assertThrows(IllegalStateException.class, () -> releaseOnOtherThread(held));
        // Nothing changed: the pair is cached, one new reference is exactly one.
        long again = cache.getHandle(KEY, VALUE);
        assertEquals(handle, again);
        assertEquals(handle, cache.deleteOrGetHandle(KEY, VALUE)); // held: handed over
        cache.release(again);
        cache.release(handle);
        assertThrows(IllegalStateException.class, () -> cache.release(handle));
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
        assertThrows(IllegalStateException.class, () -> cache.release(handle)); // dead
    }

    @Test
    void claimsAreRefusedWhileAHotHolderExists() throws Exception {
        long handle = hotPair();
        assertTrue(cache.create(KEY + 1, VALUE, true));
        long held = onOtherThread(() -> cache.getHandle(KEY, VALUE));
        assertEquals(handle, cache.deleteOrGetHandle(KEY, VALUE)); // handed over, not deleted
        cache.release(handle);
        cache.shrink(Long.MAX_VALUE);
        cache.shrink(Long.MAX_VALUE); // the second pass after the second chance
        assertEquals(CompactMbCache.NO_ENTRY, cache.getHandle(KEY + 1, VALUE));
        long again = cache.getHandle(KEY, VALUE);
        assertEquals(handle, again);
        cache.release(again);
        releaseOnOtherThread(held);
        cache.shrink(Long.MAX_VALUE);
        cache.shrink(Long.MAX_VALUE);
        assertEquals(CompactMbCache.NO_ENTRY, cache.getHandle(KEY, VALUE));
        assertEquals(0, cache.size());
        assertEquals(0, cache.hotSlots());
    }

    @Test
    void waitUnusedWakesWhenTheLastOtherHolderOfAHotSlotLeaves() throws Exception {
        long handle = hotPair();
        long first = onOtherThread(() -> cache.getHandle(KEY, VALUE));
        long secondHolder = cache.getHandle(KEY, VALUE);
        long deleters = cache.deleteOrGetHandle(KEY, VALUE);
        assertEquals(handle, deleters);
        CountDownLatch waiting = new CountDownLatch(1);
        CompletableFuture<Boolean> woke = CompletableFuture.supplyAsync(() -> {
            waiting.countDown();
            try {
                return cache.waitUnused(deleters, 20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        waiting.await();
        Thread.sleep(100);
        assertFalse(woke.isDone());
        cache.release(secondHolder);
        Thread.sleep(100);
        assertFalse(woke.isDone(), "woke while another holder still held the slot");
        long released = System.nanoTime();
        releaseOnOtherThread(first);
        assertTrue(woke.get(10, TimeUnit.SECONDS));
        assertTrue(System.nanoTime() - released < TimeUnit.SECONDS.toNanos(5));
        cache.release(deleters);
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
    }

    @Test
    void findNextChecksThatTheCallerHoldsAHotSlot() throws Exception {
        long handle = hotPair();
        long held = onOtherThread(() -> cache.findFirstHandle(KEY));
        assertEquals(handle, held);
        assertEquals(CompactMbCache.NO_ENTRY, cache.findNextHandle(held)); // releases it
        assertThrows(IllegalStateException.class, () -> cache.findNextHandle(handle));
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
    }

    @Test
    void atMostMaxHotSlotsAreHotAndDeadOnesGiveTheirPlaceBack() {
        List<Long> handles = new ArrayList<>();
        for (int i = 0; i <= HotReferences.MAX_HOT_ENTRIES; i++) {
            assertTrue(cache.create(i, VALUE, true));
            long h = cache.getHandle(i, VALUE);
            handles.add(h);
            assertEquals(i < HotReferences.MAX_HOT_ENTRIES, HotEntries.makeHot(cache, h));
        }
        assertEquals(HotReferences.MAX_HOT_ENTRIES, cache.hotSlots());
        for (long h : handles) {
            cache.release(h);
        }
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(0, VALUE));
        assertEquals(HotReferences.MAX_HOT_ENTRIES - 1, cache.hotSlots());
        long last = cache.getHandle(HotReferences.MAX_HOT_ENTRIES, VALUE);
        assertTrue(HotEntries.makeHot(cache, last));
        cache.release(last);
        cache.close();
        assertEquals(0, cache.hotSlots());
    }

    @Test
    void aDeletedHotSlotIsReusedColdWithoutCells() {
        long old = hotPair();
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
        assertEquals(0, cache.hotSlots());
        assertTrue(cache.create(KEY, VALUE + 1, true)); // the free list hands the same slot back
        long fresh = cache.getHandle(KEY, VALUE + 1);
        assertEquals((int) old, (int) fresh, "the slot was reused");
        assertNotEquals(old, fresh);
        assertFalse(HotEntries.isHot(cache, fresh));
        assertFalse(HotEntries.isHot(cache, old));
        assertThrows(IllegalStateException.class, () -> cache.release(old));
        cache.release(fresh);
        assertThrows(IllegalStateException.class, () -> cache.release(fresh)); // exact: cold count 1
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE + 1));
    }

    @Test
    void aReclaimedHotSlotIsReusedColdWithoutCells() {
        long old = hotPair();
        cache.shrink(Long.MAX_VALUE);
        cache.shrink(Long.MAX_VALUE);
        assertEquals(0, cache.size());
        assertEquals(0, cache.hotSlots());
        assertTrue(cache.create(KEY + 1, VALUE, true));
        long fresh = cache.getHandle(KEY + 1, VALUE);
        assertEquals((int) old, (int) fresh, "the slot was reused");
        assertFalse(HotEntries.isHot(cache, fresh));
        assertTrue(HotEntries.makeHot(cache, fresh)); // and may become hot afresh, with new cells
        assertEquals(1, cache.hotSlots());
        cache.release(fresh);
        assertThrows(IllegalStateException.class, () -> cache.release(fresh));
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY + 1, VALUE));
        assertEquals(0, cache.hotSlots());
    }

    @Test
    void entryObjectsOfAHotSlotAreTheSameObject() throws Exception {
        hotPair();
        CacheEntry mine = cache.get(KEY, VALUE);
        CacheEntry theirs = onOtherThread(() -> cache.get(KEY, VALUE));
        assertSame(mine, theirs);
        assertTrue(HotEntries.isHot(mine));
        cache.release(theirs);
        cache.release(mine);
        assertThrows(IllegalStateException.class, () -> cache.release(mine));
        assertNull(cache.deleteOrGet(KEY, VALUE));
    }

    @Test
    void concurrentHitsReleasesClaimsAndWaitsOnAHotSlotKeepItsCountExact() throws Exception {
        long handle = hotPair();
        long anchor = cache.getHandle(KEY, VALUE); // keeps every claim failing
        AtomicBoolean stop = new AtomicBoolean();
        java.util.concurrent.ConcurrentLinkedQueue<Long> handedOver = new java.util.concurrent.ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                workers.add(pool.submit(() -> {
                    List<Long> held = new ArrayList<>();
                    int i = 0;
                    while (!stop.get()) {
                        long h = cache.getHandle(KEY, VALUE);
                        assertEquals(handle, h, "a claim freed a held hot slot");
                        held.add(h);
                        if (++i % 3 == 0) {
                            for (long x : held) {
                                cache.release(x);
                            }
                            held.clear();
                        }
                        if (i % 5 == 0) {
                            handedOver.add(cache.getHandle(KEY, VALUE));
                            Long otherRef = handedOver.poll();
                            if (otherRef != null) {
                                cache.release(otherRef);
                            }
                        }
                    }
                    for (long x : held) {
                        cache.release(x);
                    }
                    return null;
                }));
            }
            workers.add(pool.submit(() -> {
                while (!stop.get()) {
                    cache.shrink(Long.MAX_VALUE);
                    long handed = cache.deleteOrGetHandle(KEY, VALUE);
                    if (handed != CompactMbCache.NO_ENTRY) {
                        cache.release(handed);
                    }
                    Thread.yield();
                }
                return null;
            }));
            Thread.sleep(2000);
            stop.set(true);
            for (Future<?> f : workers) {
                f.get(20, TimeUnit.SECONDS);
            }
            for (Long left; (left = handedOver.poll()) != null; ) {
                cache.release(left);
            }
            cache.release(anchor);
        } finally {
            pool.shutdownNow();
        }
        assertThrows(IllegalStateException.class, () -> cache.release(handle));
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
        assertEquals(0, cache.hotSlots());
    }
}
