package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mbcache.contract.Pairs.isCached;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mbcache.contract.ConcurrentRounds;

/**
 * Races only the kernel port's structures can lose: the lock-free LRU append stacks against
 * reclaim passes, and size accounting across create, deleteOrGet and reclaim at once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MbCacheConcurrencyTest {

    private static MbCache unboundedCache(int bucketBits) {
        // A maxEntries no test reaches, and an executor that never runs: only the test reclaims.
        return MbCache.builder().bucketBits(bucketBits).maxEntries(Long.MAX_VALUE / 4)
                .executor(task -> {}).build();
    }

    @Test
    void everyEntryCreatedConcurrentlyReachesTheLruList() throws Exception {
        try (MbCache cache = unboundedCache(4)) {
            int perThread = 20_000;
            ConcurrentRounds.together(
                    () -> { for (int i = 0; i < perThread; i++) cache.create(i, i, true); },
                    () -> { for (int i = 0; i < perThread; i++) cache.create(i, -1 - i, true); },
                    () -> { for (int round = 0; round < 200; round++) cache.linkedEntries(); });
            assertEquals(2L * perThread, cache.linkedEntries());
            assertEquals(2L * perThread, cache.shrink(Long.MAX_VALUE));
            assertEquals(0, cache.size());
        }
    }

    @Test
    void reclaimFollowsEachThreadsCreationOrder() throws Exception {
        try (MbCache cache = unboundedCache(6)) {
            int perThread = 10_000;
            ConcurrentRounds.together(
                    () -> { for (int i = 0; i < perThread; i++) cache.create(1, i, true); },
                    () -> { for (int i = 0; i < perThread; i++) cache.create(2, i, true); });
            cache.shrink(perThread); // frees the oldest half of the interleaving
            for (int key = 1; key <= 2; key++) {
                boolean seenSurvivor = false;
                for (int i = 0; i < perThread; i++) {
                    if (isCached(cache, key, i)) {
                        seenSurvivor = true;
                    } else {
                        assertTrue(!seenSurvivor, "key " + key + ": value " + i
                                + " was reclaimed although an older value of the same thread survived");
                    }
                }
            }
        }
    }

    @Test
    void sizeEqualsLiveEntriesAfterCreateDeleteAndReclaimRace() throws Exception {
        try (MbCache cache = unboundedCache(2)) {
            int keys = 64;
            Runnable churn = () -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                for (int i = 0; i < 100_000; i++) {
                    int key = random.nextInt(keys);
                    if (random.nextBoolean()) {
                        cache.create(key, key, true);
                    } else {
                        CacheEntry held = cache.deleteOrGet(key, key);
                        if (held != null) {
                            cache.release(held);
                        }
                    }
                    assertTrue(cache.size() >= 0, "negative size");
                }
            };
            Runnable reclaim = () -> {
                for (int i = 0; i < 2_000; i++) {
                    cache.shrink(8);
                }
            };
            ConcurrentRounds.together(churn, churn, reclaim);
            long live = 0;
            for (int key = 0; key < keys; key++) {
                if (isCached(cache, key, key)) {
                    live++;
                }
            }
            assertEquals(live, cache.size());
            assertEquals(live, cache.shrink(Long.MAX_VALUE));
        }
    }

    @Test
    void racingCreatorsOfOnePairInOneBucketLeaveExactlyOneEntry() throws Exception {
        for (CreateStrategy strategy : CreateStrategy.values()) {
            try (MbCache cache = MbCache.builder().bucketBits(0).createStrategy(strategy)
                    .maxEntries(Long.MAX_VALUE / 4).executor(task -> {}).build()) {
                int rounds = 5_000;
                int[] wins = new int[2];
                ConcurrentRounds.together(
                        () -> { for (int i = 0; i < rounds; i++) if (cache.create(i, i, true)) wins[0]++; },
                        () -> { for (int i = 0; i < rounds; i++) if (cache.create(i, i, true)) wins[1]++; });
                assertEquals(rounds, wins[0] + wins[1], strategy + ": winners");
                assertEquals(rounds, cache.size(), strategy + ": size");
            }
        }
    }

    @Test
    void aPairCachedThroughoutIsNeverMissedWhileItsBucketChurns() throws Exception {
        try (MbCache cache = unboundedCache(0)) { // one bucket: every churn shifts or grows its chain
            cache.create(7, 7, true);
            CacheEntry pinned = cache.get(7, 7); // held, so nothing may remove it
            int rounds = 200_000;
            ConcurrentRounds.together(
                    () -> {
                        for (int i = 0; i < rounds; i++) {
                            cache.create(100 + (i & 31), i, true);
                            CacheEntry busy = cache.deleteOrGet(100 + ((i - 16) & 31), i - 16);
                            if (busy != null) {
                                cache.release(busy);
                            }
                        }
                    },
                    () -> {
                        for (int i = 0; i < rounds; i++) {
                            CacheEntry found = (i & 1) == 0 ? cache.get(7, 7) : cache.findFirst(7);
                            if (found == null) {
                                throw new AssertionError("lookup " + i + " missed a cached pair");
                            }
                            cache.release(found);
                        }
                    });
            cache.release(pinned);
        }
    }
}
