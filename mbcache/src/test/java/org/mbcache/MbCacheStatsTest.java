package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** The kernel port's counters: every lookup counted once, whichever path answered it. */
class MbCacheStatsTest {

    @Test
    void aMissOnAKeyTheBucketLacksIsCounted() {
        try (MbCache cache = MbCache.create(4)) {
            assertNull(cache.findFirst(1));
            assertNull(cache.get(1, 1));
            assertEquals(2, cache.stats().lookupMisses());
        }
    }

    @Test
    void aMissOnAKeyPresentButNotReusableIsCounted() {
        try (MbCache cache = MbCache.create(4)) {
            cache.create(1, 1, false);
            assertNull(cache.findFirst(1));
            assertNull(cache.get(1, 2));
            assertEquals(2, cache.stats().lookupMisses());
            assertEquals(0, cache.stats().lookupHits());
        }
    }

    @Test
    void hitsOfEveryLookupKindAreCounted() {
        try (MbCache cache = MbCache.create(4)) {
            cache.create(1, 1, true);
            cache.create(1, 2, true);
            CacheEntry first = cache.findFirst(1);
            CacheEntry next = cache.findNext(first);
            cache.release(next);
            cache.release(cache.get(1, 1));
            assertEquals(3, cache.stats().lookupHits());
            assertEquals(0, cache.stats().lookupMisses());
        }
    }

    @Test
    void createsDuplicatesAndDeletesAreCounted() {
        try (MbCache cache = MbCache.create(4)) {
            cache.create(1, 1, true);
            cache.create(1, 1, true);
            cache.deleteOrGet(1, 1);
            CacheStats stats = cache.stats();
            assertEquals(1, stats.creates());
            assertEquals(1, stats.duplicatesRefused());
            assertEquals(1, stats.deletes());
        }
    }
}
