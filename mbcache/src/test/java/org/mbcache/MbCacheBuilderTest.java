package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;

/** What only the kernel port's factories promise: defaults and argument checks. */
class MbCacheBuilderTest {

    @Test
    void defaultMaxEntriesIsSixteenPerBucket() {
        try (MbCache cache = MbCache.create(6)) {
            assertEquals(64L << 4, cache.maxEntries());
        }
    }

    @Test
    void builderDefaultsToExt4sTenBucketBits() {
        try (MbCache cache = MbCache.builder().build()) {
            assertEquals(10, cache.bucketBits());
            assertEquals(16_384L, cache.maxEntries());
        }
    }

    @Test
    void defaultCreateStrategyIsRequestList() {
        try (MbCache cache = MbCache.create(0)) {
            assertEquals(CreateStrategy.REQUEST_LIST, cache.createStrategy());
        }
    }

    @Test
    void bucketBitsZeroMakesOneBucket() {
        try (MbCache cache = MbCache.create(0)) {
            assertEquals(16L, cache.maxEntries());
        }
    }

    @Test
    void negativeBucketBitsIsIllegal() {
        assertThrows(IllegalArgumentException.class, () -> MbCache.create(-1));
    }

    @Test
    void bucketBitsAboveThirtyIsIllegal() {
        assertThrows(IllegalArgumentException.class, () -> MbCache.builder().bucketBits(31));
    }

    @Test
    void zeroMaxEntriesIsIllegal() {
        assertThrows(IllegalArgumentException.class, () -> MbCache.builder().maxEntries(0));
    }

    @Test
    void negativeMaxEntriesIsIllegal() {
        assertThrows(IllegalArgumentException.class, () -> MbCache.builder().maxEntries(-5));
    }

    @Test
    void nullExecutorIsANullPointerExceptionNamingIt() {
        NullPointerException thrown =
                assertThrows(NullPointerException.class, () -> MbCache.builder().executor(null));
        assertEquals("executor", thrown.getMessage());
    }

    @Test
    void nullCreateStrategyIsANullPointerExceptionNamingIt() {
        NullPointerException thrown =
                assertThrows(NullPointerException.class, () -> MbCache.builder().createStrategy(null));
        assertEquals("createStrategy", thrown.getMessage());
    }

    @Test
    void hash32IsTheKernelsGoldenRatioMultiplyKeepingTheTopBits() {
        // (1 * 0x61C88647) >>> 22 and (0xFFFFFFFF * 0x61C88647 mod 2^32) >>> 22, worked by hand.
        assertEquals(0x61C88647 >>> 22, KeyedIndex.hash32(1, 10));
        assertEquals((int) ((0xFFFFFFFFL * 0x61C88647L) & 0xFFFFFFFFL) >>> 22, KeyedIndex.hash32(-1, 10));
        assertEquals(0, KeyedIndex.hash32(123_456, 0));
        assertEquals(0x61C88647 >>> 2, KeyedIndex.hash32(1, 30));
    }

    /**
     * Tables whose up-front arrays alone exceed the heap are refused with a message, not left to an
     * {@code OutOfMemoryError} (both layouts; the test heap is far below the 16 GiB and 80 GiB asked).
     */
    @Test
    void aTableLargerThanTheHeapIsAnIllegalArgumentExceptionThatSaysSo() {
        assumeTrue(Runtime.getRuntime().maxMemory() < 16L << 30, "a heap this test cannot overflow");
        IllegalArgumentException kernel = assertThrows(IllegalArgumentException.class,
                () -> MbCache.builder().bucketBits(30).build());
        assertTrue(kernel.getMessage().contains("maximum heap"), kernel.getMessage());
        IllegalArgumentException compact = assertThrows(IllegalArgumentException.class,
                () -> CompactMbCache.builder().maxEntries(Long.MAX_VALUE).build());
        assertTrue(compact.getMessage().contains("67108864 buckets"), compact.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CompactMbCache.create(30));
    }
}
