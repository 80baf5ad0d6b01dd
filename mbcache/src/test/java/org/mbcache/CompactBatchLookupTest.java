package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CompactMbCache#findFirstHandles}: key by key what {@code findFirstHandle} returns, each
 * found handle one reference of the caller's, each key one lookup in the statistics, the arguments
 * checked before any reference is taken, nothing left held when a lookup throws part-way, and no
 * allocation.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CompactBatchLookupTest {

    private static final long NO_ENTRY = CompactMbCache.NO_ENTRY;

    /** A cache whose reclaim runs on the caller, seeded; {@link CompactBatchGetTest} uses it too. */
    static CompactMbCache cache(int bucketBits, long maxEntries) {
        return CompactMbCache.builder().bucketBits(bucketBits).maxEntries(maxEntries).executor(Runnable::run)
                .hashSeed(42).build();
    }

    /**
     * Fills {@code cache} with keys {@code 0..present-1} (value {@code key * 10}): one key in four is
     * not reusable, and one in five has a second, newer pair (value {@code key * 10 + 1}) that is not
     * reusable, so its first reusable entry is the older one. Keys from {@code present} up are absent.
     */
    private static void fill(CompactMbCache cache, int present) {
        for (int key = 0; key < present; key++) {
            assertTrue(cache.create(key, key * 10L, key % 4 != 3));
            if (key % 5 == 0) {
                assertTrue(cache.create(key, key * 10L + 1, false));
            }
        }
    }

    /** {@code n} keys drawn from {@code [0, 2 * present)}: about half present, repeats included. */
    private static int[] randomKeys(int n, int present, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int[] keys = new int[n];
        for (int i = 0; i < n; i++) {
            keys[i] = i > 0 && random.nextInt(8) == 0 ? keys[random.nextInt(i)] : random.nextInt(2 * present);
        }
        return keys;
    }

    /** Checks {@code handles[i]} against a single {@code findFirstHandle(keys[i])}, then releases both. */
    private static void assertMatchesSingleLookups(CompactMbCache cache, int[] keys, long[] handles, int found) {
        int expectedFound = 0;
        for (int i = 0; i < keys.length; i++) {
            long single = cache.findFirstHandle(keys[i]);
            assertEquals(single, handles[i], "key " + keys[i] + " at " + i);
            if (single != NO_ENTRY) {
                expectedFound++;
                cache.release(single);
                cache.release(handles[i]);
            }
        }
        assertEquals(expectedFound, found);
    }

    @Test
    void eachHandleIsWhatFindFirstHandleReturnsForItsKeyOverPresentAbsentNonReusableAndRepeatedKeys() {
        try (CompactMbCache cache = cache(6, 4096)) {
            fill(cache, 500);
            int[] keys = randomKeys(300, 500, 1);
            long[] handles = new long[keys.length];
            int found = cache.findFirstHandles(keys, handles);
            assertTrue(found > 50 && found < 250, "a mix of hits and misses: " + found);
            assertMatchesSingleLookups(cache, keys, handles, found);
        }
    }

    @Test
    void theFirstReusableEntryIsFoundPastANewerNonReusableOne() {
        try (CompactMbCache cache = cache(4, 1024)) {
            fill(cache, 10);
            long[] handles = new long[2];
            assertEquals(1, cache.findFirstHandles(new int[] {5, 3}, handles));
            assertEquals(50, cache.value(handles[0]), "key 5's older, reusable pair");
            assertEquals(NO_ENTRY, handles[1], "key 3 is not reusable");
            cache.release(handles[0]);
        }
    }

    @Test
    void eachFoundHandleHoldsOneReferenceThatReleasesOnce() {
        try (CompactMbCache cache = cache(4, 1024)) {
            fill(cache, 40);
            int[] keys = {1, 2, 6, 9, 100, 13};
            long[] handles = new long[keys.length];
            assertEquals(5, cache.findFirstHandles(keys, handles));
            assertEquals(NO_ENTRY, handles[4]);
            for (int i = 0; i < keys.length; i++) {
                if (i != 4) {
                    long handle = handles[i];
                    cache.release(handle);
                    assertThrows(IllegalStateException.class, () -> cache.release(handle), "key " + keys[i]);
                }
            }
        }
    }

    @Test
    void aKeyTwiceInOneBatchTakesTwoReferences() {
        try (CompactMbCache cache = cache(4, 1024)) {
            fill(cache, 10);
            long[] handles = new long[3];
            assertEquals(3, cache.findFirstHandles(new int[] {2, 2, 2}, handles));
            assertEquals(handles[0], handles[1]);
            assertEquals(handles[0], handles[2]);
            for (int i = 0; i < 3; i++) {
                cache.release(handles[0]);
            }
            assertThrows(IllegalStateException.class, () -> cache.release(handles[0]));
        }
    }

    @Test
    void theStatisticsCountEveryKeyAsOneLookup() {
        try (CompactMbCache cache = cache(6, 4096)) {
            fill(cache, 500);
            int[] keys = randomKeys(200, 500, 2);
            long[] handles = new long[keys.length];
            CacheStats before = cache.stats();
            int found = cache.findFirstHandles(keys, handles);
            CacheStats after = cache.stats();
            assertEquals(found, after.lookupHits() - before.lookupHits());
            assertEquals(keys.length - found, after.lookupMisses() - before.lookupMisses());
            releaseAll(cache, handles);
        }
    }

    @Test
    void emptyArraysFindNothing() {
        try (CompactMbCache cache = cache(4, 1024)) {
            fill(cache, 10);
            CacheStats before = cache.stats();
            assertEquals(0, cache.findFirstHandles(new int[0], new long[0]));
            assertEquals(before, cache.stats());
        }
    }

    @Test
    void handlesPastTheKeysAreNotWritten() {
        try (CompactMbCache cache = cache(4, 1024)) {
            fill(cache, 10);
            long[] handles = {7, 7, 7, 7};
            assertEquals(1, cache.findFirstHandles(new int[] {1, 50}, handles));
            assertEquals(NO_ENTRY, handles[1]);
            assertEquals(7, handles[2]);
            assertEquals(7, handles[3]);
            cache.release(handles[0]);
        }
    }

    @Test
    void handlesShorterThanKeysAreRefusedBeforeAnyReferenceIsTaken() {
        try (CompactMbCache cache = cache(4, 1024)) {
            fill(cache, 10);
            long[] handles = new long[2];
            assertThrows(IllegalArgumentException.class, () -> cache.findFirstHandles(new int[] {1, 2, 4}, handles));
            assertArrayEquals(new long[2], handles, "nothing written");
            assertEquals(0, cache.stats().lookupHits() + cache.stats().lookupMisses(), "no lookup ran");
            for (int key : new int[] {1, 2, 4}) { // a pair nobody holds is deleted, a held one handed back
                assertEquals(NO_ENTRY, cache.deleteOrGetHandle(key, key * 10L), "key " + key + " is held");
            }
        }
    }

    @Test
    void nullArraysAreRefused() {
        try (CompactMbCache cache = cache(4, 1024)) {
            assertThrows(NullPointerException.class, () -> cache.findFirstHandles(null, new long[1]));
            assertThrows(NullPointerException.class, () -> cache.findFirstHandles(new int[1], null));
        }
    }

    @Test
    void aClosedCacheThrows() {
        CompactMbCache cache = cache(4, 1024);
        fill(cache, 10);
        cache.close();
        IllegalStateException closed = assertThrows(IllegalStateException.class,
                () -> cache.findFirstHandles(new int[] {1}, new long[1]));
        assertEquals("cache is closed", closed.getMessage());
        assertThrows(IllegalStateException.class, () -> cache.findFirstHandles(new int[0], new long[0]));
    }

    /**
     * Spends the cache's hot-mode budget, then takes references to pair (6, 60) until its cold count
     * is full and the next lookup of it throws: a lookup that fails part-way through a batch. The
     * references held, to release at the end; {@link CompactBatchGetTest} uses it too.
     */
    static List<Long> holdPair6UntilSaturated(CompactMbCache cache) {
        List<Long> held = HotEntries.spendHotBudget(cache, 100);
        boolean saturated = false;
        for (int i = 0; i < 1 << 16 && !saturated; i++) {
            try {
                held.add(cache.getHandle(6, 60));
            } catch (IllegalStateException full) {
                saturated = true;
            }
        }
        assertTrue(saturated, "a cold pair that cannot go hot refuses references past its count");
        return held;
    }

    @Test
    void aLookupThatThrowsPartWayGivesBackTheReferencesTakenBeforeIt() {
        try (CompactMbCache cache = cache(4, 1024)) {
            fill(cache, 10);
            List<Long> held = holdPair6UntilSaturated(cache);
            long[] handles = {7, 7, 7, 7, 7};
            assertThrows(IllegalStateException.class, () -> cache.findFirstHandles(new int[] {1, 2, 6, 4}, handles));
            assertArrayEquals(new long[] {NO_ENTRY, NO_ENTRY, NO_ENTRY, NO_ENTRY, 7}, handles);
            for (int key : new int[] {1, 2, 4}) { // a pair nobody holds is deleted, a held one handed back
                assertEquals(NO_ENTRY, cache.deleteOrGetHandle(key, key * 10L), "key " + key + " is still held");
            }
            for (long handle : held) {
                cache.release(handle);
            }
        }
    }

    @Test
    void aLookupThatThrowsPartWayLeavesTheLookupsBeforeItCountedAndItselfNot() {
        try (CompactMbCache cache = cache(4, 1024)) {
            fill(cache, 10);
            List<Long> held = holdPair6UntilSaturated(cache);
            CacheStats before = cache.stats();
            long[] handles = new long[4];
            // key 1 found, key 3 (not reusable) missed, key 6 throws, key 4 never looked up
            assertThrows(IllegalStateException.class, () -> cache.findFirstHandles(new int[] {1, 3, 6, 4}, handles));
            CacheStats after = cache.stats();
            assertEquals(1, after.lookupHits() - before.lookupHits());
            assertEquals(1, after.lookupMisses() - before.lookupMisses());
            for (long handle : held) {
                cache.release(handle);
            }
        }
    }

    @Test
    void aBatchOfMoreThanTenThousandKeysMatchesSingleLookups() {
        try (CompactMbCache cache = cache(12, 1 << 16)) {
            fill(cache, 20_000);
            int[] keys = randomKeys(12_345, 20_000, 3);
            assertTrue(keys.length > 10 * CompactBatchLookup.GROUP && keys.length % CompactBatchLookup.GROUP != 0);
            long[] handles = new long[keys.length];
            int found = cache.findFirstHandles(keys, handles);
            assertMatchesSingleLookups(cache, keys, handles, found);
        }
    }

    @Test
    void aBatchInATableLargeEnoughToLookAheadMatchesSingleLookupsByKeyAndByPair() {
        int bucketBits = Integer.numberOfTrailingZeros(CompactBatchLookup.LOOK_AHEAD_MIN_BUCKETS);
        try (CompactMbCache cache = cache(bucketBits, 1 << 20)) {
            fill(cache, 600_000); // about eleven entries a bucket: most chains reach into the pool
            int[] keys = randomKeys(50_000, 600_000, 4);
            long[] handles = new long[keys.length];
            int found = cache.findFirstHandles(keys, handles);
            assertTrue(found > 10_000, "a mix of hits and misses: " + found);
            assertMatchesSingleLookups(cache, keys, handles, found);
            long[] values = new long[keys.length];
            for (int i = 0; i < keys.length; i++) {
                values[i] = keys[i] * 10L + (i & 1); // the older pair, or the newer one of a key in five
            }
            int foundByPair = cache.getHandles(keys, values, handles);
            CompactBatchGetTest.assertMatchesSingleGets(cache, keys, values, handles, foundByPair);
        }
    }

    @Test
    void aBatchAllocatesNothing() {
        int calls = 20_000;
        try (CompactMbCache cache = cache(8, 1 << 12)) {
            fill(cache, 1000);
            int[] keys = randomKeys(40, 1000, 4); // more than a group: a full group and a short one
            long[] handles = new long[keys.length];
            for (int i = 0; i < calls; i++) { // warm up, so the measured loop runs compiled code
                cache.findFirstHandles(keys, handles);
                releaseAll(cache, handles);
            }
            long before = AllocatedBytes.byCurrentThread();
            long found = 0;
            for (int i = 0; i < calls; i++) {
                found += cache.findFirstHandles(keys, handles);
                releaseAll(cache, handles);
            }
            long bytes = AllocatedBytes.byCurrentThread() - before;
            assertNotEquals(0, found);
            // Under a byte per call: any per-call object (16 bytes at least) fails this by far.
            assertTrue(bytes < calls, bytes + " bytes for " + calls + " batches of " + keys.length + " keys");
        }
    }

    private static void releaseAll(CompactMbCache cache, long[] handles) {
        for (long handle : handles) {
            if (handle != NO_ENTRY) {
                cache.release(handle);
            }
        }
    }

    @Test
    void everyMissIsWrittenAsNoEntry() {
        try (CompactMbCache cache = cache(4, 1024)) {
            fill(cache, 10);
            long[] handles = new long[4];
            Arrays.fill(handles, 7);
            int found = cache.findFirstHandles(new int[] {11, 12, 13, 14}, handles);
            assertEquals(0, found);
            assertArrayEquals(new long[] {NO_ENTRY, NO_ENTRY, NO_ENTRY, NO_ENTRY}, handles);
        }
    }
}
