package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CompactMbCache#getHandles}: pair by pair what {@code getHandle} returns (reusable or not),
 * each pair one lookup in the statistics, the arguments checked before any reference is taken, and
 * nothing left held when a lookup throws part-way. The batch machinery it shares with
 * {@code findFirstHandles} is specified in {@link CompactBatchLookupTest}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CompactBatchGetTest {

    private static final long NO_ENTRY = CompactMbCache.NO_ENTRY;

    /** Keys {@code 0..present-1}, value {@code key * 10}, one in four not reusable, one in five with a second value. */
    private static void fill(CompactMbCache cache, int present) {
        for (int key = 0; key < present; key++) {
            assertTrue(cache.create(key, key * 10L, key % 4 != 3));
            if (key % 5 == 0) {
                assertTrue(cache.create(key, key * 10L + 1, true));
            }
        }
    }

    private static void releaseAll(CompactMbCache cache, long[] handles, int length) {
        for (int i = 0; i < length; i++) {
            if (handles[i] != NO_ENTRY) {
                cache.release(handles[i]);
            }
        }
    }

    /**
     * Checks {@code handles[i]} against a single {@code getHandle(keys[i], values[i])}, then releases
     * both; {@link CompactBatchLookupTest} uses it too.
     */
    static void assertMatchesSingleGets(CompactMbCache cache, int[] keys, long[] values, long[] handles, int found) {
        int expected = 0;
        for (int i = 0; i < keys.length; i++) {
            long single = cache.getHandle(keys[i], values[i]);
            assertEquals(single, handles[i], "pair (" + keys[i] + ", " + values[i] + ") at " + i);
            if (single != NO_ENTRY) {
                expected++;
                assertEquals(values[i], cache.value(handles[i]));
                cache.release(single);
                cache.release(handles[i]);
            }
        }
        assertEquals(expected, found);
    }

    /**
     * One array as both {@code values} and {@code handles}, each value turned into its pair's handle
     * in place, in a table large enough for the look-ahead (whose rounds must not write the caller's
     * arrays before the walks read the values) and in a small one.
     */
    @Test
    void oneArrayAsValuesAndHandlesTurnsEachValueIntoItsPairsHandle() {
        for (int bucketBits : new int[] {Integer.numberOfTrailingZeros(CompactBatchLookup.LOOK_AHEAD_MIN_BUCKETS), 8}) {
            try (CompactMbCache cache = CompactBatchLookupTest.cache(bucketBits, 1 << 20)) {
                fill(cache, 2000);
                for (int key = 1; key < 2000; key++) {
                    assertTrue(cache.create(key, 0, true)); // a pair a scratch word of 0 would find
                }
                int[] keys = new int[64];
                long[] valuesThenHandles = new long[keys.length];
                for (int i = 0; i < keys.length; i++) {
                    keys[i] = i * 31;
                    valuesThenHandles[i] = keys[i] * 10L;
                }
                long[] values = valuesThenHandles.clone();
                int found = cache.getHandles(keys, valuesThenHandles, valuesThenHandles);
                assertEquals(keys.length, found, bucketBits + " bucket bits");
                for (int i = 0; i < keys.length; i++) {
                    assertEquals(values[i], cache.value(valuesThenHandles[i]), "pair " + i + ", " + bucketBits + " bucket bits");
                    assertEquals(keys[i], cache.key(valuesThenHandles[i]));
                    cache.release(valuesThenHandles[i]);
                }
            }
        }
    }

    @Test
    void eachHandleIsWhatGetHandleReturnsForItsPairOverPresentAbsentAndNonReusablePairs() {
        try (CompactMbCache cache = CompactBatchLookupTest.cache(8, 1 << 14)) {
            fill(cache, 2000);
            SplittableRandom random = new SplittableRandom(5);
            int[] keys = new int[1000];
            long[] values = new long[keys.length];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = random.nextInt(4000); // half the keys absent
                values[i] = keys[i] * 10L + random.nextInt(3); // +1 present for one key in five, +2 never
            }
            long[] handles = new long[keys.length];
            int found = cache.getHandles(keys, values, handles);
            assertMatchesSingleGets(cache, keys, values, handles, found);
            assertTrue(found > 100, "some pairs found: " + found);
        }
    }

    @Test
    void aPairThatIsNotReusableIsFoundByPair() {
        try (CompactMbCache cache = CompactBatchLookupTest.cache(4, 1024)) {
            fill(cache, 10);
            long[] handles = new long[1];
            assertEquals(1, cache.getHandles(new int[] {3}, new long[] {30}, handles));
            assertEquals(30, cache.value(handles[0]));
            cache.release(handles[0]);
        }
    }

    @Test
    void theStatisticsCountEveryPairAsOneLookup() {
        try (CompactMbCache cache = CompactBatchLookupTest.cache(4, 1024)) {
            fill(cache, 10);
            CacheStats before = cache.stats();
            long[] handles = new long[3];
            assertEquals(2, cache.getHandles(new int[] {1, 2, 2}, new long[] {10, 20, 21}, handles));
            CacheStats after = cache.stats();
            assertEquals(2, after.lookupHits() - before.lookupHits());
            assertEquals(1, after.lookupMisses() - before.lookupMisses());
            releaseAll(cache, handles, handles.length);
        }
    }

    @Test
    void valuesShorterThanKeysAreRefusedBeforeAnyReferenceIsTaken() {
        try (CompactMbCache cache = CompactBatchLookupTest.cache(4, 1024)) {
            fill(cache, 10);
            long[] handles = new long[3];
            assertThrows(IllegalArgumentException.class,
                    () -> cache.getHandles(new int[] {1, 2, 4}, new long[] {10, 20}, handles));
            assertArrayEquals(new long[3], handles, "nothing written");
            assertEquals(0, cache.stats().lookupHits() + cache.stats().lookupMisses(), "no lookup ran");
        }
    }

    @Test
    void handlesShorterThanKeysAreRefused() {
        try (CompactMbCache cache = CompactBatchLookupTest.cache(4, 1024)) {
            fill(cache, 10);
            assertThrows(IllegalArgumentException.class,
                    () -> cache.getHandles(new int[] {1, 2}, new long[] {10, 20}, new long[1]));
            assertEquals(0, cache.stats().lookupHits() + cache.stats().lookupMisses(), "no lookup ran");
        }
    }

    @Test
    void nullArraysAreRefused() {
        try (CompactMbCache cache = CompactBatchLookupTest.cache(4, 1024)) {
            assertThrows(NullPointerException.class, () -> cache.getHandles(null, new long[1], new long[1]));
            assertThrows(NullPointerException.class, () -> cache.getHandles(new int[1], null, new long[1]));
            assertThrows(NullPointerException.class, () -> cache.getHandles(new int[1], new long[1], null));
        }
    }

    @Test
    void aClosedCacheThrows() {
        CompactMbCache cache = CompactBatchLookupTest.cache(4, 1024);
        fill(cache, 10);
        cache.close();
        assertThrows(IllegalStateException.class, () -> cache.getHandles(new int[] {1}, new long[] {10}, new long[1]));
    }

    @Test
    void aLookupThatThrowsPartWayGivesBackTheReferencesTakenBeforeIt() {
        try (CompactMbCache cache = CompactBatchLookupTest.cache(4, 1024)) {
            fill(cache, 10);
            List<Long> held = CompactBatchLookupTest.holdPair6UntilSaturated(cache);
            long[] handles = {7, 7, 7, 7, 7};
            assertThrows(IllegalStateException.class,
                    () -> cache.getHandles(new int[] {1, 2, 6, 4}, new long[] {10, 20, 60, 40}, handles));
            assertArrayEquals(new long[] {NO_ENTRY, NO_ENTRY, NO_ENTRY, NO_ENTRY, 7}, handles);
            for (int key : new int[] {1, 2, 4}) { // a pair nobody holds is deleted, a held one handed back
                assertEquals(NO_ENTRY, cache.deleteOrGetHandle(key, key * 10L), "key " + key + " is still held");
            }
            for (long handle : held) {
                cache.release(handle);
            }
        }
    }
}
