package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mbcache.contract.SnapshotRecords;
import org.mbcache.contract.SnapshotRecords.Record;

/**
 * The kernel port's snapshot order: its LRU list, oldest first, which a restore rebuilds, so that the
 * restored cache reclaims in the same order as the original.
 */
class SnapshotOrderTest {

    private final List<MbCache> caches = new ArrayList<>();

    private MbCache newCache() {
        MbCache cache = MbCache.builder().bucketBits(4).maxEntries(4096).executor(Runnable::run).build();
        caches.add(cache);
        return cache;
    }

    @AfterEach
    void closeCaches() {
        caches.forEach(MbCache::close);
    }

    private static List<Record> pairsOf(MbCache cache) {
        return SnapshotRecords.pairs(SnapshotRecords.snapshotOf(cache));
    }

    @Test
    void aSnapshotListsPairsInCreationOrder() {
        MbCache cache = newCache();
        IntStream.range(0, 300).forEach(i -> cache.create(i, i, true));
        assertEquals(IntStream.range(0, 300).mapToObj(i -> new Record(i, i, 0)).toList(), pairsOf(cache));
    }

    @Test
    void aSnapshotListsPairsGivenASecondChanceAfterTheOthers() {
        MbCache cache = newCache();
        IntStream.range(0, 10).forEach(i -> cache.create(i, i, true));
        try (CacheEntry entry = cache.get(0, 0)) {
            cache.touch(entry);
        }
        assertEquals(1, cache.shrink(2)); // pair 0 gets its second chance (to the tail), pair 1 goes
        List<Record> expected = new ArrayList<>();
        IntStream.range(2, 10).forEach(i -> expected.add(new Record(i, i, 0)));
        expected.add(new Record(0, 0, 0));
        assertEquals(expected, pairsOf(cache));
    }

    @Test
    void aRestoredCacheReclaimsInTheOriginalsOrder() throws IOException {
        MbCache original = newCache();
        IntStream.range(0, 200).forEach(i -> original.create(i * 31, i, i % 2 == 0));
        for (int i = 0; i < 100; i += 3) { // all within the first pass's reach: no flag survives it
            try (CacheEntry entry = original.get(i * 31, i)) {
                original.touch(entry);
            }
        }
        original.shrink(100); // mixes the list: touched entries move behind the others
        MbCache restored = newCache();
        restored.readSnapshot(new ByteArrayInputStream(SnapshotRecords.snapshotOf(original)));
        assertEquals(pairsOf(original), pairsOf(restored));
        original.shrink(40);
        restored.shrink(40);
        assertEquals(pairsOf(original), pairsOf(restored));
    }

    @Test
    void aSnapshotRecordsTheReferencedFlag() {
        MbCache cache = newCache();
        cache.create(1, 1, false);
        try (CacheEntry entry = cache.get(1, 1)) {
            cache.touch(entry);
        }
        assertEquals(List.of(new Record(1, 1, 2)), SnapshotRecords.records(SnapshotRecords.snapshotOf(cache)));
    }
}
