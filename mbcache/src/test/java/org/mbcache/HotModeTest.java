package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
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
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.mbcache.testing.Backend;

/**
 * The hot mode of the kernel port ({@link HotReferences}): the switch-over under contended hits, and
 * every decision on a hot entry (references taken and released on different threads, over-release,
 * hand-over on delete, claims by delete and reclaim, {@code waitUnused}, {@code findNext}'s check,
 * the cap on hot entries). Written once through the {@link DedupCache} API and run against both
 * layouts that share the protocol: {@link MbCache}'s entry objects and {@link CompactMbCache}'s
 * slots. Compact slot reuse and the handle API: {@link CompactHotSlotTest}; {@code ListEntry}'s
 * own counters: {@link MbCacheHotEntryTest}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@ParameterizedClass(name = "{0}")
@EnumSource(value = Backend.class, names = {"MBCACHE_REQUEST_LIST", "COMPACT"})
class HotModeTest {
    private static final int KEY = 7;
    private static final long VALUE = 70;

    /** The layout under test. */
    @Parameter
    Backend backend;

    private DedupCache cache;
    private OtherThread other;

    @BeforeEach
    void setUp() {
        cache = backend.open(4, 1 << 12, Runnable::run);
        other = new OtherThread();
    }

    @AfterEach
    void tearDown() {
        other.close();
        cache.close();
    }

    /** The pair, cached and switched to hot mode; nobody holds it. */
    private CacheEntry hotPair() {
        assertTrue(cache.create(KEY, VALUE, true));
        CacheEntry entry = cache.get(KEY, VALUE);
        assertTrue(HotEntries.makeHot(entry));
        cache.release(entry);
        return entry;
    }

    private int hotEntries() {
        return HotEntries.hotEntries(cache);
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
                        assertEquals(probe, e);
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
        assertEquals(1, hotEntries());
        // Every reference went back: the delete claims it at once, and the hot place is given back.
        assertNull(cache.deleteOrGet(KEY, VALUE));
        assertNull(cache.get(KEY, VALUE));
        assertEquals(0, hotEntries());
        assertEquals(0, cache.size());
    }

    @Test
    void aReferenceTakenOnOneThreadIsReleasedOnAnother() throws Exception {
        CacheEntry entry = hotPair();
        List<CacheEntry> taken = other.call(() -> {
            List<CacheEntry> refs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                refs.add(cache.get(KEY, VALUE));
            }
            return refs;
        });
        for (CacheEntry ref : taken) {
            assertEquals(entry, ref);
            cache.release(ref);
        }
        assertThrows(IllegalStateException.class, () -> cache.release(entry));
        assertNull(cache.deleteOrGet(KEY, VALUE)); // nobody holds it: claimed at once
        assertEquals(0, hotEntries());
    }

    @Test
    void aReferenceTakenBeforeTheSwitchIsReleasedAfterIt() throws Exception {
        assertTrue(cache.create(KEY, VALUE, true));
        CacheEntry cold = cache.get(KEY, VALUE); // counted in the state word
        assertTrue(HotEntries.makeHot(cold));
        CacheEntry hot = other.call(() -> cache.get(KEY, VALUE)); // counted in a cell
        cache.release(cold);
        other.run(() -> cache.release(hot));
        assertThrows(IllegalStateException.class, () -> cache.release(cold));
        assertNull(cache.deleteOrGet(KEY, VALUE));
    }

    @Test
    void overReleaseIsRefusedInHotModeAndChangesNothing() throws Exception {
        CacheEntry entry = hotPair();
        CacheEntry held = cache.get(KEY, VALUE);
        CacheEntry second = other.call(() -> cache.get(KEY, VALUE));
        cache.release(held);
        other.run(() -> cache.release(second));
        assertThrows(IllegalStateException.class, () -> cache.release(held));
        assertThrows(IllegalStateException.class, () -> other.run(() -> cache.release(held)));
        // Nothing changed: the pair is cached, one new reference is exactly one.
        CacheEntry again = cache.get(KEY, VALUE);
        assertEquals(entry, again);
        assertEquals(entry, cache.deleteOrGet(KEY, VALUE)); // held: handed over
        cache.release(again);
        cache.release(entry);
        assertThrows(IllegalStateException.class, () -> cache.release(entry));
        assertNull(cache.deleteOrGet(KEY, VALUE));
        assertThrows(IllegalStateException.class, () -> cache.release(entry)); // dead
    }

    @Test
    void deleteOrGetHandsOverAHeldHotEntry() throws Exception {
        CacheEntry entry = hotPair();
        CacheEntry held = other.call(() -> cache.get(KEY, VALUE));
        CacheEntry handed = cache.deleteOrGet(KEY, VALUE);
        assertEquals(entry, handed);
        assertEquals(entry, cache.get(KEY, VALUE)); // still cached
        cache.release(entry); // that get
        cache.release(handed);
        assertEquals(entry, cache.deleteOrGet(KEY, VALUE)); // the other thread still holds it
        cache.release(entry);
        other.run(() -> cache.release(held));
        assertNull(cache.deleteOrGet(KEY, VALUE));
        assertNull(cache.get(KEY, VALUE));
        assertEquals(0, hotEntries());
    }

    @Test
    void reclaimNeverFreesAHotEntryThatAnotherThreadHolds() throws Exception {
        CacheEntry entry = hotPair();
        assertTrue(cache.create(KEY + 1, VALUE, true));
        CacheEntry held = other.call(() -> cache.get(KEY, VALUE));
        cache.shrink(Long.MAX_VALUE);
        cache.shrink(Long.MAX_VALUE); // the second pass after the second chance
        assertNull(cache.get(KEY + 1, VALUE));
        CacheEntry again = cache.get(KEY, VALUE);
        assertEquals(entry, again);
        cache.release(again);
        other.run(() -> cache.release(held));
        cache.shrink(Long.MAX_VALUE);
        cache.shrink(Long.MAX_VALUE);
        assertNull(cache.get(KEY, VALUE));
        assertEquals(0, cache.size());
        assertEquals(0, hotEntries());
    }

    @Test
    void waitUnusedWakesWhenTheLastOtherHolderOfAHotEntryLeaves() throws Exception {
        CacheEntry entry = hotPair();
        CacheEntry first = other.call(() -> cache.get(KEY, VALUE));
        CacheEntry secondHolder = cache.get(KEY, VALUE);
        CacheEntry deleters = cache.deleteOrGet(KEY, VALUE);
        assertEquals(entry, deleters);
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
        other.run(() -> cache.release(first));
        assertTrue(woke.get(10, TimeUnit.SECONDS));
        assertTrue(System.nanoTime() - released < TimeUnit.SECONDS.toNanos(5));
        cache.release(deleters);
        assertNull(cache.deleteOrGet(KEY, VALUE));
    }

    @Test
    void findNextChecksThatTheCallerHoldsAHotEntry() throws Exception {
        CacheEntry entry = hotPair();
        CacheEntry held = other.call(() -> cache.findFirst(KEY));
        assertEquals(entry, held);
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
        assertEquals(HotReferences.MAX_HOT_ENTRIES, hotEntries());
        for (CacheEntry e : entries) {
            cache.release(e);
        }
        assertNull(cache.deleteOrGet(0, VALUE));
        assertEquals(HotReferences.MAX_HOT_ENTRIES - 1, hotEntries());
        CacheEntry last = cache.get(HotReferences.MAX_HOT_ENTRIES, VALUE);
        assertTrue(HotEntries.makeHot(last));
        cache.release(last);
        cache.close();
        assertEquals(0, hotEntries());
    }

    @Test
    void hotEntriesThatShareAPlaceInTheCellTableCountTheirReferencesApart() throws Exception {
        // Keys (an entry's first place) and slots (a compact slot's) 16 apart share a place of the
        // cache's HotCellTable: pairs 16 apart, switched one after the other, sit each at the next
        // free place, and every lookup but the first of a place scans past another entry's cells.
        int places = HotReferences.MAX_HOT_ENTRIES;
        for (int i = 0; i < 2 * places; i++) {
            assertTrue(cache.create(KEY + 16 * i, VALUE, true));
        }
        List<CacheEntry> hot = new ArrayList<>();
        for (int i = 0; i < places / 2; i++) {
            for (int j : new int[] {i, i + places}) {
                CacheEntry e = cache.get(KEY + 16 * j, VALUE);
                assertTrue(HotEntries.makeHot(e));
                cache.release(e);
                hot.add(e);
            }
        }
        assertEquals(places, hotEntries());
        CacheEntry spare = cache.get(KEY + 16 * (places / 2), VALUE);
        assertFalse(HotEntries.makeHot(spare)); // every place is taken
        // The n-th hot entry: n + 1 references, taken on another thread (in its cells).
        other.run(() -> {
            for (int n = 0; n < places; n++) {
                for (int r = 0; r <= n; r++) {
                    assertEquals(hot.get(n), cache.get(hot.get(n).key(), VALUE));
                }
            }
        });
        for (int n = 0; n < places; n++) {
            CacheEntry e = hot.get(n);
            for (int r = 0; r <= n; r++) {
                cache.release(e);
            }
            // Exactly its own: no unit of another entry's cells is taken for it.
            assertThrows(IllegalStateException.class, () -> cache.release(e));
            assertNull(cache.deleteOrGet(e.key(), VALUE));
            assertEquals(places - 1 - n, hotEntries());
            if (n == 0) {
                // The place given back goes to the next switch, of a pair whose first place is taken.
                assertTrue(HotEntries.makeHot(spare));
                assertEquals(places, hotEntries());
                CacheEntry twice = other.call(() -> cache.get(spare.key(), VALUE));
                assertEquals(spare, twice);
                cache.release(twice);
                cache.release(spare);
                assertThrows(IllegalStateException.class, () -> cache.release(spare));
                assertNull(cache.deleteOrGet(spare.key(), VALUE));
                assertEquals(places - 1, hotEntries());
            }
        }
        assertEquals(0, hotEntries());
    }

    @Test
    void closeRacingHotHitsAndSwitchesGivesEveryHotPlaceBack() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 40; round++) {
                cache.close();
                cache = backend.open(4, 1 << 12, Runnable::run);
                CacheEntry entry = hotPair();
                CountDownLatch started = new CountDownLatch(2);
                Future<?> hits = pool.submit(() -> {
                    started.countDown();
                    try {
                        for (;;) {
                            // Never a miss: a lookup overlapping close() answers as before it, or throws.
                            assertEquals(entry, cache.get(KEY, VALUE));
                            cache.release(entry);
                        }
                    } catch (IllegalStateException closed) {
                        assertEquals("cache is closed", closed.getMessage());
                    }
                    return null;
                });
                Future<?> switches = pool.submit(() -> {
                    started.countDown();
                    try {
                        // Each pair switched, then claimed: its cells published, then retired.
                        for (int key = KEY + 1; ; key++) {
                            assertTrue(cache.create(key, VALUE, true));
                            CacheEntry e = cache.get(key, VALUE);
                            HotEntries.makeHot(e);
                            cache.release(e);
                            assertNull(cache.deleteOrGet(key, VALUE));
                        }
                    } catch (IllegalStateException closed) {
                        assertEquals("cache is closed", closed.getMessage());
                    }
                    return null;
                });
                started.await();
                Thread.sleep(round % 5);
                cache.close();
                hits.get(20, TimeUnit.SECONDS);
                switches.get(20, TimeUnit.SECONDS);
                assertEquals(0, hotEntries(), "hot places left taken after close, round " + round);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void concurrentHitsReleasesClaimsAndWaitsOnAHotEntryKeepItsCountExact() throws Exception {
        CacheEntry entry = hotPair();
        CacheEntry anchor = cache.get(KEY, VALUE); // keeps every claim failing
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<CacheEntry> handedOver = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                workers.add(pool.submit(() -> {
                    List<CacheEntry> held = new ArrayList<>();
                    int i = 0;
                    while (!stop.get()) {
                        CacheEntry e = cache.get(KEY, VALUE);
                        assertEquals(entry, e, "a claim freed a held hot entry");
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
                            CacheEntry otherRef = handedOver.poll();
                            if (otherRef != null) {
                                cache.release(otherRef);
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
                    // A claim may only fail here: the anchor holds the entry from setup to the end.
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
            assertEquals(entry, cache.get(KEY, VALUE));
            cache.release(entry);
            cache.release(anchor);
        } finally {
            pool.shutdownNow();
        }
        assertThrows(IllegalStateException.class, () -> cache.release(entry));
        assertNull(cache.deleteOrGet(KEY, VALUE)); // nobody holds it: claimed at once
        assertEquals(0, hotEntries());
    }
}
