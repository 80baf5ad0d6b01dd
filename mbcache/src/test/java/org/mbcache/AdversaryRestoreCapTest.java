package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Contract section 8 at the chain cap, on both layouts: a restore evicts nothing, skips the pairs
 * whose chain is at the cap, counts exactly what it created, and counts a pair already cached as a
 * refused duplicate. Also the builder's refusals (section 3) change nothing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AdversaryRestoreCapTest {

    private static final int KEY = 31337;

    @Test
    void listRestoreAtTheCap() throws Exception {
        check(() -> MbCache.builder().bucketBits(0).maxEntries(100).chainCap(4).executor(Runnable::run)
                .memoryPressureReclaim(false).build());
    }

    @Test
    void listAllocateFirstRestoreAtTheCap() throws Exception {
        check(() -> MbCache.builder().bucketBits(0).maxEntries(100).chainCap(4).createStrategy(CreateStrategy.ALLOCATE_FIRST)
                .executor(Runnable::run).memoryPressureReclaim(false).build());
    }

    @Test
    void compactRestoreAtTheCap() throws Exception {
        check(() -> CompactMbCache.builder().bucketBits(0).maxEntries(100).chainCap(4).executor(Runnable::run)
                .memoryPressureReclaim(false).build());
    }

    private static byte[] snapshot(long... values) throws Exception {
        try (MbCache source = MbCache.builder().bucketBits(0).maxEntries(1000).chainCap(1000)
                .memoryPressureReclaim(false).build()) {
            for (long v : values) {
                assertTrue(source.create(KEY, v, true));
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            assertEquals(values.length, source.writeSnapshot(out));
            return out.toByteArray();
        }
    }

    private static void check(Supplier<KernelPortCache> factory) throws Exception {
        byte[] bytes = snapshot(10, 11, 12, 13, 14, 1);
        try (KernelPortCache cache = factory.get()) {
            assertTrue(cache.create(KEY, 1, true));
            assertTrue(cache.create(KEY, 2, true));
            assertTrue(cache.create(KEY, 3, true));
            CacheEntry held = cache.get(KEY, 2);
            long created = cache.readSnapshot(new ByteArrayInputStream(bytes));
            assertEquals(1, created, "one pair fits under the cap of 4");
            for (long v : new long[] {1, 2, 3}) {
                CacheEntry e = cache.get(KEY, v);
                assertNotNull(e, "pair " + v + " cached before the restore was evicted");
                cache.release(e);
            }
            assertEquals(4, cache.size());
            CacheStats stats = cache.stats();
            assertEquals(1, stats.restores(), stats.toString());
            assertEquals(3, stats.creates(), stats.toString());
            assertEquals(0, stats.chainCapReclaims(), stats.toString());
            assertEquals(0, stats.entriesReclaimed(), stats.toString());
            assertEquals(1, stats.duplicatesRefused(), "the pair already cached: " + stats);
            // A create now reclaims for the cap but never the held pair.
            assertTrue(cache.create(KEY, 99, true));
            CacheEntry still = cache.get(KEY, 2);
            assertEquals(held, still);
            cache.release(still);
            cache.release(held);
            assertThrows(IllegalStateException.class, () -> cache.release(held));
        }
    }

    @Test
    void refusedBuilderArgumentsChangeNothing() {
        MbCache.Builder list = MbCache.builder().bucketBits(2).maxEntries(40).chainCap(7).memoryPressureReclaim(false);
        assertThrows(IllegalArgumentException.class, () -> list.bucketBits(31));
        assertThrows(IllegalArgumentException.class, () -> list.bucketBits(-1));
        assertThrows(IllegalArgumentException.class, () -> list.maxEntries(0));
        assertThrows(IllegalArgumentException.class, () -> list.chainCap(0));
        assertThrows(NullPointerException.class, () -> list.createStrategy(null));
        try (MbCache cache = list.build()) {
            assertEquals(2, cache.bucketBits());
            assertEquals(40, cache.maxEntries());
            assertEquals(7, cache.chainCap());
            assertEquals(CreateStrategy.REQUEST_LIST, cache.createStrategy());
        }
        CompactMbCache.Builder compact = CompactMbCache.builder().bucketBits(2).maxEntries(40).chainCap(7)
                .memoryPressureReclaim(false);
        assertThrows(IllegalArgumentException.class, () -> compact.createStrategy(CreateStrategy.ALLOCATE_FIRST));
        assertThrows(IllegalArgumentException.class, () -> compact.bucketBits(31));
        try (CompactMbCache cache = compact.build()) {
            assertEquals(2, cache.bucketBits());
            assertEquals(40, cache.maxEntries());
            assertEquals(7, cache.chainCap());
        }
        int before = MemoryPressureRegistry.INSTANCE.registrationCount();
        assertThrows(IllegalArgumentException.class, () -> CompactMbCache.builder().maxEntries(Long.MAX_VALUE).build());
        assertThrows(IllegalArgumentException.class, () -> CompactMbCache.create(30));
        assertThrows(IllegalArgumentException.class, () -> CompactMbCache.create(31));
        assertThrows(IllegalArgumentException.class, () -> MbCache.create(31));
        assertEquals(before, MemoryPressureRegistry.INSTANCE.registrationCount(), "a refused build stayed registered");
    }
}
