package org.mbcache.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.mbcache.CacheEntry;
import org.mbcache.CacheStats;
import org.mbcache.DedupCache;
import org.mbcache.testing.Backend;
import org.mbcache.testing.MemoryPressureSignal;

/**
 * The {@link DedupCache} contract ({@code docs/contract.md}, sections 1-3 and 6), one behaviour
 * per test, run against every {@link Backend} (16 buckets where the backend has buckets, background
 * work on the common pool).
 *
 * <p>Only what every backend promises is here: no exact LRU order, no bucket placement, no default
 * sizes. Races run for a bounded number of rounds with bounded waits, so a broken backend fails an
 * assertion rather than hanging the build; every test also has a {@link Timeout}.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
@ParameterizedClass(name = "{0}")
@EnumSource(Backend.class)
class DedupCacheContractTest {

    /*
     * These tests count pairs exactly. A heap-pressure pass (every open kernel-port cache answers the
     * JVM's collection-usage threshold, which a busy test JVM may cross) could free any unheld pair
     * in the middle of one; the passes have tests of their own (MemoryPressureRegistryTest).
     */
    static {
        MemoryPressureSignal.silence();
    }

    /** log2 of the buckets of a contract-test cache: 16, so that keys collide in buckets often. */
    private static final int BUCKET_BITS = 4;

    /** A bound no functional test comes near, so no reclaim interferes with what it checks. */
    protected static final long ROOMY = 4096;

    /** How long a test waits for something that should happen at once before it fails. */
    private static final long PATIENCE_SECONDS = 5;

    private static final int KEY = 0x5EED_CAFE;

    /** The backend under test. */
    @Parameter
    Backend backend;

    protected DedupCache cache;
    private final List<DedupCache> others = new ArrayList<>();

    /**
     * A new, empty cache of the backend under test.
     *
     * @param maxEntries the size bound
     * @throws IllegalArgumentException if {@code maxEntries <= 0}
     */
    private DedupCache newCache(long maxEntries) {
        return backend.open(BUCKET_BITS, maxEntries, ForkJoinPool.commonPool());
    }

    @BeforeEach
    void openCache() {
        cache = newCache(ROOMY);
    }

    @AfterEach
    void closeCaches() {
        cache.close();
        others.forEach(DedupCache::close);
    }

    private DedupCache anotherCache() {
        DedupCache other = newCache(ROOMY);
        others.add(other);
        return other;
    }

    /** A thread that runs {@code body}; its failure is rethrown by {@link #join}. */
    private static Future<Void> inThread(Executable body) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                body.execute();
                done.complete(null);
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        }, "contract-helper");
        thread.setDaemon(true);
        thread.start();
        return done;
    }

    private static void join(Future<Void> future) throws Exception {
        try {
            future.get(PATIENCE_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Error) {
                throw (Error) e.getCause();
            }
            throw (Exception) e.getCause();
        }
    }

    /** Values of the key, walked with findFirst/findNext, releasing everything. */
    private List<Long> walk(int key) {
        List<Long> values = new ArrayList<>();
        CacheEntry entry = cache.findFirst(key);
        while (entry != null) {
            assertEquals(key, entry.key(), "walk of key " + key + " returned another key");
            values.add(entry.value());
            assertTrue(values.size() <= 10_000, "walk does not end");
            entry = cache.findNext(entry);
        }
        return values;
    }

    /** Whether the pair is cached, leaving nothing held. */
    private boolean cached(int key, long value) {
        return Pairs.isCached(cache, key, value);
    }

    // ---------------------------------------------------------------------------------------------
    // Construction
    // ---------------------------------------------------------------------------------------------

    @Test
    void maxEntriesOfZeroOrLessIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> newCache(0));
        assertThrows(IllegalArgumentException.class, () -> newCache(-1));
    }

    @Test
    void aNewCacheIsEmpty() {
        assertEquals(0, cache.size());
        assertNull(cache.findFirst(KEY));
    }

    @Test
    void statsOfANewCacheAreAllZero() {
        assertEquals(new CacheStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0), cache.stats());
    }

    // ---------------------------------------------------------------------------------------------
    // create
    // ---------------------------------------------------------------------------------------------

    @Test
    void createOfANewPairReturnsTrue() {
        assertTrue(cache.create(KEY, 1, true));
        assertEquals(1, cache.size());
    }

    @Test
    void createOfAPairAlreadyCachedReturnsFalse() {
        assertTrue(cache.create(KEY, 1, true));
        assertFalse(cache.create(KEY, 1, true));
        assertFalse(cache.create(KEY, 1, false));
        assertEquals(1, cache.size());
    }

    @Test
    void createOfAPairAlreadyCachedLeavesTheCachedEntryAsItWas() {
        cache.create(KEY, 1, false);
        cache.create(KEY, 1, true);
        try (CacheEntry entry = cache.get(KEY, 1)) {
            assertFalse(entry.reusable());
        }
        assertNull(cache.findFirst(KEY));
    }

    @Test
    void createOfAnotherValueUnderTheSameKeyReturnsTrue() {
        assertTrue(cache.create(KEY, 1, true));
        assertTrue(cache.create(KEY, 2, true));
        assertEquals(2, cache.size());
    }

    @Test
    void createOfTheSameValueUnderAnotherKeyReturnsTrue() {
        assertTrue(cache.create(KEY, 1, true));
        assertTrue(cache.create(KEY + 1, 1, true));
        assertEquals(2, cache.size());
    }

    @Test
    void createHandsNoReferenceToTheCaller() {
        cache.create(KEY, 1, true);
        assertNull(cache.deleteOrGet(KEY, 1), "only the cache held the new entry, so deleteOrGet removes it");
        assertEquals(0, cache.size());
    }

    @Test
    void createStoresKeyValueAndReusableFlag() {
        cache.create(KEY, Long.MIN_VALUE, true);
        cache.create(-1, Long.MAX_VALUE, false);
        try (CacheEntry a = cache.get(KEY, Long.MIN_VALUE); CacheEntry b = cache.get(-1, Long.MAX_VALUE)) {
            assertEquals(KEY, a.key());
            assertEquals(Long.MIN_VALUE, a.value());
            assertTrue(a.reusable());
            assertEquals(-1, b.key());
            assertEquals(Long.MAX_VALUE, b.value());
            assertFalse(b.reusable());
        }
    }

    @Test
    void createAfterDeleteOfThePairReturnsTrue() {
        cache.create(KEY, 1, true);
        assertNull(cache.deleteOrGet(KEY, 1));
        assertTrue(cache.create(KEY, 1, true));
    }

    // ---------------------------------------------------------------------------------------------
    // findFirst / findNext
    // ---------------------------------------------------------------------------------------------

    @Test
    void findFirstOfAnUnknownKeyReturnsNull() {
        cache.create(KEY, 1, true);
        assertNull(cache.findFirst(KEY + 1));
    }

    @Test
    void findFirstReturnsTheNewestReusableEntryOfTheKey() {
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, true);
        cache.create(KEY, 3, true);
        try (CacheEntry entry = cache.findFirst(KEY)) {
            assertEquals(KEY, entry.key());
            assertEquals(3, entry.value());
        }
    }

    @Test
    void findFirstSkipsEntriesThatAreNotReusable() {
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, false);
        try (CacheEntry entry = cache.findFirst(KEY)) {
            assertEquals(1, entry.value());
        }
    }

    @Test
    void findFirstReturnsNullWhenNoEntryOfTheKeyIsReusable() {
        cache.create(KEY, 1, false);
        cache.create(KEY, 2, false);
        assertNull(cache.findFirst(KEY));
    }

    @Test
    void findFirstNeverReturnsAnEntryOfAnotherKey() {
        for (int key = 0; key < 256; key++) { // many keys share each bucket of a small table
            cache.create(key, key * 10L, key % 3 != 0);
        }
        for (int key = 0; key < 256; key++) {
            CacheEntry entry = cache.findFirst(key);
            if (key % 3 == 0) {
                assertNull(entry, "key " + key);
            } else {
                assertEquals(key, entry.key());
                assertEquals(key * 10L, entry.value());
                cache.release(entry);
            }
        }
    }

    @Test
    void findFirstReturnsTheEntryReferencedForTheCaller() {
        cache.create(KEY, 1, true);
        CacheEntry held = cache.findFirst(KEY);
        CacheEntry again = cache.deleteOrGet(KEY, 1);
        assertNotNull(again, "a held entry is not deleted");
        cache.release(again);
        cache.release(held);
        assertNull(cache.deleteOrGet(KEY, 1));
    }

    @Test
    void findNextWalksTheReusableEntriesOfTheKeyNewestFirst() {
        for (long value = 1; value <= 6; value++) {
            cache.create(KEY, value, value != 3);
        }
        cache.create(KEY + 1, 100, true);
        assertEquals(List.of(6L, 5L, 4L, 2L, 1L), walk(KEY));
    }

    @Test
    void findNextReturnsNullAtTheEndOfTheKey() {
        cache.create(KEY, 1, true);
        CacheEntry only = cache.findFirst(KEY);
        assertNull(cache.findNext(only));
    }

    @Test
    void findNextReleasesThePassedEntryWhenItReturnsTheNext() {
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, true);
        CacheEntry first = cache.findFirst(KEY);
        CacheEntry second = cache.findNext(first);
        assertEquals(1, second.value());
        assertNull(cache.deleteOrGet(KEY, 2), "findNext released its argument, so only the cache held it");
        cache.release(second);
    }

    @Test
    void findNextReleasesThePassedEntryAtTheEnd() {
        cache.create(KEY, 1, true);
        CacheEntry only = cache.findFirst(KEY);
        assertNull(cache.findNext(only));
        assertNull(cache.deleteOrGet(KEY, 1), "findNext released its argument, so only the cache held it");
        assertEquals(0, cache.size());
    }

    /** Two values of the key; the newest, found and released again: an entry the caller no longer holds. */
    private CacheEntry theNewestOfTwoFoundAndReleased() {
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, true);
        CacheEntry first = cache.findFirst(KEY);
        cache.release(first);
        return first;
    }

    @Test
    void findNextOfAnEntryTheCallerDoesNotHoldIsAnIllegalStateException() {
        CacheEntry first = theNewestOfTwoFoundAndReleased();
        assertThrows(IllegalStateException.class, () -> cache.findNext(first));
        assertTrue(cached(KEY, 2), "the cache's own reference survives");
    }

    @Test
    void findNextOfAnEntryAlreadyReleasedTakesNoReferenceToTheNext() {
        CacheEntry first = theNewestOfTwoFoundAndReleased();
        assertThrows(IllegalStateException.class, () -> cache.findNext(first));
        assertNull(cache.deleteOrGet(KEY, 1), "findNext left a reference to the next entry");
        assertNull(cache.deleteOrGet(KEY, 2));
        assertEquals(0, cache.size());
    }

    /**
     * The caller's reference is released by another thread (misuse) while findNext runs: whichever
     * of the two releases fails, nothing stays held, so every pair can still be deleted.
     */
    @Test
    void findNextRacingAnOverReleaseLeavesNoReferenceBehind() throws Exception {
        CacheEntry[] walked = new CacheEntry[1];
        AtomicInteger released = new AtomicInteger();
        ConcurrentRounds.run(2, 1000,
                round -> {
                    cache.create(KEY, 1, true);
                    cache.create(KEY, 2, true);
                    walked[0] = cache.findFirst(KEY);
                    released.set(0);
                },
                (thread, round) -> {
                    try {
                        if (thread == 0) {
                            CacheEntry next = cache.findNext(walked[0]);
                            released.incrementAndGet();
                            if (next != null) {
                                cache.release(next);
                            }
                        } else {
                            cache.release(walked[0]);
                            released.incrementAndGet();
                        }
                    } catch (IllegalStateException overRelease) {
                        // the one of the two that came second
                    }
                },
                round -> {
                    assertEquals(1, released.get(), "exactly one of the two releases succeeds");
                    assertNull(cache.deleteOrGet(KEY, 1), "a reference was left behind in round " + round);
                    assertNull(cache.deleteOrGet(KEY, 2), "a reference was left behind in round " + round);
                    assertEquals(0, cache.size());
                });
    }

    @Test
    void findNextSkipsAnEntryMadeNotReusableDuringTheWalk() {
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, true);
        cache.create(KEY, 3, true);
        try (CacheEntry middle = cache.get(KEY, 2)) {
            middle.setReusable(false);
        }
        CacheEntry first = cache.findFirst(KEY);
        CacheEntry next = cache.findNext(first);
        assertEquals(1, next.value());
        cache.release(next);
    }

    @Test
    void findNextSeesAnEntryMadeReusableAgain() {
        cache.create(KEY, 1, false);
        cache.create(KEY, 2, true);
        try (CacheEntry older = cache.get(KEY, 1)) {
            older.setReusable(true);
        }
        assertEquals(List.of(2L, 1L), walk(KEY));
    }

    // ---------------------------------------------------------------------------------------------
    // get
    // ---------------------------------------------------------------------------------------------

    @Test
    void getReturnsTheExactPairWhetherReusableOrNot() {
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, false);
        try (CacheEntry reusable = cache.get(KEY, 1); CacheEntry notReusable = cache.get(KEY, 2)) {
            assertEquals(1, reusable.value());
            assertEquals(2, notReusable.value());
            assertEquals(KEY, notReusable.key());
        }
    }

    @Test
    void getOfAPairNotCachedReturnsNull() {
        cache.create(KEY, 1, true);
        assertNull(cache.get(KEY, 2));
        assertNull(cache.get(KEY + 1, 1));
    }

    @Test
    void getReturnsTheEntryReferencedForTheCaller() {
        cache.create(KEY, 1, false);
        CacheEntry held = cache.get(KEY, 1);
        CacheEntry again = cache.deleteOrGet(KEY, 1);
        assertNotNull(again);
        cache.release(again);
        cache.release(held);
        assertNull(cache.deleteOrGet(KEY, 1));
        assertNull(cache.get(KEY, 1));
    }

    @Test
    void getAndFindFirstHandOutTheSameEntry() {
        cache.create(KEY, 1, true);
        try (CacheEntry found = cache.findFirst(KEY); CacheEntry got = cache.get(KEY, 1)) {
            assertEquals(found, got);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // deleteOrGet
    // ---------------------------------------------------------------------------------------------

    @Test
    void deleteOrGetRemovesAnEntryNobodyHoldsAndReturnsNull() {
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, true);
        assertNull(cache.deleteOrGet(KEY, 1));
        assertNull(cache.get(KEY, 1));
        assertEquals(1, cache.size());
        assertEquals(List.of(2L), walk(KEY));
    }

    @Test
    void deleteOrGetOfAPairNotCachedReturnsNull() {
        cache.create(KEY, 1, true);
        assertNull(cache.deleteOrGet(KEY, 2));
        assertEquals(1, cache.size());
    }

    @Test
    void deleteOrGetRemovesAnEntryThatIsNotReusable() {
        cache.create(KEY, 1, false);
        assertNull(cache.deleteOrGet(KEY, 1));
        assertEquals(0, cache.size());
    }

    @Test
    void deleteOrGetReturnsTheEntryWhenSomebodyHoldsIt() {
        cache.create(KEY, 1, true);
        CacheEntry held = cache.findFirst(KEY);
        CacheEntry returned = cache.deleteOrGet(KEY, 1);
        assertNotNull(returned);
        assertEquals(KEY, returned.key());
        assertEquals(1, returned.value());
        assertEquals(1, cache.size(), "nothing removed");
        assertTrue(cached(KEY, 1));
        cache.release(held);
        cache.release(returned);
    }

    @Test
    void deleteOrGetSucceedsOnceTheOtherHolderReleased() {
        cache.create(KEY, 1, true);
        CacheEntry held = cache.findFirst(KEY);
        CacheEntry returned = cache.deleteOrGet(KEY, 1);
        cache.release(held);
        cache.release(returned);
        assertNull(cache.deleteOrGet(KEY, 1));
        assertEquals(0, cache.size());
    }

    // ---------------------------------------------------------------------------------------------
    // waitUnused
    // ---------------------------------------------------------------------------------------------

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

    // ---------------------------------------------------------------------------------------------
    // touch, setReusable
    // ---------------------------------------------------------------------------------------------

    @Test
    void aTouchedEntrySurvivesOneReclaimPassButNotTwo() {
        cache.create(KEY, 1, true);
        try (CacheEntry entry = cache.findFirst(KEY)) {
            cache.touch(entry);
        }
        assertEquals(0, cache.shrink(1), "the referenced flag gives a second chance");
        assertTrue(cached(KEY, 1));
        assertEquals(1, cache.shrink(1), "the flag was cleared by the first pass");
        assertEquals(0, cache.size());
    }

    @Test
    void anUntouchedEntryIsReclaimedBeforeATouchedOne() {
        cache.create(KEY, 1, true);
        cache.create(KEY + 1, 2, true);
        try (CacheEntry entry = cache.get(KEY, 1)) {
            cache.touch(entry);
        }
        assertEquals(1, cache.shrink(2));
        assertTrue(cached(KEY, 1));
        assertFalse(cached(KEY + 1, 2));
    }

    @Test
    void setReusableFalseHidesTheEntryFromFindFirstButNotFromGet() {
        cache.create(KEY, 1, true);
        try (CacheEntry entry = cache.get(KEY, 1)) {
            entry.setReusable(false);
            assertFalse(entry.reusable());
        }
        assertNull(cache.findFirst(KEY));
        assertTrue(cached(KEY, 1));
    }

    @Test
    void setReusableTrueMakesTheEntryFindableAgain() {
        cache.create(KEY, 1, false);
        try (CacheEntry entry = cache.get(KEY, 1)) {
            entry.setReusable(true);
            assertTrue(entry.reusable());
        }
        try (CacheEntry found = cache.findFirst(KEY)) {
            assertEquals(1, found.value());
        }
    }

    // ---------------------------------------------------------------------------------------------
    // release
    // ---------------------------------------------------------------------------------------------

    @Test
    void closingAnEntryReleasesIt() {
        cache.create(KEY, 1, true);
        try (CacheEntry entry = cache.get(KEY, 1)) {
            assertNotNull(entry);
        }
        assertNull(cache.deleteOrGet(KEY, 1));
    }

    @Test
    void releasingAnEntryMoreOftenThanHandedOutIsAnIllegalStateException() {
        cache.create(KEY, 1, true);
        CacheEntry entry = cache.get(KEY, 1);
        cache.release(entry);
        assertThrows(IllegalStateException.class, () -> cache.release(entry));
        assertThrows(IllegalStateException.class, entry::close);
    }

    @Test
    void anOverReleaseLeavesTheCachesOwnReference() {
        cache.create(KEY, 1, true);
        CacheEntry entry = cache.get(KEY, 1);
        cache.release(entry);
        assertThrows(IllegalStateException.class, () -> cache.release(entry));
        assertEquals(1, cache.size());
        assertTrue(cached(KEY, 1));
        try (CacheEntry found = cache.findFirst(KEY)) {
            assertEquals(entry, found);
        }
    }

    @Test
    void releasingAnEntryAfterItWasDeletedIsAnIllegalStateException() {
        cache.create(KEY, 1, true);
        CacheEntry entry = cache.get(KEY, 1);
        cache.release(entry);
        assertNull(cache.deleteOrGet(KEY, 1));
        assertThrows(IllegalStateException.class, () -> cache.release(entry));
        assertEquals(0, cache.size());
    }

    // ---------------------------------------------------------------------------------------------
    // size, shrink
    // ---------------------------------------------------------------------------------------------

    @Test
    void sizeCountsCreatesAndRemovals() {
        for (int key = 0; key < 10; key++) {
            cache.create(key, key, true);
        }
        cache.create(3, 3, true);
        assertEquals(10, cache.size());
        cache.deleteOrGet(3, 3);
        cache.deleteOrGet(3, 3);
        assertEquals(9, cache.size());
        assertEquals(9, cache.shrink(Long.MAX_VALUE));
        assertEquals(0, cache.size());
    }

    @Test
    void shrinkFreesTheEntriesNobodyHoldsAndReturnsHowMany() {
        for (int key = 0; key < 10; key++) {
            cache.create(key, key, true);
        }
        assertEquals(10, cache.shrink(10));
        assertEquals(0, cache.size());
        for (int key = 0; key < 10; key++) {
            assertFalse(cached(key, key));
        }
    }

    @Test
    void shrinkFreesAtMostNrToScanEntries() {
        for (int key = 0; key < 10; key++) {
            cache.create(key, key, true);
        }
        assertEquals(3, cache.shrink(3));
        assertEquals(7, cache.size());
    }

    @Test
    void shrinkFreesAtMostNrToScanEntriesWhenOneKeyHasSeveralValues() {
        for (long value = 0; value < 5; value++) {
            cache.create(KEY, value, true);
        }
        assertEquals(1, cache.shrink(1));
        assertEquals(4, cache.size());
    }

    @Test
    void shrinkGivesATouchedEntryItsSecondChanceBesideAnUnheldValueOfItsKey() {
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, true);
        try (CacheEntry touched = cache.get(KEY, 1)) {
            cache.touch(touched);
        }
        assertEquals(1, cache.shrink(2), "the pass examines both and frees the untouched one");
        assertTrue(cached(KEY, 1), "the touched entry was freed in the pass that cleared its flag");
        assertFalse(cached(KEY, 2));
    }

    @Test
    void shrinkOfZeroFreesNothing() {
        cache.create(KEY, 1, true);
        assertEquals(0, cache.shrink(0));
        assertEquals(1, cache.size());
    }

    @Test
    void shrinkOfAnEmptyCacheFreesNothing() {
        assertEquals(0, cache.shrink(Long.MAX_VALUE));
    }

    @Test
    void shrinkWithANegativeCountIsAnIllegalArgumentException() {
        assertThrows(IllegalArgumentException.class, () -> cache.shrink(-1));
    }

    @Test
    void shrinkNeverFreesAnEntrySomebodyHolds() {
        for (long value = 0; value < 10; value++) {
            cache.create(KEY, value, true);
        }
        try (CacheEntry held = cache.get(KEY, 4)) {
            assertEquals(9, cache.shrink(Long.MAX_VALUE));
            assertEquals(1, cache.size());
            assertTrue(cached(KEY, 4));
            assertEquals(4, held.value());
        }
    }

    @Test
    void shrinkOfLongMaxValueReturnsWhenEveryEntryIsHeld() {
        List<CacheEntry> held = new ArrayList<>();
        for (int key = 0; key < 20; key++) {
            cache.create(key, key, true);
            held.add(cache.get(key, key));
        }
        cache.touch(held.get(0));
        assertEquals(0, cache.shrink(Long.MAX_VALUE));
        assertEquals(20, cache.size());
        held.forEach(cache::release);
        assertEquals(20, cache.shrink(Long.MAX_VALUE));
    }

    @Test
    void sizeStaysWithinTwiceMaxEntriesSeenFromOneThread() {
        DedupCache small = anotherCacheOf(64);
        for (int key = 0; key < 64 * 40; key++) {
            assertTrue(small.create(key, key, true));
            long size = small.size();
            assertTrue(size <= 2 * 64, "size " + size + " after create " + key);
        }
    }

    private DedupCache anotherCacheOf(long maxEntries) {
        DedupCache other = newCache(maxEntries);
        others.add(other);
        return other;
    }

    @Test
    void reclaimNeverTakesAnEntrySomebodyHoldsWhenTheCacheOverflows() {
        DedupCache small = anotherCacheOf(16);
        small.create(KEY, 1, true);
        CacheEntry held = small.get(KEY, 1);
        for (int key = 0; key < 16 * 40; key++) {
            small.create(key, key, true);
        }
        small.shrink(Long.MAX_VALUE);
        CacheEntry again = small.get(KEY, 1);
        assertNotNull(again, "a held entry was reclaimed");
        small.release(again);
        small.release(held);
    }

    @Test
    void entriesOnceHeldAndReleasedCanBeReclaimedAgain() {
        DedupCache small = anotherCacheOf(16);
        int held = 0;
        for (int key = 0; key < 64; key++) {
            small.create(key, key, true);
            CacheEntry entry = small.findFirst(key); // null if reclaim already took it: allowed
            if (entry != null) {
                small.release(entry);
                held++;
            }
        }
        assertTrue(held >= 16, "held only " + held + " of 64 new entries");
        for (int key = 64; key < 16 * 40; key++) {
            small.create(key, key, true);
            long size = small.size();
            assertTrue(size <= 2 * 16, "size " + size + " after create " + key + ": released entries stay pinned");
        }
        assertTrue(small.shrink(Long.MAX_VALUE) <= 2 * 16);
        assertEquals(0, small.size());
    }

    /** Reclaim started by creates (background or synchronous) vs a user of the entry. */
    @Test
    void reclaimOnOverflowNeverTakesAnEntrySomebodyHolds() throws Exception {
        DedupCache small = anotherCacheOf(16);
        ConcurrentRounds.run(2, 1, round -> {}, (thread, round) -> {
            for (int i = 0; i < 5000; i++) {
                if (thread == 0) {
                    CacheEntry entry = small.findFirst(KEY);
                    if (entry != null) {
                        for (int check = 0; check < 2; check++) {
                            CacheEntry same = small.get(KEY, 1);
                            assertNotNull(same, "reclaim took an entry a caller held");
                            small.release(same);
                        }
                        small.release(entry);
                    }
                } else {
                    small.create(KEY, 1, true);
                    small.create(i, i, true); // overflow: 16 entries, 5000 creates
                }
            }
        }, round -> {});
    }

    /** A key's other entries come and go; the one held must stay through every overflow. */
    @Test
    void reclaimOnOverflowNeverTakesAHeldEntryWhoseSiblingIsReleased() {
        DedupCache small = anotherCacheOf(16);
        small.create(KEY, 1, true);
        CacheEntry held = small.get(KEY, 1);
        int next = 0;
        for (int round = 0; round < 30; round++) {
            small.create(KEY, 2, true);
            CacheEntry sibling = small.get(KEY, 2); // null if reclaim already took it: allowed
            if (sibling != null) {
                small.release(sibling);
            }
            for (int i = 0; i < 16 * 4; i++, next++) {
                small.create(next, next, true);
            }
            CacheEntry again = small.get(KEY, 1);
            assertNotNull(again, "reclaim took the held entry in round " + round);
            small.release(again);
        }
        small.release(held);
    }

    /**
     * The same with entries nobody used before: whatever the policy (LRU, frequency), a cold entry
     * somebody holds survives the reclaim that a stream of creates drives past it.
     */
    @Test
    void reclaimOnOverflowNeverTakesAColdEntrySomebodyHolds() throws Exception {
        DedupCache small = anotherCacheOf(16);
        AtomicInteger newest = new AtomicInteger(-1);
        AtomicInteger done = new AtomicInteger();
        ConcurrentRounds.run(2, 1, round -> {}, (thread, round) -> {
            if (thread == 0) {
                for (int i = 0; i < 1500 && done.get() == 0; i++) {
                    int key = newest.get();
                    CacheEntry entry = key < 0 ? null : small.get(key, key);
                    if (entry == null) {
                        continue;
                    }
                    int seen = newest.get();
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
                    while (newest.get() - seen < 40 && done.get() == 0 && System.nanoTime() < deadline) {
                        Thread.onSpinWait(); // let creates overflow the cache past this entry
                    }
                    CacheEntry same = small.get(key, key);
                    assertNotNull(same, "reclaim took a held entry");
                    small.release(same);
                    small.release(entry);
                }
            } else {
                try {
                    for (int key = 0; key < 60_000; key++) {
                        small.create(key, key, true);
                        newest.set(key);
                    }
                } finally {
                    done.set(1);
                }
            }
        }, round -> {});
    }

    // ---------------------------------------------------------------------------------------------
    // stats
    // ---------------------------------------------------------------------------------------------

    @Test
    void statsCountCreatesAndRefusedDuplicates() {
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, true);
        cache.create(KEY, 1, true);
        CacheStats stats = cache.stats();
        assertEquals(2, stats.creates());
        assertEquals(1, stats.duplicatesRefused());
    }

    @Test
    void statsCountLookupHitsAndMisses() {
        cache.create(KEY, 1, true);
        CacheEntry found = cache.findFirst(KEY); // hit
        assertNull(cache.findNext(found)); // miss
        cache.release(cache.get(KEY, 1)); // hit
        assertNull(cache.get(KEY, 2)); // miss
        assertNull(cache.findFirst(KEY + 1)); // miss
        CacheStats stats = cache.stats();
        assertEquals(2, stats.lookupHits());
        assertEquals(3, stats.lookupMisses());
    }

    @Test
    void statsCountDeletes() {
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, true);
        cache.deleteOrGet(KEY, 1);
        cache.deleteOrGet(KEY, 3);
        try (CacheEntry held = cache.get(KEY, 2)) {
            cache.release(cache.deleteOrGet(KEY, 2));
        }
        assertEquals(1, cache.stats().deletes());
    }

    @Test
    void statsCountRequestedReclaimPassesAndTheEntriesTheyFreed() {
        for (int key = 0; key < 5; key++) {
            cache.create(key, key, true);
        }
        cache.shrink(2);
        cache.shrink(Long.MAX_VALUE);
        CacheStats stats = cache.stats();
        assertEquals(2, stats.requestedReclaimPasses());
        assertEquals(5, stats.entriesReclaimed());
    }

    // ---------------------------------------------------------------------------------------------
    // Misuse
    // ---------------------------------------------------------------------------------------------

    private static void assertNullPointerNaming(String argument, Executable call) {
        NullPointerException e = assertThrows(NullPointerException.class, call);
        assertNotNull(e.getMessage(), "the exception names the argument");
        assertTrue(e.getMessage().contains(argument), "message '" + e.getMessage() + "' names " + argument);
    }

    @Test
    void aNullEntryIsANullPointerExceptionNamingTheArgument() {
        assertNullPointerNaming("entry", () -> cache.findNext(null));
        assertNullPointerNaming("entry", () -> cache.waitUnused(null));
        assertNullPointerNaming("entry", () -> cache.waitUnused(null, 1, TimeUnit.SECONDS));
        assertNullPointerNaming("entry", () -> cache.touch(null));
        assertNullPointerNaming("entry", () -> cache.release(null));
    }

    @Test
    void aNullTimeUnitIsANullPointerExceptionNamingTheArgument() {
        cache.create(KEY, 1, true);
        try (CacheEntry entry = cache.get(KEY, 1)) {
            assertNullPointerNaming("unit", () -> cache.waitUnused(entry, 1, null));
        }
    }

    @Test
    void anEntryOfAnotherCacheIsAnIllegalArgumentException() {
        DedupCache other = anotherCache();
        other.create(KEY, 1, true);
        cache.create(KEY, 1, true);
        CacheEntry foreign = other.get(KEY, 1);
        assertThrows(IllegalArgumentException.class, () -> cache.findNext(foreign));
        assertThrows(IllegalArgumentException.class, () -> cache.waitUnused(foreign));
        assertThrows(IllegalArgumentException.class, () -> cache.waitUnused(foreign, 1, TimeUnit.SECONDS));
        assertThrows(IllegalArgumentException.class, () -> cache.touch(foreign));
        assertThrows(IllegalArgumentException.class, () -> cache.release(foreign));
        other.release(foreign); // still held once: the failed calls changed nothing
        assertNull(other.deleteOrGet(KEY, 1));
        assertTrue(cached(KEY, 1));
    }

    @Test
    void anEntryOfAnotherImplementationIsAnIllegalArgumentException() {
        CacheEntry stranger = new CacheEntry() {
            @Override public int key() { return KEY; }
            @Override public long value() { return 1; }
            @Override public boolean reusable() { return true; }
            @Override public void setReusable(boolean reusable) {}
            @Override public void close() {}
        };
        cache.create(KEY, 1, true);
        assertThrows(IllegalArgumentException.class, () -> cache.release(stranger));
        assertThrows(IllegalArgumentException.class, () -> cache.findNext(stranger));
        assertThrows(IllegalArgumentException.class, () -> cache.touch(stranger));
    }

    @Test
    void everyCallOnTheCacheAfterCloseIsAnIllegalStateException() {
        cache.create(KEY, 1, true);
        cache.close();
        List<Executable> calls = List.of(
                () -> cache.create(KEY, 2, true),
                () -> cache.findFirst(KEY),
                () -> cache.get(KEY, 1),
                () -> cache.deleteOrGet(KEY, 1),
                () -> cache.size(),
                () -> cache.shrink(1),
                () -> cache.stats());
        for (Executable call : calls) {
            assertThrows(IllegalStateException.class, call);
        }
    }

    @Test
    void aCreateRacingCloseEitherSucceedsOrSaysTheCacheIsClosed() throws Exception {
        for (int round = 0; round < 50; round++) {
            DedupCache racing = anotherCache();
            int first = round * 10_000;
            CompletableFuture<String> creator = CompletableFuture.supplyAsync(() -> {
                try {
                    for (int key = first; ; key++) {
                        racing.create(key, key, true);
                    }
                } catch (IllegalStateException e) {
                    return e.getMessage();
                }
            });
            Thread.yield();
            racing.close();
            String message = creator.get(PATIENCE_SECONDS, TimeUnit.SECONDS);
            assertTrue(message.contains("closed"), "not the closed message: " + message);
        }
    }

    @Test
    void aReleaseRacingCloseEitherSucceedsOrSaysTheCacheIsClosed() throws Exception {
        assertEveryFailureRacingCloseSaysClosed(racing -> {
            CacheEntry found = racing.findFirst(KEY);
            CacheEntry got = racing.get(KEY, 2);
            CacheEntry handedBack = racing.deleteOrGet(KEY, 3); // held by the test: handed back
            for (CacheEntry entry : new CacheEntry[] {found, got, handedBack}) {
                if (entry != null) {
                    racing.release(entry);
                }
            }
        });
    }

    /**
     * A pair held until {@code close()} is cached until then: a lookup racing the close finds it
     * (it ran before the close) or is told that the cache is closed. A miss would say the pair is
     * not cached, and from {@code deleteOrGet} that nobody holds it.
     */
    @Test
    void aLookupOfAPairHeldUntilCloseFindsItOrSaysTheCacheIsClosed() throws Exception {
        assertEveryFailureRacingCloseSaysClosed(racing -> {
            releaseFound(racing, racing.get(KEY, 3), "get");
            releaseFound(racing, racing.findFirst(KEY), "findFirst");
            releaseFound(racing, racing.deleteOrGet(KEY, 3), "deleteOrGet");
        });
    }

    private static void releaseFound(DedupCache racing, CacheEntry found, String lookup) {
        if (found == null) {
            throw new AssertionError(lookup + " missed a pair held until close()");
        }
        racing.release(found);
    }

    @Test
    void aFindNextWalkRacingCloseEitherSucceedsOrSaysTheCacheIsClosed() throws Exception {
        assertEveryFailureRacingCloseSaysClosed(racing -> {
            CacheEntry entry = racing.findFirst(KEY);
            while (entry != null) {
                entry = racing.findNext(entry);
            }
        });
    }

    /**
     * Races {@code close()} against a thread that repeats {@code use} on a cache holding three values
     * of {@link #KEY} (the third held by the test throughout), many rounds, closing after a varying
     * number of repetitions: whatever {@code use} throws must be the closed cache's
     * {@link IllegalStateException}, never a complaint about the caller's references.
     */
    private void assertEveryFailureRacingCloseSaysClosed(Consumer<DedupCache> use) throws Exception {
        for (int round = 0; round < 300; round++) {
            DedupCache racing = anotherCache();
            for (long value = 1; value <= 3; value++) {
                racing.create(KEY, value, true);
            }
            CacheEntry heldByTheTest = racing.get(KEY, 3);
            AtomicInteger repetitions = new AtomicInteger();
            CompletableFuture<Throwable> user = CompletableFuture.supplyAsync(() -> {
                try {
                    for (;;) {
                        use.accept(racing);
                        repetitions.incrementAndGet();
                    }
                } catch (Throwable failure) {
                    return failure;
                }
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(PATIENCE_SECONDS);
            while (repetitions.get() < round % 7 && !user.isDone() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            racing.close();
            Throwable failure = user.get(PATIENCE_SECONDS, TimeUnit.SECONDS);
            if (!(failure instanceof IllegalStateException) || !failure.getMessage().contains("closed")) {
                throw new AssertionError("round " + round + ": not the closed cache's exception: " + failure,
                        failure);
            }
            assertNotNull(heldByTheTest);
        }
    }

    @Test
    void everyCallWithAnEntryAfterCloseIsAnIllegalStateException() {
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, true);
        CacheEntry entry = cache.findFirst(KEY);
        cache.close();
        List<Executable> calls = List.of(
                () -> cache.findNext(entry),
                () -> cache.waitUnused(entry),
                () -> cache.waitUnused(entry, 1, TimeUnit.SECONDS),
                () -> cache.touch(entry),
                () -> cache.release(entry),
                () -> entry.setReusable(false),
                entry::close);
        for (Executable call : calls) {
            assertThrows(IllegalStateException.class, call);
        }
    }

    @Test
    void aBadEntryArgumentAfterCloseIsStillAnIllegalStateException() {
        DedupCache other = anotherCache();
        other.create(KEY, 1, true);
        CacheEntry foreign = other.get(KEY, 1);
        cache.close();
        List<Executable> calls = List.of(
                () -> cache.findNext(null),
                () -> cache.findNext(foreign),
                () -> cache.waitUnused(null),
                () -> cache.waitUnused(foreign, 1, TimeUnit.SECONDS),
                () -> cache.waitUnused(foreign, 1, null),
                () -> cache.touch(null),
                () -> cache.touch(foreign),
                () -> cache.release(null),
                () -> cache.release(foreign));
        for (Executable call : calls) {
            assertThrows(IllegalStateException.class, call);
        }
        other.release(foreign);
    }

    @Test
    void aWaiterWhoseWakeUpFailedStillReturnsOnceTheEntryIsUnused() throws Exception {
        WaitQueueFaults faults = WaitQueueFaults.injectInto(cache);
        cache.create(KEY, 1, true);
        CacheEntry mine = cache.get(KEY, 1);
        CacheEntry other = cache.get(KEY, 1); // the last other holder: ext4's waiter waits for it
        AtomicBoolean returned = new AtomicBoolean();
        Thread waiter = WaitQueueFaults.waiterFor(cache, mine, returned);
        faults.arm();
        try {
            cache.release(other); // the reference is dropped; the wake-up may throw
        } catch (OutOfMemoryError injected) {
            // the release happened all the same
        }
        faults.disarm();
        waiter.join(PATIENCE_SECONDS * 1000L); // nobody releases again: the waiter must notice by itself
        boolean stuck = waiter.isAlive();
        waiter.interrupt();
        assertFalse(stuck, "waitUnused still sleeps although the entry is unused");
        assertTrue(returned.get());
        cache.release(mine);
    }

    @Test
    void aCloseThatFailedWakingTheWaitersIsFinishedByTheNextClose() throws Exception {
        WaitQueueFaults faults = WaitQueueFaults.injectInto(cache);
        cache.create(KEY, 1, true);
        CacheEntry mine = cache.get(KEY, 1);
        cache.get(KEY, 1); // a second holder: the waiter waits for it
        AtomicBoolean returned = new AtomicBoolean();
        Thread waiter = WaitQueueFaults.waiterFor(cache, mine, returned);
        faults.arm();
        assertThrows(OutOfMemoryError.class, cache::close);
        faults.disarm();
        assertThrows(IllegalStateException.class, () -> cache.get(KEY, 1), "closed from the first close() on");
        cache.close();
        waiter.join(PATIENCE_SECONDS * 1000L);
        boolean stuck = waiter.isAlive();
        waiter.interrupt();
        assertFalse(stuck, "a waiter still sleeps in waitUnused of a closed cache");
        assertTrue(returned.get());
    }

    @Test
    void closeIsIdempotent() {
        cache.create(KEY, 1, true);
        cache.close();
        cache.close();
        assertThrows(IllegalStateException.class, () -> cache.size());
    }

    @Test
    void closeWakesThreadsBlockedInWaitUnusedWithAnIllegalStateException() throws Exception {
        cache.create(KEY, 1, true);
        CacheEntry mine = cache.get(KEY, 1);
        CacheEntry other = cache.get(KEY, 1);
        CountDownLatch started = new CountDownLatch(2);
        Future<Void> untimed = inThread(() -> {
            started.countDown();
            assertThrows(IllegalStateException.class, () -> cache.waitUnused(mine));
        });
        Future<Void> timed = inThread(() -> {
            started.countDown();
            assertThrows(IllegalStateException.class, () -> cache.waitUnused(mine, 30, TimeUnit.SECONDS));
        });
        started.await();
        Thread.sleep(50); // let both block
        cache.close();
        join(untimed);
        join(timed);
        assertNotNull(other);
    }

    // ---------------------------------------------------------------------------------------------
    // Races (section 6), each bounded in rounds and time
    // ---------------------------------------------------------------------------------------------

    /**
     * A steady create load and a thread that touches entries every turn cannot keep a pass from
     * ending: it is bounded by the entries present when it started.
     */
    @Test
    void shrinkOfLongMaxValueReturnsUnderConcurrentCreatesAndTouches() throws Exception {
        for (int key = 0; key < 1000; key++) {
            cache.create(key, key, true);
        }
        List<CacheEntry> held = new ArrayList<>(); // handed to the toucher
        for (int key = 0; key < 8; key++) {
            held.add(cache.get(key, key));
        }
        AtomicInteger stop = new AtomicInteger();
        Future<Void> creator = inThread(() -> {
            for (int key = 1_000_000; stop.get() == 0; key++) {
                cache.create(key, key, true);
            }
        });
        Future<Void> toucher = inThread(() -> {
            while (stop.get() == 0) { // every walk of the pass finds a flag to clear
                held.forEach(cache::touch);
            }
        });
        try {
            assertTimeoutPreemptively(Duration.ofSeconds(PATIENCE_SECONDS * 2),
                    () -> cache.shrink(Long.MAX_VALUE), "shrink(Long.MAX_VALUE) did not return");
        } finally {
            stop.set(1);
            join(creator);
            join(toucher);
            held.forEach(cache::release);
        }
    }

    @Test
    void racingCreatorsOfOnePairExactlyOneWins() throws Exception {
        int threads = 4;
        AtomicInteger winners = new AtomicInteger();
        ConcurrentRounds.run(threads, 400,
                round -> winners.set(0),
                (thread, round) -> {
                    if (cache.create(round, round * 7L, true)) {
                        winners.incrementAndGet();
                    }
                },
                round -> {
                    assertEquals(1, winners.get(), "winners of round " + round);
                    assertEquals(List.of(round * 7L), walk(round), "exactly one entry for the pair");
                    assertNull(cache.deleteOrGet(round, round * 7L));
                });
        assertEquals(0, cache.size());
    }

    @Test
    void racingCreatorsOfOnePairAmongOtherValuesOfTheKeyExactlyOneWins() throws Exception {
        int threads = 2;
        AtomicInteger winners = new AtomicInteger();
        ConcurrentRounds.run(threads, 300,
                round -> winners.set(0),
                (thread, round) -> {
                    cache.create(KEY, 1_000_000L + round * 2L + thread, true); // a distinct value per thread
                    if (cache.create(KEY, round, true)) {
                        winners.incrementAndGet();
                    }
                },
                round -> {
                    assertEquals(1, winners.get(), "winners of round " + round);
                    assertNull(cache.deleteOrGet(KEY, round));
                    assertNull(cache.get(KEY, round));
                    for (int thread = 0; thread < threads; thread++) { // within any per-key cap
                        assertNull(cache.deleteOrGet(KEY, 1_000_000L + round * 2L + thread));
                    }
                });
        assertEquals(0, cache.size());
    }

    /** Reuse vs release (ext4 65f8b80053a1): the holder's entry stays cached while held. */
    @Test
    void anEntrySomebodyHoldsIsNeverDeletedByDeleteOrGet() throws Exception {
        ConcurrentRounds.run(2, 500,
                round -> assertTrue(cache.create(KEY, round, true)),
                (thread, round) -> {
                    if (thread == 0) {
                        CacheEntry entry = cache.findFirst(KEY);
                        if (entry != null) {
                            assertEquals(round, entry.value());
                            CacheEntry same = cache.get(KEY, round);
                            assertNotNull(same, "the pair was deleted while a caller held it");
                            cache.release(same);
                            cache.release(entry);
                        }
                    } else {
                        deleteTheExt4Way(KEY, round);
                    }
                },
                round -> {
                    assertNull(cache.get(KEY, round));
                    assertEquals(0, cache.size());
                });
    }

    /** ext4's pattern: deleteOrGet; if somebody holds the entry, wait until unused, release, retry. */
    private void deleteTheExt4Way(int key, long value) throws InterruptedException {
        for (int attempt = 0; ; attempt++) {
            CacheEntry inUse = cache.deleteOrGet(key, value);
            if (inUse == null) {
                return;
            }
            assertTrue(attempt < 10_000, "deleteOrGet kept returning the entry");
            try {
                assertTrue(cache.waitUnused(inUse, PATIENCE_SECONDS, TimeUnit.SECONDS), "waitUnused did not wake");
            } finally {
                cache.release(inUse);
            }
        }
    }

    /** Reclaim vs user (58318914186c). */
    @Test
    void reclaimNeverFreesAnEntrySomebodyHolds() throws Exception {
        ConcurrentRounds.run(2, 1, round -> {}, (thread, round) -> {
            for (int i = 0; i < 3000; i++) {
                if (thread == 0) {
                    CacheEntry entry = cache.findFirst(KEY);
                    if (entry != null) {
                        for (int check = 0; check < 3; check++) {
                            CacheEntry same = cache.get(KEY, entry.value());
                            assertNotNull(same, "reclaim freed an entry a caller held");
                            cache.release(same);
                        }
                        cache.release(entry);
                    }
                } else {
                    cache.create(KEY, i % 4, true);
                    cache.shrink(Long.MAX_VALUE);
                }
            }
        }, round -> {});
    }

    /** Create vs deleteOrGet (5fc4cbd9fde5): size equals the live entries and is never negative. */
    @Test
    void sizeEqualsTheLiveEntriesUnderCreateVsDeleteOrGet() throws Exception {
        int pairs = 8;
        ConcurrentRounds.run(2, 1, round -> {}, (thread, round) -> {
            for (int i = 0; i < 4000; i++) {
                int pair = (i * 7 + thread) % pairs;
                if ((i + thread) % 2 == 0) {
                    cache.create(KEY, pair, true);
                } else {
                    CacheEntry held = cache.deleteOrGet(KEY, pair);
                    if (held != null) {
                        cache.release(held);
                    }
                }
                long size = cache.size();
                assertTrue(size >= 0 && size <= pairs, "size " + size);
            }
        }, round -> {});
        long live = 0;
        for (int pair = 0; pair < pairs; pair++) {
            if (cached(KEY, pair)) {
                live++;
            }
        }
        assertEquals(live, cache.size());
        assertEquals(live, walk(KEY).size());
    }

    /** Touch vs setReusable (a44e84a9b776): neither flag update is lost. */
    @Test
    void touchVsSetReusableLosesNeitherUpdate() throws Exception {
        CacheEntry[] held = new CacheEntry[1];
        ConcurrentRounds.run(2, 300,
                round -> {
                    assertTrue(cache.create(KEY, round, round % 2 == 0));
                    held[0] = cache.get(KEY, round);
                },
                (thread, round) -> {
                    if (thread == 0) {
                        held[0].setReusable(round % 2 != 0); // flip it
                    } else {
                        cache.touch(held[0]);
                    }
                },
                round -> {
                    CacheEntry entry = held[0];
                    assertEquals(round % 2 != 0, entry.reusable(), "setReusable lost in round " + round);
                    cache.release(entry);
                    assertEquals(0, cache.shrink(1), "touch lost in round " + round + ": no second chance");
                    assertEquals(1, cache.shrink(1));
                    assertEquals(0, cache.size());
                });
    }

    /** findNext while the chain changes: the walk neither fails nor loops, and sees only its key. */
    @Test
    void aFindNextWalkSurvivesConcurrentChangesOfTheKeysEntries() throws Exception {
        for (long value = 0; value < 8; value++) {
            cache.create(KEY, value, true);
        }
        ConcurrentRounds.run(2, 1, round -> {}, (thread, round) -> {
            for (int i = 0; i < 2000; i++) {
                if (thread == 0) {
                    Set<Long> seen = new HashSet<>();
                    CacheEntry entry = cache.findFirst(KEY);
                    int steps = 0;
                    while (entry != null) {
                        assertEquals(KEY, entry.key());
                        assertTrue(entry.value() >= 0 && entry.value() < 16, "value " + entry.value());
                        seen.add(entry.value());
                        assertTrue(++steps <= 64, "walk does not end");
                        entry = cache.findNext(entry);
                    }
                } else {
                    long value = i % 16;
                    if (!cache.create(KEY, value, true)) {
                        CacheEntry held = cache.deleteOrGet(KEY, value);
                        if (held != null) {
                            cache.release(held);
                        }
                    }
                }
            }
        }, round -> {});
    }

    /** waitUnused vs release: the waiter always wakes. */
    @Test
    void waitUnusedAlwaysWakesWhenTheOtherHolderReleases() throws Exception {
        CacheEntry[] mine = new CacheEntry[1];
        CacheEntry[] other = new CacheEntry[1];
        ConcurrentRounds.run(2, 400,
                round -> {
                    assertTrue(cache.create(KEY, round, true));
                    mine[0] = cache.get(KEY, round);
                    other[0] = cache.get(KEY, round);
                },
                (thread, round) -> {
                    if (thread == 0) {
                        assertTrue(cache.waitUnused(mine[0], PATIENCE_SECONDS, TimeUnit.SECONDS),
                                "waiter not woken in round " + round);
                    } else {
                        for (int spin = round % 50; spin > 0; spin--) {
                            Thread.onSpinWait(); // vary who gets there first
                        }
                        cache.release(other[0]);
                    }
                },
                round -> {
                    cache.release(mine[0]);
                    assertNull(cache.deleteOrGet(KEY, round));
                });
    }

    /** Publication: an entry created by another thread is seen fully initialised. */
    @Test
    void anEntryCreatedByAnotherThreadIsSeenFullyInitialised() throws Exception {
        ConcurrentRounds.run(2, 500, round -> {}, (thread, round) -> {
            int key = round * 31 + 7;
            long value = ((long) round << 33) | 5;
            boolean reusable = round % 2 == 0;
            if (thread == 0) {
                assertTrue(cache.create(key, value, reusable));
            } else {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(PATIENCE_SECONDS);
                CacheEntry entry;
                while ((entry = cache.get(key, value)) == null) {
                    if (System.nanoTime() > deadline) {
                        fail("the created pair never became visible");
                    }
                    Thread.onSpinWait();
                }
                assertEquals(key, entry.key());
                assertEquals(value, entry.value());
                assertEquals(reusable, entry.reusable());
                cache.release(entry);
                if (reusable) {
                    try (CacheEntry found = cache.findFirst(key)) {
                        assertEquals(entry, found);
                    }
                }
            }
        }, round -> {});
    }

    /** Release to zero vs lookup: a lookup never hands out an entry whose count reached zero. */
    @Test
    void aLookupNeverReturnsAnEntryWhoseCountReachedZero() throws Exception {
        ConcurrentRounds.run(2, 1, round -> {}, (thread, round) -> {
            for (int i = 0; i < 4000; i++) {
                if (thread == 0) {
                    CacheEntry held = cache.deleteOrGet(KEY, 1);
                    if (held != null) {
                        cache.release(held);
                    }
                    cache.create(KEY, 1, true);
                    if (i % 16 == 0) {
                        cache.shrink(Long.MAX_VALUE);
                    }
                } else {
                    CacheEntry entry = (i % 2 == 0) ? cache.get(KEY, 1) : cache.findFirst(KEY);
                    if (entry != null) {
                        assertEquals(1, entry.value());
                        CacheEntry same = cache.get(KEY, 1);
                        assertEquals(entry, same, "a held entry must still be the cached one");
                        cache.release(same);
                        cache.release(entry); // a revived dead entry would be an over-release here
                    }
                }
            }
        }, round -> {});
        assertTrue(cache.size() <= 1);
    }

    /** Many threads hammering one key with the ext4 pattern: counts stay consistent. */
    @Test
    void ext4PatternOnOneKeyKeepsCountsConsistent() throws Exception {
        ConcurrentRounds.run(2, 1, round -> {}, (thread, round) -> {
            for (int i = 0; i < 2000; i++) {
                long value = i % 3;
                if (thread == 0) {
                    cache.create(KEY, value, true);
                    CacheEntry entry = cache.findFirst(KEY);
                    while (entry != null) {
                        if (entry.value() == value) {
                            cache.touch(entry);
                            cache.release(entry);
                            break;
                        }
                        entry = cache.findNext(entry);
                    }
                } else {
                    deleteTheExt4Way(KEY, value);
                }
            }
        }, round -> {});
        long live = walk(KEY).size();
        assertEquals(live, cache.size());
        assertEquals(live, cache.shrink(Long.MAX_VALUE) + cache.shrink(Long.MAX_VALUE));
        assertEquals(0, cache.size());
    }
}
