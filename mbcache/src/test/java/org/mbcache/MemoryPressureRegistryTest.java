package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The memory-pressure shrinker, driven by calling its handler directly. */
class MemoryPressureRegistryTest {

    @Test
    void aBuiltCacheIsRegistered() {
        try (MbCache cache = MbCache.create(2)) {
            assertTrue(MemoryPressureRegistry.INSTANCE.isRegistered(cache.shrinker()));
        }
    }

    @Test
    void aClosedCacheLeavesTheRegistry() {
        MbCache cache = MbCache.create(2);
        cache.close();
        assertFalse(MemoryPressureRegistry.INSTANCE.isRegistered(cache.shrinker()));
    }

    @Test
    void theFirstCacheSetsTheThresholdAtEightyPercentOfTheOldGeneration() throws Exception {
        List<long[]> pools = thresholdsInAFreshJvm();
        assertTrue(pools.stream().anyMatch(pool -> pool[0] == pool[1] / 100 * MemoryPressureRegistry.THRESHOLD_PERCENT),
                "some pool at 80%");
        assertTrue(pools.stream().noneMatch(pool -> pool[0] == pool[1]), "no pool at its maximum");
    }

    @Test
    void aThresholdTheApplicationSetIsKept() throws Exception {
        List<long[]> pools = thresholdsInAFreshJvm(PressureThresholdDriver.PRESET);
        assertFalse(pools.isEmpty());
        for (long[] pool : pools) {
            assertEquals(pool[1], pool[0], "threshold at the pool's maximum, as the application set it");
        }
    }

    @Test
    void aProcessWhoseOnlyCacheOptedOutOfPressureReclaimSetsNoThreshold() throws Exception {
        List<long[]> pools = thresholdsInAFreshJvm(PressureThresholdDriver.OPTED_OUT);
        assertFalse(pools.isEmpty());
        for (long[] pool : pools) {
            assertEquals(0, pool[0], "no threshold (0) on a pool of " + pool[1] + " bytes");
        }
    }

    /**
     * Runs {@link PressureThresholdDriver} with {@code driverArguments} in a {@link FreshJvm} (the
     * registry installs its thresholds once per process) and answers each heap pool's threshold and
     * maximum after a cache was built.
     */
    private static List<long[]> thresholdsInAFreshJvm(String... driverArguments) throws Exception {
        String output = FreshJvm.run(List.of("-Xmx64m"), PressureThresholdDriver.class, driverArguments);
        List<long[]> pools = new ArrayList<>();
        for (String line : output.split("\\R")) {
            if (line.startsWith(PressureThresholdDriver.LINE)) {
                String[] fields = line.split(" ");
                pools.add(new long[] {Long.parseLong(fields[1]), Long.parseLong(fields[2])});
            }
        }
        return pools;
    }

    /**
     * A cache of 16 buckets with a fixed seed: 100 sequential keys are counted on to stay in it, and
     * under this seed no bucket holds more than the default chain cap (80) of them, past which the cap
     * would reclaim some.
     */
    private static MbCache sixteenBucketsSeeded() {
        return MbCache.builder().bucketBits(4).hashSeed(42).build();
    }

    @Test
    void pressureShrinksEveryRegisteredCacheByHalf() {
        try (MbCache first = sixteenBucketsSeeded(); MbCache second = sixteenBucketsSeeded()) {
            for (int i = 0; i < 100; i++) {
                first.create(i, i, true);
                second.create(i, i, true);
            }
            MemoryPressureRegistry.INSTANCE.onMemoryPressure();
            assertEquals(50, first.size());
            assertEquals(50, second.size());
            assertEquals(1, first.stats().requestedReclaimPasses());
        }
    }

    @Test
    void aCacheBuiltWithoutMemoryPressureReclaimIsNotRegistered() {
        try (MbCache cache = MbCache.builder().memoryPressureReclaim(false).build()) {
            assertFalse(MemoryPressureRegistry.INSTANCE.isRegistered(cache.shrinker()));
        }
    }

    @Test
    void pressurePassesOverACacheBuiltWithoutMemoryPressureReclaim() {
        try (MbCache optedOut = MbCache.builder().bucketBits(4).hashSeed(42).memoryPressureReclaim(false).build();
             MbCache registered = sixteenBucketsSeeded()) {
            for (int i = 0; i < 100; i++) {
                optedOut.create(i, i, true);
                registered.create(i, i, true);
            }
            MemoryPressureRegistry.INSTANCE.onMemoryPressure();
            assertEquals(100, optedOut.size());
            assertEquals(0, optedOut.stats().requestedReclaimPasses());
            assertEquals(50, registered.size(), "the registry did fire");
        }
    }

    @Test
    void pressureFreesTheOldestEntriesFirst() {
        try (MbCache cache = MbCache.create(4)) {
            for (int i = 0; i < 10; i++) {
                cache.create(i, i, true);
            }
            MemoryPressureRegistry.INSTANCE.onMemoryPressure();
            assertNull(cache.get(4, 4));
            CacheEntry survivor = cache.get(5, 5);
            assertEquals(5, survivor.value());
            cache.release(survivor);
        }
    }

    @Test
    void pressureNeverFreesAHeldEntry() {
        try (MbCache cache = MbCache.create(4)) {
            cache.create(1, 1, true);
            cache.create(2, 2, true);
            CacheEntry held = cache.get(1, 1);
            MemoryPressureRegistry.INSTANCE.onMemoryPressure();
            MemoryPressureRegistry.INSTANCE.onMemoryPressure();
            assertEquals(1, cache.size());
            cache.release(held);
        }
    }

    @Test
    void theRegistryDoesNotKeepAnUnclosedCacheReachable() throws InterruptedException {
        WeakReference<MbCache> dropped = new WeakReference<>(MbCache.create(4));
        for (int attempt = 0; attempt < 50 && dropped.get() != null; attempt++) {
            System.gc();
            Thread.sleep(10);
        }
        assertNull(dropped.get(), "the registry kept a dropped cache reachable");
    }

    @Test
    void theRegistryDoesNotKeepAClosedCacheReachable() throws InterruptedException {
        MbCache cache = MbCache.create(4);
        cache.create(1, 1, true);
        cache.close();
        WeakReference<MbCache> closed = new WeakReference<>(cache);
        cache = null;
        for (int attempt = 0; attempt < 50 && closed.get() != null; attempt++) {
            System.gc();
            Thread.sleep(10);
        }
        assertNull(closed.get(), "a closed cache stayed reachable");
    }
}
