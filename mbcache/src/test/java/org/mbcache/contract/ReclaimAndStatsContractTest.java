package org.mbcache.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
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
 * The {@link DedupCache} contract's size bound, reclaim and statistics ({@code docs/contract.md},
 * sections 3 and 4): {@code size}, {@code shrink}, the second chance, reclaim on overflow that
 * never takes a held entry, and what the statistics count, one behaviour per test, run against
 * every {@link Backend}.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
@ParameterizedClass(name = "{0}")
@EnumSource(Backend.class)
class ReclaimAndStatsContractTest extends DedupCacheFixture {

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
}
