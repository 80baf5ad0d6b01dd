package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The chain cap of the compact layout under floods: one key, and distinct keys aimed at one kernel bucket. */
class CompactMbCacheFloodTest {

    private static final int BUCKET_BITS = 12;
    private static final long MAX_ENTRIES = 65_536;
    private static final int CAP = 24;

    private static CompactMbCache cache(int chainCap) {
        return CompactMbCache.builder().bucketBits(BUCKET_BITS).maxEntries(MAX_ENTRIES).chainCap(chainCap)
                .hashSeed(42).executor(task -> { }).build();
    }

    private static boolean cached(CompactMbCache cache, int key, long value) {
        long handle = cache.getHandle(key, value);
        if (handle == CompactMbCache.NO_ENTRY) {
            return false;
        }
        cache.release(handle);
        return true;
    }

    @Test
    void aOneKeyFloodKeepsTheNewestValuesAndNoMoreThanTheCap() {
        try (CompactMbCache cache = cache(CAP)) {
            for (long value = 0; value < 10_000; value++) {
                assertTrue(cache.create(7, value, true));
            }
            assertEquals(CAP, cache.chainLength(7));
            assertEquals(CAP, cache.size());
            assertTrue(cached(cache, 7, 9_999));
            assertTrue(cached(cache, 7, 10_000 - CAP));
            assertTrue(!cached(cache, 7, 9_999 - CAP));
            assertEquals(10_000 - CAP, cache.stats().chainCapReclaims());
            assertTrue(cache.footprintBytes() < 2_000_000, "freed slots are reused: " + cache.footprintBytes());
        }
    }

    @Test
    void aChainExceedsTheCapOnlyByHeldEntries() {
        try (CompactMbCache cache = cache(4)) {
            long[] held = new long[6];
            for (int i = 0; i < held.length; i++) {
                cache.create(7, i, true);
                held[i] = cache.getHandle(7, i);
            }
            for (long value = 100; value < 200; value++) {
                cache.create(7, value, true);
            }
            assertTrue(cache.chainLength(7) <= 6 + 4, "chain " + cache.chainLength(7));
            for (int i = 0; i < held.length; i++) {
                assertEquals(held[i], cache.getHandle(7, i));
                cache.release(held[i]);
                cache.release(held[i]);
            }
        }
    }

    @Test
    void distinctKeysAimedAtOneKernelBucketSpreadOverTheKeyedIndex() {
        try (CompactMbCache cache = cache(CAP)) {
            int sent = 0;
            for (int candidate = 0; sent < 20_000; candidate++) {
                if (KeyedIndex.hash32(candidate, BUCKET_BITS) == 0) {
                    assertTrue(cache.create(candidate, candidate, true));
                    sent++;
                }
            }
            assertEquals(0, cache.stats().chainCapReclaims(), "an honest spread reaches no cap");
            int longest = 0;
            for (int candidate = 0, seen = 0; seen < 20_000; candidate++) {
                if (KeyedIndex.hash32(candidate, BUCKET_BITS) == 0) {
                    longest = Math.max(longest, cache.chainLength(candidate));
                    seen++;
                }
            }
            assertTrue(longest < CAP, "longest chain " + longest);
            assertNotEquals(0, longest);
        }
    }
}
