package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The hot mode of {@link MbCache.Entry}: its switch-over, and every decision on a hot entry. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HotEntryTest {
    private static final int KEY = 7;
    private static final long VALUE = 70;

    private MbCache cache;
    private ExecutorService other;

    @BeforeEach
    void setUp() {
        cache = MbCache.builder().bucketBits(4).maxEntries(1 << 20).executor(Runnable::run).build();
        other = Executors.newSingleThreadExecutor();
    }

    @AfterEach
    void tearDown() {
        other.shutdownNow();
        cache.close();
    }

    /** The pair, cached and switched to hot mode; nobody holds it. */
    private MbCache.Entry hotPair() {
        assertTrue(cache.create(KEY, VALUE, true));
        CacheEntry entry = cache.get(KEY, VALUE);
        assertTrue(HotEntries.makeHot(entry));
        cache.release(entry);
        return (MbCache.Entry) entry;
    }

    private <T> T onOtherThread(java.util.concurrent.Callable<T> task) throws Exception {
        return other.submit(task).get(10, TimeUnit.SECONDS);
    }

    @Test
    void contendedHitsSwitchTheEntryToHotMode() throws Exception {
        assertTrue(cache.create(KEY, VALUE, true));
        CacheEntry probe = cache.get(KEY, VALUE);
        cache.release(probe);
        assertFalse(HotEntries.isHot(probe));
        AtomicBoolean stop = new AtomicBoolean();
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Long>> hits = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                hits.add(pool.submit(() -> {
                    long n = 0;
                    while (!stop.get()) {
                        CacheEntry e = cache.findFirst(KEY);
                        assertSame(probe, e);
                        cache.touch(e);
                        cache.release(e);
                        n++;
                    }
                    return n;
                }));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!HotEntries.isHot(probe) && System.nanoTime() < deadline) {
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
        assertTrue(HotEntries.isHot(probe), "contended hits never switched the entry to hot mode");
        assertEquals(1, cache.hotEntries());
        // Every reference went back: the delete claims it at once, and the budget is given back.
        assertNull(cache.deleteOrGet(KEY, VALUE));
        assertNull(cache.get(KEY, VALUE));
        assertEquals(0, cache.hotEntries());
        assertEquals(0, cache.size());
    }

    @Test
    void aReferenceTakenOnOneThreadIsReleasedOnAnother() throws Exception {
        MbCache.Entry entry = hotPair();
        List<CacheEntry> taken = onOtherThread(() -> {
            List<CacheEntry> refs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                refs.add(cache.get(KEY, VALUE));
            }
            return refs;
        });
        assertTrue(entry.heldByAnyCaller());
        for (CacheEntry ref : taken) {
            assertSame(entry, ref);
            cache.release(ref);
        }
        assertFalse(entry.heldByAnyCaller());
        assertThrows(IllegalStateException.class, () -> cache.release(entry));
        assertNull(cache.deleteOrGet(KEY, VALUE));
        assertEquals(0, cache.hotEntries());
    }

    @Test
    void aReferenceTakenBeforeTheSwitchIsReleasedAfterIt() throws Exception {
        assertTrue(cache.create(KEY, VALUE, true));
        CacheEntry cold = cache.get(KEY, VALUE); // counted in the state word
        assertTrue(HotEntries.makeHot(cold));
        CacheEntry hot = onOtherThread(() -> cache.get(KEY, VALUE)); // counted in a cell
        cache.release(cold);
        onOtherThread(() -> {
            cache.release(hot);
            return null;
        });
        assertThrows(IllegalStateException.class, () -> cache.release(cold));
        assertNull(cache.deleteOrGet(KEY, VALUE));
    }

    @Test
    void overReleaseIsRefusedInHotModeAndChangesNothing() throws Exception {
        MbCache.Entry entry = hotPair();
        CacheEntry held = cache.get(KEY, VALUE);
        CacheEntry second = onOtherThread(() -> cache.get(KEY, VALUE));
        cache.release(held);
        onOtherThread(() -> {
            cache.release(second);
            return null;
        });
        assertThrows(IllegalStateException.class, () -> cache.release(held));
        assertThrows(IllegalStateException.class, () -> onOtherThreadRelease(held));
        // Nothing changed: the pair is cached, one new reference is exactly one.
        CacheEntry again = cache.get(KEY, VALUE);
        assertSame(entry, again);
        assertSame(entry, cache.deleteOrGet(KEY, VALUE)); // held: handed over
        cache.release(again);
        cache.release(entry);
        assertThrows(IllegalStateException.class, () -> cache.release(entry));
        assertNull(cache.deleteOrGet(KEY, VALUE));
        assertThrows(IllegalStateException.class, () -> cache.release(entry)); // dead
    }

    private void onOtherThreadRelease(CacheEntry entry) throws Exception {
        try {
            onOtherThread(() -> {
                cache.release(entry);
                return null;
            });
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof IllegalStateException refused) {
                throw refused;
            }
            throw e;
        }
    }

    @Test
    void deleteOrGetHandsOverAHeldHotEntry() throws Exception {
        MbCache.Entry entry = hotPair();
        CacheEntry held = onOtherThread(() -> cache.get(KEY, VALUE));
        CacheEntry handed = cache.deleteOrGet(KEY, VALUE);
        assertSame(entry, handed);
        assertSame(entry, cache.get(KEY, VALUE)); // still cached
        cache.release(entry); // that get
        cache.release(handed);
        assertSame(entry, cache.deleteOrGet(KEY, VALUE)); // the other thread still holds it
        cache.release(entry);
        onOtherThread(() -> {
            cache.release(held);
            return null;
        });
        assertNull(cache.deleteOrGet(KEY, VALUE));
        assertNull(cache.get(KEY, VALUE));
        assertEquals(0, cache.hotEntries());
    }

    @Test
    void reclaimNeverFreesAHeldHotEntry() throws Exception {
        MbCache.Entry entry = hotPair();
        assertTrue(cache.create(KEY + 1, VALUE, true));
        CacheEntry held = onOtherThread(() -> cache.get(KEY, VALUE));
        cache.shrink(Long.MAX_VALUE);
        cache.shrink(Long.MAX_VALUE); // the second pass after the second chance
        assertNull(cache.get(KEY + 1, VALUE));
        CacheEntry again = cache.get(KEY, VALUE);
        assertSame(entry, again);
        cache.release(again);
        onOtherThread(() -> {
            cache.release(held);
            return null;
        });
        cache.shrink(Long.MAX_VALUE);
        cache.shrink(Long.MAX_VALUE);
        assertNull(cache.get(KEY, VALUE));
        assertEquals(0, cache.size());
        assertEquals(0, cache.hotEntries());
        assertFalse(entry.tryAcquire());
    }

    @Test
    void waitUnusedWakesWhenTheLastOtherHolderOfAHotEntryLeaves() throws Exception {
        MbCache.Entry entry = hotPair();
        CacheEntry first = onOtherThread(() -> cache.get(KEY, VALUE));
        CacheEntry secondHolder = cache.get(KEY, VALUE);
        CacheEntry deleters = cache.deleteOrGet(KEY, VALUE);
        assertSame(entry, deleters);
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
        assertFalse(woke.isDone(), "woke while another holder still held the entry");
        long released = System.nanoTime();
        onOtherThread(() -> {
            cache.release(first);
            return null;
        });
        assertTrue(woke.get(10, TimeUnit.SECONDS));
        assertTrue(System.nanoTime() - released < TimeUnit.SECONDS.toNanos(5));
        cache.release(deleters);
        assertNull(cache.deleteOrGet(KEY, VALUE));
    }

    @Test
    void findNextChecksThatTheCallerHoldsAHotEntry() throws Exception {
        MbCache.Entry entry = hotPair();
        CacheEntry held = onOtherThread(() -> cache.findFirst(KEY));
        assertSame(entry, held);
        assertNull(cache.findNext(held)); // releases it
        assertThrows(IllegalStateException.class, () -> cache.findNext(entry));
        assertNull(cache.deleteOrGet(KEY, VALUE));
    }

    @Test
    void atMostMaxHotEntriesAreHotAndDeadOnesGiveTheirPlaceBack() {
        List<CacheEntry> entries = new ArrayList<>();
        for (int i = 0; i <= HotReferences.MAX_HOT_ENTRIES; i++) {
            assertTrue(cache.create(i, VALUE, true));
            CacheEntry e = cache.get(i, VALUE);
            entries.add(e);
            assertEquals(i < HotReferences.MAX_HOT_ENTRIES, HotEntries.makeHot(e));
        }
        assertEquals(HotReferences.MAX_HOT_ENTRIES, cache.hotEntries());
        for (CacheEntry e : entries) {
            cache.release(e);
        }
        assertNull(cache.deleteOrGet(0, VALUE));
        assertEquals(HotReferences.MAX_HOT_ENTRIES - 1, cache.hotEntries());
        CacheEntry last = cache.get(HotReferences.MAX_HOT_ENTRIES, VALUE);
        assertTrue(HotEntries.makeHot(last));
        cache.release(last);
        cache.close();
        assertEquals(0, cache.hotEntries());
    }

    @Test
    void concurrentHitsReleasesClaimsAndWaitsOnAHotEntryKeepItsCountExact() throws Exception {
        MbCache.Entry entry = hotPair();
        CacheEntry anchor = cache.get(KEY, VALUE); // keeps every claim failing
        AtomicBoolean stop = new AtomicBoolean();
        java.util.concurrent.ConcurrentLinkedQueue<CacheEntry> handedOver = new java.util.concurrent.ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                workers.add(pool.submit(() -> {
                    List<CacheEntry> held = new ArrayList<>();
                    int i = 0;
                    while (!stop.get()) {
                        CacheEntry e = cache.get(KEY, VALUE);
                        assertNotNull(e, "a claim freed a held hot entry");
                        held.add(e);
                        if (++i % 3 == 0) {
                            for (CacheEntry h : held) {
                                cache.release(h);
                            }
                            held.clear();
                        }
                        if (i % 5 == 0) {
                            // References taken here, released by whichever worker polls them.
                            handedOver.add(cache.get(KEY, VALUE));
                            CacheEntry other = handedOver.poll();
                            if (other != null) {
                                cache.release(other);
                            }
                        }
                    }
                    for (CacheEntry h : held) {
                        cache.release(h);
                    }
                    return null;
                }));
            }
            workers.add(pool.submit(() -> {
                while (!stop.get()) {
                    // A claim may only fail here: the workers hold the entry from setup to the end.
                    cache.shrink(Long.MAX_VALUE);
                    CacheEntry handed = cache.deleteOrGet(KEY, VALUE);
                    if (handed != null) {
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
            for (CacheEntry left; (left = handedOver.poll()) != null; ) {
                cache.release(left);
            }
            assertSame(entry, cache.get(KEY, VALUE));
            cache.release(entry);
            cache.release(anchor);
        } finally {
            pool.shutdownNow();
        }
        assertFalse(entry.heldByAnyCaller());
        assertThrows(IllegalStateException.class, () -> cache.release(entry));
        assertNull(cache.deleteOrGet(KEY, VALUE));
        assertEquals(0, cache.hotEntries());
    }
}
