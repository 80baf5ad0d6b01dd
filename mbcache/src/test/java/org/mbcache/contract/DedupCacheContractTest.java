package org.mbcache.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.mbcache.CacheEntry;
import org.mbcache.CacheStats;
import org.mbcache.DedupCache;
import org.mbcache.testing.Backend;

/**
 * The {@link DedupCache} contract's single-thread behaviour ({@code docs/contract.md}, sections 1-3):
 * construction, {@code create}, the lookups, {@code deleteOrGet}, the flags and {@code release}, one
 * behaviour per test, run against every {@link Backend} ({@link DedupCacheFixture}'s cache).
 *
 * <p>Only what every backend promises is here: no exact LRU order, no bucket placement, no default
 * sizes. The other parts of the contract have their own classes: {@link WaitUnusedContractTest},
 * {@link ReclaimAndStatsContractTest}, {@link CloseAndMisuseContractTest} and
 * {@link ConcurrencyContractTest}.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
@ParameterizedClass(name = "{0}")
@EnumSource(Backend.class)
class DedupCacheContractTest extends DedupCacheFixture {

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
}
