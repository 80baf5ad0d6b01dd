package org.mbcache.caffeine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mbcache.contract.Pairs.isCached;

import com.github.benmanes.caffeine.cache.RemovalCause;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mbcache.CacheEntry;
import org.mbcache.contract.WaitQueueFaults;

/**
 * What only the Caffeine backend promises: its builder, its executor, and the size bound when the
 * executor falls behind. The shared contract is in {@code org.mbcache.contract}.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class CaffeineDedupCacheTest {

    /**
     * A lookup whose key's group keeps changing under it (another thread creating and deleting a
     * newest value that is not reusable, which every walk passes over, so that it reads the group
     * again) walks under the key's lock once three lock-free walks found the group changed, so that
     * the writer cannot keep it from ending; and it still answers the newest reusable value.
     */
    @Test
    void aLookupWhoseGroupKeepsChangingUnderItWalksUnderTheKeysLock() throws InterruptedException {
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(1024).executor(Runnable::run).build()) {
            cache.create(7, 1, true);
            AtomicBoolean stop = new AtomicBoolean();
            Thread writer = new Thread(() -> {
                for (long value = 100; !stop.get(); value++) {
                    cache.create(7, value, false);
                    CacheEntry held = cache.deleteOrGet(7, value);
                    if (held != null) {
                        cache.release(held);
                    }
                }
            }, "group-changer");
            writer.start();
            try {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
                while (cache.lockedWalks() == 0 && System.nanoTime() < deadline) {
                    try (CacheEntry found = cache.findFirst(7)) {
                        assertEquals(1, found.value());
                    }
                }
                assertTrue(cache.lockedWalks() > 0, "no lookup walked under the key's lock in 15 s");
            } finally {
                stop.set(true);
                writer.join();
            }
        }
    }

    @Test
    void theLookupsWalkUnderTheKeysLockTakesTheFirstReusableEntryAfterTheOneGiven() {
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(32).executor(Runnable::run).build()) {
            cache.create(7, 1, true);
            cache.create(7, 2, true);
            cache.create(7, 3, false); // the newest, not reusable

            CacheEntry first = cache.firstReusableUnderKeyLock(7, null);
            assertEquals(2, first.value());
            CacheEntry next = cache.firstReusableUnderKeyLock(7, first);
            assertEquals(1, next.value());
            assertNull(cache.firstReusableUnderKeyLock(7, next));
            assertNull(cache.firstReusableUnderKeyLock(8, null));

            // Each came with a reference for the caller: held, so deleteOrGet hands it back.
            for (CacheEntry held : new CacheEntry[] {first, next}) {
                CacheEntry again = cache.deleteOrGet(7, held.value());
                assertNotNull(again, "value " + held.value() + " was not held");
                cache.release(again);
                cache.release(held);
                assertNull(cache.deleteOrGet(7, held.value()));
            }
        }
    }

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

    // ---------------------------------------------------------------------------------------------
    // One held entry pins only itself; the chain cap
    // ---------------------------------------------------------------------------------------------

    private static final int KEY = 77;

    /** How many of the values {@code 0 .. values - 1} of {@link #KEY} are cached, holding nothing. */
    private static int cachedValues(CaffeineDedupCache cache, int values) {
        int cached = 0;
        for (long value = 0; value < values; value++) {
            CacheEntry entry = cache.get(KEY, value);
            if (entry != null) {
                cached++;
                cache.release(entry);
            }
        }
        return cached;
    }

    /** A cache that never reclaims for size, with this chain cap; maintenance on the calling thread. */
    private static CaffeineDedupCache roomyCappedAt(int chainCap) {
        return CaffeineDedupCache.builder().maxEntries(100_000).chainCap(chainCap).executor(Runnable::run).build();
    }

    /** A cache of 16 entries whose chain cap no test reaches; maintenance on the calling thread. */
    private static CaffeineDedupCache smallUncapped() {
        return CaffeineDedupCache.builder().maxEntries(16).chainCap(10_000).executor(Runnable::run).build();
    }

    /** Creates the values {@code from .. to - 1} of {@link #KEY}. */
    private static void createValues(CaffeineDedupCache cache, long from, long to) {
        for (long value = from; value < to; value++) {
            cache.create(KEY, value, true);
        }
    }

    @Test
    void builderRejectsAChainCapBelowOne() {
        assertThrows(IllegalArgumentException.class, () -> CaffeineDedupCache.builder().chainCap(0));
    }

    @Test
    void theUnheldValuesOfAHeldEntrysKeyStayWithinTwiceMaxEntries() {
        try (CaffeineDedupCache cache = smallUncapped()) {
            cache.create(KEY, 0, true);
            try (CacheEntry held = cache.get(KEY, 0)) {
                for (long value = 1; value <= 500; value++) {
                    cache.create(KEY, value, true);
                    assertTrue(cache.size() <= 2 * 16 + 1, "size " + cache.size() + " after value " + value);
                }
                assertNotNull(held);
            }
        }
    }

    @Test
    void theUnheldValuesOfAHeldEntrysKeyAreFreedWhenOtherKeysFillTheCache() {
        try (CaffeineDedupCache cache = smallUncapped()) {
            cache.create(KEY, 0, true);
            try (CacheEntry held = cache.get(KEY, 0)) {
                createValues(cache, 1, 31); // the held key's group: 31 values, 30 of them unheld
                for (int other = 1; other <= 500; other++) {
                    cache.create(KEY + other, other, true);
                    assertTrue(cache.size() <= 2 * 16 + 1, "size " + cache.size() + " after key " + other);
                }
                assertSame(held, cache.get(KEY, 0), "the held entry was reclaimed");
                cache.release(held);
            }
        }
    }

    @Test
    void theUnheldValuesOfAHeldEntrysKeyAreReclaimedOldestFirst() {
        try (CaffeineDedupCache cache = smallUncapped()) {
            cache.create(KEY, 0, true);
            try (CacheEntry held = cache.get(KEY, 0)) {
                createValues(cache, 1, 501);
                assertNull(cache.get(KEY, 1), "the oldest unheld value outlived newer ones");
                CacheEntry newest = cache.get(KEY, 500);
                assertNotNull(newest, "the newest value was reclaimed");
                cache.release(newest);
                assertSame(held, cache.get(KEY, 0), "the held entry was reclaimed");
                cache.release(held);
            }
        }
    }

    /** Holds {@code keys} single-value keys from {@code first}, for a cache that has to keep them. */
    private static List<CacheEntry> holdSingleValueKeys(CaffeineDedupCache cache, int first, int keys) {
        List<CacheEntry> held = new ArrayList<>();
        for (int key = first; key < first + keys; key++) {
            cache.create(key, 0, true);
            held.add(cache.get(key, 0));
        }
        return held;
    }

    /** Creates single-value keys from {@code first} until a create has run a synchronous pass. */
    private static void createUntilASynchronousPass(CaffeineDedupCache cache, int first) {
        long passes = cache.stats().synchronousReclaimPasses();
        for (int key = first; cache.stats().synchronousReclaimPasses() == passes; key++) {
            cache.create(key, 0, true);
        }
    }

    @Test
    void aPassThatFindsNoKeyWithTwoValuesLetsLaterPassesSkipTheSiblingWalkUntilOneHasTwo() {
        try (CaffeineDedupCache cache = smallUncapped()) {
            cache.create(KEY, 0, true);
            cache.create(KEY, 1, true);
            assertNull(cache.deleteOrGet(KEY, 1));
            assertFalse(cache.knowsNoGroupHasSiblings(), "no pass has looked since KEY had two values");
            List<CacheEntry> held = holdSingleValueKeys(cache, 1000, 16); // the cache stays at 2 * 16
            createUntilASynchronousPass(cache, 2000);
            assertTrue(cache.knowsNoGroupHasSiblings(), "the pass walked and found no key with two values");
            createUntilASynchronousPass(cache, 3000);
            assertTrue(cache.knowsNoGroupHasSiblings());
            held.forEach(cache::release);
            cache.shrink(Long.MAX_VALUE); // below the threshold: no pass will look again
            cache.create(1000, 0, true);
            cache.create(1000, 1, true);
            assertFalse(cache.knowsNoGroupHasSiblings(), "a key got a second value");
        }
    }

    /**
     * The synchronous pass skips its walk for siblings while it knows no key has two values; this
     * fails if a key can get a second value without the pass learning of it: the 24 unheld values
     * of the held keys, out of Caffeine's reach, would stay, and the size reach 16 + 4 + 24.
     */
    @Test
    void theUnheldValuesOfHeldKeysStayWithinTheBoundAfterAPassFoundNoKeyWithTwoValues() {
        try (CaffeineDedupCache cache = smallUncapped()) {
            cache.create(KEY, 0, true);
            cache.create(KEY, 1, true);
            assertNull(cache.deleteOrGet(KEY, 1));
            List<CacheEntry> held = holdSingleValueKeys(cache, 1000, 16);
            createUntilASynchronousPass(cache, 2000);
            assertTrue(cache.knowsNoGroupHasSiblings(), "precondition: the walk is skipped from here");
            held.subList(4, 16).forEach(cache::release);
            held = held.subList(0, 4);
            cache.shrink(Long.MAX_VALUE); // leaves the 4 held entries: room for their siblings
            for (CacheEntry entry : held) {
                for (long value = 1; value <= 6; value++) {
                    cache.create(entry.key(), value, true);
                }
            }
            assertEquals(4 + 4 * 6, cache.size());
            for (int key = 3000; key < 4000; key++) {
                cache.create(key, 0, true);
                assertTrue(cache.size() <= 2 * 16 + held.size(), "size " + cache.size() + " after create " + key);
            }
            held.forEach(cache::release);
        }
    }

    @Test
    void aOneKeyFloodLeavesAtMostChainCapUnheldValuesPlusTheHeldOnes() {
        try (CaffeineDedupCache cache = roomyCappedAt(8)) {
            cache.create(KEY, 0, true);
            cache.create(KEY, 1, true);
            try (CacheEntry held0 = cache.get(KEY, 0); CacheEntry held1 = cache.get(KEY, 1)) {
                createValues(cache, 2, 10_000);
                assertEquals(8 + 2, cachedValues(cache, 10_000));
                assertEquals(8 + 2, cache.size());
            }
        }
    }

    @Test
    void aHeldEntrySurvivesAOneKeyFlood() {
        try (CaffeineDedupCache cache = roomyCappedAt(8)) {
            cache.create(KEY, 0, true);
            try (CacheEntry held = cache.get(KEY, 0)) {
                createValues(cache, 1, 10_000);
                assertSame(held, cache.get(KEY, 0));
                cache.release(held);
            }
        }
    }

    @Test
    void aOneKeyFloodKeepsTheNewestValues() {
        try (CaffeineDedupCache cache = roomyCappedAt(8)) {
            createValues(cache, 0, 100);
            for (long value = 92; value < 100; value++) {
                CacheEntry entry = cache.get(KEY, value);
                assertNotNull(entry, "value " + value + " of the newest 8 was reclaimed");
                cache.release(entry);
            }
        }
    }

    @Test
    void chainCapReclaimsAreCounted() {
        try (CaffeineDedupCache cache = roomyCappedAt(8)) {
            createValues(cache, 0, 108);
            assertEquals(100, cache.stats().chainCapReclaims());
        }
    }

    @Test
    void theDefaultChainCapIs64() {
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().executor(Runnable::run).build()) {
            createValues(cache, 0, 100);
            assertEquals(64, cache.size());
            assertEquals(36, cache.stats().chainCapReclaims());
        }
    }

    @Test
    void theCapGivesAReferencedValueASecondChance() {
        try (CaffeineDedupCache cache = roomyCappedAt(4)) {
            createValues(cache, 0, 4);
            try (CacheEntry oldest = cache.get(KEY, 0)) {
                cache.touch(oldest);
            }
            cache.create(KEY, 4, true);
            assertTrue(isCached(cache, KEY, 0), "the touched oldest value was passed over once");
            assertFalse(isCached(cache, KEY, 1), "the oldest untouched value went instead");
            cache.create(KEY, 5, true);
            assertFalse(isCached(cache, KEY, 0), "its flag was cleared: the next cap reclaim takes it");
        }
    }

    @Test
    void theCapTakesAReferencedValueWhenNoUnreferencedOneIsLeft() {
        try (CaffeineDedupCache cache = roomyCappedAt(2)) {
            createValues(cache, 0, 2);
            for (long value = 0; value < 2; value++) {
                try (CacheEntry entry = cache.get(KEY, value)) {
                    cache.touch(entry);
                }
            }
            cache.create(KEY, 2, true);
            assertEquals(2, cache.size());
            assertFalse(isCached(cache, KEY, 0), "the oldest went, its flag cleared by the first walk");
            assertEquals(1, cache.stats().chainCapReclaims());
        }
    }

    @Test
    void chainCapReportsTheCapGivenOrDefaulted() {
        try (CaffeineDedupCache given = roomyCappedAt(8);
                CaffeineDedupCache defaulted = CaffeineDedupCache.builder().executor(Runnable::run).build()) {
            assertEquals(8, given.chainCap());
            assertEquals(64, defaulted.chainCap());
        }
    }

    @Test
    void distinctKeysAreNotCapped() {
        try (CaffeineDedupCache cache = roomyCappedAt(1)) {
            for (int key = 0; key < 100; key++) {
                cache.create(key, key, true);
            }
            assertEquals(100, cache.size());
            assertEquals(0, cache.stats().chainCapReclaims());
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Faults: executors that throw or drop tasks, an invariant breach
    // ---------------------------------------------------------------------------------------------

    /** A workload that needs unpin drains and eviction: every new entry is used once. */
    private static void createAndUse(CaffeineDedupCache cache, int keys) {
        for (int key = 0; key < keys; key++) {
            cache.create(key, key, true);
            CacheEntry entry = cache.findFirst(key);
            if (entry != null) {
                cache.release(entry);
            }
        }
    }

    /** With an executor whose execute always throws, eviction and unpin drains still run. */
    private static void assertTheWorkRunsOnTheCallingThread(Executor throwing) {
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(32).executor(throwing).build()) {
            createAndUse(cache, 2000);
            assertTrue(cache.size() <= 32 + 2, "eviction did not run: size " + cache.size());
            assertTrue(cache.unpinBacklog() <= 2, "unpin drains did not run: backlog " + cache.unpinBacklog());
        }
    }

    @Test
    void anExecutorThatThrowsAnErrorGetsTheWorkRunOnTheCallingThread() {
        assertTheWorkRunsOnTheCallingThread(task -> {
            throw new AssertionError("executor down");
        });
    }

    @Test
    void anExecutorThatRejectsGetsTheWorkRunOnTheCallingThread() {
        assertTheWorkRunsOnTheCallingThread(task -> {
            throw new RejectedExecutionException("full");
        });
    }

    @Test
    void anExecutorThatDropsTasksDoesNotSwitchBackgroundWorkOff() {
        AtomicInteger offered = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        Executor droppingTheFirstTen = task -> {
            if (offered.incrementAndGet() > 10) {
                ran.incrementAndGet();
                task.run();
            }
        };
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(32).executor(droppingTheFirstTen).build()) {
            createAndUse(cache, 5000);
            int ranBefore = ran.get();
            createAndUse(cache, 5000);
            assertTrue(ran.get() > ranBefore, "no task reached the executor after the dropped ones");
            assertTrue(cache.size() <= 2 * 32, "size " + cache.size());
            assertTrue(cache.unpinBacklog() < 4 * 2, "backlog " + cache.unpinBacklog());
        }
    }

    @Test
    void anEvictedHeldEntryIsRethrownByEveryLaterCallButClose() {
        CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(32).executor(Runnable::run).build();
        cache.create(KEY, 1, true);
        PinnedEntry held = (PinnedEntry) cache.get(KEY, 1);
        // What Caffeine would do if it stopped honouring zero weights: its listener throws...
        assertThrows(AssertionError.class, () -> cache.onEvicted(KEY, new PinnedEntry[] {held}, RemovalCause.SIZE));
        // ...and since Caffeine only logs that, every later call throws it again.
        assertThrows(AssertionError.class, cache::size);
        assertThrows(AssertionError.class, () -> cache.create(KEY, 2, true));
        assertThrows(AssertionError.class, cache::stats);
        cache.close();
        assertThrows(IllegalStateException.class, cache::size);
    }

    @Test
    void anExecutorThatDropsEveryTaskLeavesNoReleasedEntryPinnedAfterASynchronousPass() {
        Executor dropping = task -> {};
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(32).executor(dropping).build()) {
            long passesSeen = 0;
            for (int key = 0; key < 5000; key++) {
                cache.create(key, key, true);
                long passes = cache.stats().synchronousReclaimPasses();
                if (passes > passesSeen) {
                    // The pass unpinned every released entry and let Caffeine evict down to its
                    // bound: an entry left pinned (lost by a drain or a takeover) would weigh 0
                    // and stay above it.
                    assertTrue(cache.size() <= 32, "size " + cache.size() + " after the pass of create " + key);
                    passesSeen = passes;
                }
                CacheEntry entry = cache.findFirst(key);
                if (entry != null) {
                    cache.release(entry); // pinned, queued for a drain that the executor drops
                }
            }
            assertTrue(passesSeen > 10, "too few synchronous passes to tell: " + passesSeen);
        }
    }

    @Test
    void anExecutorShutDownMidwayKeepsTheCacheBoundedAndItsHeldEntries() throws InterruptedException {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(32).executor(pool).build()) {
            List<CacheEntry> held = new ArrayList<>();
            for (int key = -4; key < 0; key++) {
                cache.create(key, key, true);
                held.add(cache.get(key, key));
            }
            for (int key = 0; key < 3000; key++) {
                if (key == 1500) {
                    pool.shutdownNow(); // drops the queued tasks, and rejects every later one
                }
                cache.create(key, key, true);
                CacheEntry entry = cache.findFirst(key);
                if (entry != null) {
                    cache.release(entry);
                }
                assertTrue(cache.size() <= 2 * 32 + held.size(), "size " + cache.size() + " after create " + key);
            }
            for (CacheEntry entry : held) {
                assertSame(entry, cache.get(entry.key(), entry.value()), "a held entry was lost");
                cache.release(entry);
                cache.release(entry);
            }
            // Rejected work runs on this thread, so once the dropped tasks were recovered from,
            // eviction and unpin drains kept up with every create.
            assertTrue(cache.size() <= 32 + held.size() + 2, "eviction did not resume: size " + cache.size());
            assertTrue(cache.unpinBacklog() <= 2 + held.size(), "unpin drains did not resume: backlog " + cache.unpinBacklog());
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    /** What Caffeine's eviction listener would be called with should it evict this held entry. */
    private static void breachWith(CaffeineDedupCache cache, CacheEntry held) {
        PinnedEntry[] group = {(PinnedEntry) held};
        assertThrows(AssertionError.class, () -> cache.onEvicted(held.key(), group, RemovalCause.SIZE));
    }

    @Test
    void everyLaterCallRethrowsTheFirstBreachNotALaterOne() {
        CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(32).executor(Runnable::run).build();
        cache.create(KEY, 1, true);
        cache.create(KEY + 1, 2, true);
        CacheEntry first = cache.get(KEY, 1);
        CacheEntry second = cache.get(KEY + 1, 2);
        breachWith(cache, first);
        breachWith(cache, second);
        AssertionError rethrown = assertThrows(AssertionError.class, cache::size);
        assertTrue(rethrown.getMessage().contains("value=1"), "not the first breach: " + rethrown.getMessage());
        assertTrue(rethrown.getMessage().startsWith("cache invariant broken earlier: "), rethrown.getMessage());
        cache.close();
    }

    @Test
    void aBreachWakesTheWaitersToRethrowIt() throws Exception {
        CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(32).executor(Runnable::run).build();
        cache.create(KEY, 1, true);
        CacheEntry mine = cache.get(KEY, 1);
        CacheEntry other = cache.get(KEY, 1); // never released: after the breach no release can be
        AtomicReference<Throwable> ended = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                cache.waitUnused(mine);
            } catch (Throwable e) {
                ended.set(e);
            }
        });
        waiter.setDaemon(true);
        waiter.start();
        WaitQueueFaults.untilAsleep(waiter);
        breachWith(cache, other);
        waiter.join(10_000);
        boolean stuck = waiter.isAlive();
        waiter.interrupt();
        assertFalse(stuck, "a waiter still sleeps in waitUnused of a broken cache");
        assertTrue(ended.get() instanceof AssertionError, "the waiter ended with " + ended.get());
    }

    @Test
    void aReleaseWhoseWakeUpFailedStillQueuesTheEntryForUnpinning() throws Exception {
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(32).executor(Runnable::run).build()) {
            WaitQueueFaults faults = WaitQueueFaults.injectInto(cache);
            cache.create(KEY, 1, true);
            cache.create(KEY + 1, 2, true);
            CacheEntry released = cache.get(KEY, 1);
            CacheEntry waitedFor = cache.get(KEY + 1, 2);
            CacheEntry otherHolder = cache.get(KEY + 1, 2);
            AtomicBoolean returned = new AtomicBoolean();
            Thread waiter = WaitQueueFaults.waiterFor(cache, waitedFor, returned); // on the shared queue
            faults.arm();
            assertThrows(OutOfMemoryError.class, () -> cache.release(released)); // only the cache holds it now
            faults.disarm();
            // Still pinned, so Caffeine cannot evict it: only the unpin stack can change that.
            assertEquals(1, cache.unpinBacklog(), "the released entry was not queued for unpinning");
            cache.release(otherHolder);
            waiter.join(10_000);
            assertTrue(returned.get());
            cache.release(waitedFor);
        }
    }

    @Test
    void aBreachSeenAfterCloseLeavesTheCacheClosed() {
        CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(32).executor(Runnable::run).build();
        cache.create(KEY, 1, true);
        CacheEntry held = cache.get(KEY, 1);
        cache.close();
        breachWith(cache, held);
        IllegalStateException closed = assertThrows(IllegalStateException.class, cache::size);
        assertEquals("cache is closed", closed.getMessage());
    }

    @Test
    void aMaxEntriesNearLongMaxValueNeverReclaims() {
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(Long.MAX_VALUE - 1).executor(Runnable::run).build()) {
            for (int key = 0; key < 100; key++) {
                cache.create(key, key, true);
            }
            assertEquals(100, cache.size());
            assertEquals(0, cache.stats().synchronousReclaimPasses());
        }
    }
}
