package org.mbcache.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.Parameter;
import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;
import org.mbcache.testing.Backend;
import org.mbcache.testing.MemoryPressureSignal;

/**
 * What every {@link DedupCache} contract test class shares: a cache of the backend under test, 16
 * buckets where the backend has buckets and background work on the common pool, opened before each
 * test and closed after it with any other cache the test opened, and the helpers the tests use.
 * Each subclass is a {@code @ParameterizedClass} over every {@link Backend}.
 *
 * <p>Races run for a bounded number of rounds with bounded waits, so a broken backend fails an
 * assertion rather than hanging the build; every test class also has a {@link org.junit.jupiter.api.Timeout}.
 */
abstract class DedupCacheFixture {

    /*
     * These tests count pairs exactly. A heap-pressure pass (every open kernel-port cache answers the
     * JVM's collection-usage threshold, which a busy test JVM may cross) could free any unheld pair
     * in the middle of one; the passes have tests of their own (MemoryPressureRegistryTest).
     */
    static {
        MemoryPressureSignal.silence();
    }

    /** log2 of the buckets of a contract-test cache: 16, so that keys collide in buckets often. */
    private static final int BUCKET_BITS = 4;

    /** A bound no functional test comes near, so no reclaim interferes with what it checks. */
    protected static final long ROOMY = 4096;

    /** How long a test waits for something that should happen at once before it fails. */
    static final long PATIENCE_SECONDS = 5;

    /** The key most tests use. */
    static final int KEY = 0x5EED_CAFE;

    /** The backend under test. */
    @Parameter
    Backend backend;

    protected DedupCache cache;
    private final List<DedupCache> others = new ArrayList<>();

    /**
     * A new, empty cache of the backend under test.
     *
     * @param maxEntries the size bound
     * @throws IllegalArgumentException if {@code maxEntries <= 0}
     */
    DedupCache newCache(long maxEntries) {
        return backend.open(BUCKET_BITS, maxEntries, ForkJoinPool.commonPool());
    }

    @BeforeEach
    void openCache() {
        cache = newCache(ROOMY);
    }

    @AfterEach
    void closeCaches() {
        cache.close();
        others.forEach(DedupCache::close);
    }

    /** Another cache of the backend under test, as roomy as {@link #cache}, closed after the test. */
    DedupCache anotherCache() {
        return anotherCacheOf(ROOMY);
    }

    /** Another cache of the backend under test, bounded at {@code maxEntries}, closed after the test. */
    DedupCache anotherCacheOf(long maxEntries) {
        DedupCache other = newCache(maxEntries);
        others.add(other);
        return other;
    }

    /** A thread that runs {@code body}; its failure is rethrown by {@link #join}. */
    static Future<Void> inThread(Executable body) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                body.execute();
                done.complete(null);
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        }, "contract-helper");
        thread.setDaemon(true);
        thread.start();
        return done;
    }

    static void join(Future<Void> future) throws Exception {
        try {
            future.get(PATIENCE_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Error) {
                throw (Error) e.getCause();
            }
            throw (Exception) e.getCause();
        }
    }

    /** Values of the key, walked with findFirst/findNext, releasing everything. */
    List<Long> walk(int key) {
        List<Long> values = new ArrayList<>();
        CacheEntry entry = cache.findFirst(key);
        while (entry != null) {
            assertEquals(key, entry.key(), "walk of key " + key + " returned another key");
            values.add(entry.value());
            assertTrue(values.size() <= 10_000, "walk does not end");
            entry = cache.findNext(entry);
        }
        return values;
    }

    /** Whether the pair is cached, leaving nothing held. */
    boolean cached(int key, long value) {
        return Pairs.isCached(cache, key, value);
    }

}
