package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mbcache.contract.Pairs.isCached;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The flood bounds: a keyed bucket index that keys aimed with the kernel's {@code hash_32} do not
 * defeat, and a cap on every chain that equal keys cannot get past, while held entries survive.
 */
class MbCacheFloodTest {

    private static final int BUCKET_BITS = 12;
    private static final long MAX_ENTRIES = 65_536;
    private static final int CAP = 24;

    private static MbCache cache(int chainCap) {
        return MbCache.builder().bucketBits(BUCKET_BITS).maxEntries(MAX_ENTRIES).chainCap(chainCap)
                .hashSeed(42).executor(task -> {}).build();
    }

    /** Distinct keys the kernel's {@code hash_32} sends to bucket 0: what an attacker would send. */
    private static int[] keysAimedAtOneKernelBucket(int count) {
        int[] keys = new int[count];
        int found = 0;
        for (int candidate = 0; found < count; candidate++) {
            if (KeyedIndex.hash32(candidate, BUCKET_BITS) == 0) {
                keys[found++] = candidate;
            }
        }
        return keys;
    }

    @Test
    void aOneKeyFloodLeavesNoChainLongerThanTheCap() {
        try (MbCache cache = cache(CAP)) {
            for (long value = 0; value < 10_000; value++) {
                assertTrue(cache.create(7, value, true));
            }
            assertEquals(CAP, cache.chainLength(7));
            assertEquals(CAP, cache.size());
        }
    }

    @Test
    void aOneKeyFloodKeepsTheNewestValues() {
        try (MbCache cache = cache(CAP)) {
            for (long value = 0; value < 1_000; value++) {
                cache.create(7, value, true);
            }
            assertTrue(isCached(cache, 7, 999));
            assertTrue(isCached(cache, 7, 1_000 - CAP));
            assertTrue(!isCached(cache, 7, 999 - CAP));
        }
    }

    @Test
    void aHeldEntrySurvivesAOneKeyFlood() {
        try (MbCache cache = cache(CAP)) {
            cache.create(7, -1, true);
            CacheEntry held = cache.get(7, -1);
            for (long value = 0; value < 10_000; value++) {
                cache.create(7, value, true);
            }
            assertEquals(held, cache.get(7, -1));
            cache.release(held);
            cache.release(held);
            assertTrue(cache.chainLength(7) <= CAP + 1);
        }
    }

    @Test
    void aChainExceedsTheCapOnlyByHeldEntries() {
        try (MbCache cache = cache(4)) {
            CacheEntry[] held = new CacheEntry[6];
            for (int i = 0; i < held.length; i++) {
                cache.create(7, i, true);
                held[i] = cache.get(7, i);
            }
            for (long value = 100; value < 200; value++) {
                cache.create(7, value, true);
            }
            // Six held, plus at most the cap's worth of unheld: the newest create always gets in.
            assertTrue(cache.chainLength(7) <= 6 + 4, "chain " + cache.chainLength(7));
            for (int i = 0; i < held.length; i++) {
                assertEquals(held[i], cache.get(7, i));
                cache.release(held[i]);
                cache.release(held[i]);
            }
        }
    }

    @Test
    void theCapGivesAReferencedEntryASecondChance() {
        try (MbCache cache = cache(4)) {
            for (long value = 0; value < 4; value++) {
                cache.create(7, value, true);
            }
            try (CacheEntry oldest = cache.get(7, 0)) {
                cache.touch(oldest);
            }
            cache.create(7, 4, true);
            assertTrue(isCached(cache, 7, 0), "the touched oldest entry was passed over once");
            assertNull(cache.get(7, 1), "the oldest untouched entry went instead");
        }
    }

    @Test
    void capReclaimsAreCounted() {
        try (MbCache cache = cache(CAP)) {
            for (long value = 0; value < 100; value++) {
                cache.create(7, value, true);
            }
            assertEquals(100 - CAP, cache.stats().chainCapReclaims());
            assertEquals(0, cache.stats().entriesReclaimed());
        }
    }

    @Test
    void capReclaimedEntriesLeaveTheLruListInTime() {
        try (MbCache cache = cache(CAP)) {
            for (long value = 0; value < 100_000; value++) {
                cache.create(7, value, true);
            }
            assertTrue(cache.linkedEntries() <= 2L * BackgroundReclaim.SYNC_SHRINK_BATCH + CAP + 1024,
                    "linked: " + cache.linkedEntries());
        }
    }

    @Test
    void aBucketFloodAimedWithHash32SpreadsOverTheKeyedIndex() {
        try (MbCache cache = cache(CAP)) {
            int[] keys = keysAimedAtOneKernelBucket(65_536);
            int[] perBucket = new int[1 << BUCKET_BITS];
            for (int key : keys) {
                perBucket[cache.bucketOf(key)]++;
            }
            // 16 per bucket on average, as random keys would give: Poisson(16) over 4096 buckets
            // has its maximum near 32 and nowhere near the 65,536 the kernel's index would put in one.
            int longest = 0;
            int empty = 0;
            for (int n : perBucket) {
                longest = Math.max(longest, n);
                empty += n == 0 ? 1 : 0;
            }
            assertTrue(longest <= 40, "longest bucket " + longest);
            assertTrue(empty <= 5, "empty buckets " + empty);
        }
    }

    @Test
    void aBucketFloodAimedWithHash32ReachesNoCap() {
        try (MbCache cache = cache(KernelPortOptions.defaultChainCap(MAX_ENTRIES, BUCKET_BITS))) {
            for (int key : keysAimedAtOneKernelBucket(50_000)) {
                cache.create(key, key, true);
            }
            assertEquals(0, cache.stats().chainCapReclaims());
            assertEquals(50_000, cache.size());
        }
    }

    @Test
    void theSameSeedGivesTheSameBuckets() {
        try (MbCache one = cache(CAP); MbCache two = cache(CAP)) {
            for (int key = 0; key < 1000; key++) {
                assertEquals(one.bucketOf(key), two.bucketOf(key));
            }
        }
    }

    /**
     * Compared over 2^16 buckets: equal secrets put all 1,000 keys in the same bucket at any size,
     * while two different random secrets are two independent draws of the keyed index, which put a
     * key in the same bucket with probability 2^-16 (0.015 of the 1,000 keys expected; 20 fail the test).
     */
    @Test
    void unseededCachesDrawDifferentSecrets() {
        try (MbCache one = MbCache.create(16); MbCache two = MbCache.create(16)) {
            int same = 0;
            for (int key = 0; key < 1000; key++) {
                same += one.bucketOf(key) == two.bucketOf(key) ? 1 : 0;
            }
            assertTrue(same < 20, same + " of 1000 keys in the same bucket");
        }
    }

    /**
     * How the default cap was chosen, checked: random keys at twice maxEntries (the most a cache
     * holds before every create reclaims) never reach it, for the default load and a crowded one. The
     * seed is fixed: a few random seeds in a million are multipliers so near a fraction with a small
     * denominator that they crowd even random keys into a few buckets (most often at 2^14 buckets).
     */
    @Test
    void honestChainsAtTwiceMaxEntriesStayBelowTheDefaultCap() {
        long[][] configurations = {{10, 16_384}, {12, 65_536}, {14, 262_144}, {8, 65_536}};
        SplittableRandom random = new SplittableRandom(7);
        for (long[] configuration : configurations) {
            int bits = (int) configuration[0];
            long maxEntries = configuration[1];
            int cap = KernelPortOptions.defaultChainCap(maxEntries, bits);
            try (MbCache cache = MbCache.builder().bucketBits(bits).maxEntries(maxEntries).hashSeed(42)
                    .executor(task -> {}).build()) {
                int[] perBucket = new int[1 << bits];
                int longest = 0;
                for (long i = 0; i < 2 * maxEntries; i++) {
                    longest = Math.max(longest, ++perBucket[cache.bucketOf(random.nextInt())]);
                }
                assertTrue(longest < cap, "bits " + bits + ": longest " + longest + ", cap " + cap);
            }
        }
    }

    @Test
    void theDefaultCapFollowsTheLoad() {
        assertEquals(80, KernelPortOptions.defaultChainCap(16_384, 10));
        assertEquals(KernelPortOptions.MIN_DEFAULT_CHAIN_CAP, KernelPortOptions.defaultChainCap(16, 10));
        assertEquals(2 * 2 * 1024 + 16, KernelPortOptions.defaultChainCap(1024, 0));
        assertTrue(KernelPortOptions.defaultChainCap(Long.MAX_VALUE, 0) > 0);
        try (MbCache cache = MbCache.create(10)) {
            assertEquals(80, cache.chainCap());
        }
    }

    @Test
    void anUnboundedCacheGetsTheLargestDefaultCapWhateverItsBuckets() {
        long largest = 2L * (Integer.MAX_VALUE / 4) + 16;
        for (int bits = 0; bits <= 30; bits++) {
            assertEquals(largest, KernelPortOptions.defaultChainCap(Long.MAX_VALUE, bits), "bucketBits " + bits);
        }
    }

    @Test
    void anUnboundedCacheNeverReclaimsAnHonestEntryForTheChainCap() {
        try (MbCache cache = MbCache.builder().bucketBits(4).maxEntries(Long.MAX_VALUE).build()) {
            for (int i = 0; i < 1_000; i++) {
                assertTrue(cache.create(i, i, true));
            }
            assertEquals(0, cache.stats().chainCapReclaims());
            assertEquals(1_000, cache.size());
        }
    }

    @Test
    void aHeldEntryOfAnotherKeySurvivesAFloodOfItsBucket() {
        try (MbCache cache = cache(CAP)) {
            int victim = 1;
            int attacker = victim + 1;
            while (cache.bucketOf(attacker) != cache.bucketOf(victim)) {
                attacker++;
            }
            cache.create(victim, 5, true);
            try (CacheEntry held = cache.findFirst(victim)) {
                assertNotNull(held);
                for (long value = 0; value < 1_000; value++) {
                    cache.create(attacker, value, true);
                }
                assertEquals(held, cache.get(victim, 5));
                cache.release(held);
            }
        }
    }
}
