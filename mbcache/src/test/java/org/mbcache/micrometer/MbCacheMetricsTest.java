package org.mbcache.micrometer;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;
import org.mbcache.testing.Backend;

/**
 * {@link MbCacheMetrics} on every {@link Backend}: each meter moves with the operations it counts,
 * carries the cache's tags, and a scrape of a closed cache does not throw. The binders here take a
 * fresh snapshot for every read, so that a read right after an operation sees it; one test checks the
 * reuse of a snapshot within its window.
 */
@ParameterizedClass(name = "{0}")
@EnumSource(Backend.class)
class MbCacheMetricsTest {

    private static final int BUCKET_BITS = 4;
    private static final long ROOMY = 4096;
    private static final int KEY = 0x0DD_BA11;
    private static final Executor STALLED = task -> { };

    @Parameter
    Backend backend;

    private final MeterRegistry registry = new SimpleMeterRegistry();
    private DedupCache cache;

    @AfterEach
    void closeCache() {
        if (cache != null) {
            cache.close();
        }
    }

    /** A cache of the backend under test, its meters bound with a fresh snapshot for every read. */
    private DedupCache monitored(long maxEntries, Executor executor) {
        cache = backend.open(BUCKET_BITS, maxEntries, executor);
        new MbCacheMetrics(cache, "xattr", Tags.of("region", "eu"), 0).bindTo(registry);
        return cache;
    }

    private DedupCache monitored() {
        return monitored(ROOMY, ForkJoinPool.commonPool());
    }

    private double count(String name, String... tags) {
        return registry.get(name).tags(tags).functionCounter().count();
    }

    private double size() {
        return registry.get("cache.size").gauge().value();
    }

    /** Reads every meter, as a scrape does. */
    private void scrape() {
        for (Meter meter : registry.getMeters()) {
            meter.measure().forEach(measurement -> measurement.getValue());
        }
    }

    @Test
    void theSizeGaugeFollowsTheEntryCount() {
        monitored();
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, true);
        assertEquals(2, size());
        cache.deleteOrGet(KEY, 1);
        assertEquals(1, size());
    }

    @Test
    void getsCountLookupHitsAndMissesApart() {
        monitored();
        cache.create(KEY, 1, true);
        cache.findFirst(KEY).close();
        cache.get(KEY, 1).close();
        assertNull(cache.get(KEY, 2));
        assertEquals(2, count("cache.gets", "result", "hit"));
        assertEquals(1, count("cache.gets", "result", "miss"));
    }

    @Test
    void putsCountTheCreatesThatInserted() {
        monitored();
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, true);
        cache.create(KEY, 1, true);
        assertEquals(2, count("cache.puts"));
    }

    @Test
    void duplicatesCountTheRefusedCreates() {
        monitored();
        cache.create(KEY, 1, true);
        cache.create(KEY, 1, true);
        assertEquals(1, count("cache.duplicates"));
    }

    @Test
    void deletesCountTheEntriesDeleteOrGetRemoved() {
        monitored();
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, true);
        CacheEntry held = cache.get(KEY, 2);
        cache.deleteOrGet(KEY, 1);
        cache.deleteOrGet(KEY, 2).close(); // held: handed back, not removed
        held.close();
        assertEquals(1, count("cache.deletes"));
    }

    @Test
    void evictionsAndRequestedPassesCountWhatShrinkFreed() {
        monitored();
        for (int value = 0; value < 5; value++) {
            cache.create(KEY + value, value, true);
        }
        cache.shrink(Long.MAX_VALUE);
        assertEquals(5, count("cache.evictions"));
        assertEquals(1, count("cache.reclaim.passes", "kind", "requested"));
    }

    @Test
    void backgroundPassesCountThePassesOnTheExecutor() {
        monitored(32, Runnable::run);
        for (int key = 0; key < 1000; key++) {
            cache.create(key, key, true);
        }
        assertTrue(count("cache.reclaim.passes", "kind", "background") > 0);
        assertTrue(count("cache.evictions") > 0);
    }

    @Test
    void synchronousPassesCountThePassesOfCreatingThreads() {
        monitored(32, STALLED);
        for (int key = 0; key < 2000; key++) {
            cache.create(key, key, true);
        }
        assertTrue(count("cache.reclaim.passes", "kind", "synchronous") > 0);
    }

    @Test
    void chainCapReclaimsAreCountedApartFromEvictions() {
        monitored();
        for (int value = 0; value < 2000; value++) {
            cache.create(KEY, value, true);
        }
        assertTrue(count("cache.chain.cap.reclaims") > 0);
        assertEquals(0, count("cache.evictions"));
    }

    @Test
    void restoredPairsAreCountedAsRestoresNotAsPuts() throws java.io.IOException {
        java.io.ByteArrayOutputStream snapshot = new java.io.ByteArrayOutputStream();
        try (DedupCache source = backend.open(BUCKET_BITS, ROOMY, ForkJoinPool.commonPool())) {
            source.create(KEY, 1, true);
            source.create(KEY, 2, true);
            source.writeSnapshot(snapshot);
        }
        monitored();
        cache.readSnapshot(new java.io.ByteArrayInputStream(snapshot.toByteArray()));
        assertEquals(2, count("cache.restores"));
        assertEquals(0, count("cache.puts"));
    }

    @Test
    void everyMeterIsTaggedWithTheCacheNameAndTheCallersTags() {
        monitored();
        List<String> names = registry.getMeters().stream().map(meter -> meter.getId().getName()).distinct().sorted()
                .toList();
        assertEquals(List.of("cache.chain.cap.reclaims", "cache.deletes", "cache.duplicates", "cache.evictions",
                "cache.gets", "cache.puts", "cache.reclaim.passes", "cache.restores", "cache.size"), names);
        assertAll(registry.getMeters().stream().map(meter -> () -> assertTrue(
                meter.getId().getTags().containsAll(List.of(Tag.of("cache", "xattr"), Tag.of("region", "eu"))),
                meter.getId().toString())));
    }

    @Test
    void aScrapeAfterCloseDoesNotThrowAndKeepsTheCountsLastRead() {
        monitored();
        cache.create(KEY, 1, true);
        cache.findFirst(KEY).close();
        scrape();
        cache.close();
        scrape();
        assertEquals(1, count("cache.puts"));
        assertEquals(1, count("cache.gets", "result", "hit"));
    }

    @Test
    void theSizeGaugeReadsZeroAfterClose() {
        monitored();
        cache.create(KEY, 1, true);
        cache.close();
        assertEquals(0, size());
    }

    @Test
    void aCacheClosedBeforeItIsBoundPublishesZeros() {
        cache = backend.open(BUCKET_BITS, ROOMY, ForkJoinPool.commonPool());
        cache.create(KEY, 1, true);
        cache.close();
        MbCacheMetrics.monitor(registry, cache, "xattr");
        scrape();
        assertEquals(0, size());
        assertEquals(0, count("cache.puts"));
    }

    @Test
    void countersReadWithinTheReuseWindowShareOneSnapshot() {
        cache = backend.open(BUCKET_BITS, ROOMY, ForkJoinPool.commonPool());
        AtomicInteger statsCalls = new AtomicInteger();
        DedupCache counting = countingStatsCalls(cache, statsCalls);
        new MbCacheMetrics(counting, "xattr", Tags.empty(), TimeUnit.HOURS.toNanos(1)).bindTo(registry);
        scrape();
        scrape();
        assertEquals(1, statsCalls.get());
    }

    /** {@code cache}, seen through a proxy that counts the calls of {@code stats()}. */
    private static DedupCache countingStatsCalls(DedupCache cache, AtomicInteger statsCalls) {
        return (DedupCache) Proxy.newProxyInstance(DedupCache.class.getClassLoader(), new Class<?>[] {DedupCache.class},
                (proxy, method, arguments) -> {
                    if (method.getName().equals("stats")) {
                        statsCalls.incrementAndGet();
                    }
                    try {
                        return method.invoke(cache, arguments);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
