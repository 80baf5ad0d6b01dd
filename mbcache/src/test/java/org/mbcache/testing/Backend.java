package org.mbcache.testing;

import java.util.Arrays;
import java.util.concurrent.Executor;
import org.mbcache.CompactMbCache;
import org.mbcache.CreateStrategy;
import org.mbcache.DedupCache;
import org.mbcache.MbCache;
import org.mbcache.caffeine.CaffeineDedupCache;

/**
 * Every {@link DedupCache} backend: the one list that the contract tests, the stress module (JCStress,
 * Lincheck, the soak run) and the benchmarks run. A new backend is added here, and everything runs it.
 * Shipped in the library's test jar ({@code mbcache:test-jar}), which holds this package alone.
 */
public enum Backend {

    /** The kernel port with the 2019 in-progress request list (the default strategy). */
    MBCACHE_REQUEST_LIST("mbcache") {
        @Override
        public DedupCache open(int bucketBits, long maxEntries, Executor executor, Long hashSeed) {
            return mbCache(CreateStrategy.REQUEST_LIST, bucketBits, maxEntries, executor, hashSeed);
        }
    },

    /** The kernel port with mainline's allocate-first create. */
    MBCACHE_ALLOCATE_FIRST("mbcache-allocfirst") {
        @Override
        public DedupCache open(int bucketBits, long maxEntries, Executor executor, Long hashSeed) {
            return mbCache(CreateStrategy.ALLOCATE_FIRST, bucketBits, maxEntries, executor, hashSeed);
        }
    },

    /** The kernel port in the compact layout: slots in primitive pages, a CLOCK hand for reclaim. */
    COMPACT("compact") {
        @Override
        public DedupCache open(int bucketBits, long maxEntries, Executor executor, Long hashSeed) {
            CompactMbCache.Builder builder = CompactMbCache.builder().bucketBits(bucketBits).maxEntries(maxEntries)
                    .executor(executor);
            if (hashSeed != null) {
                builder.hashSeed(hashSeed);
            }
            return builder.build();
        }
    },

    /** The Caffeine-backed implementation, for comparison. It has no buckets and no hash seed. */
    CAFFEINE("caffeine") {
        @Override
        public DedupCache open(int bucketBits, long maxEntries, Executor executor, Long hashSeed) {
            return CaffeineDedupCache.builder().maxEntries(maxEntries).executor(executor).build();
        }
    };

    /**
     * ListTable of a {@linkplain #open() small test cache}: two, so that chains are short and
     * construction is cheap (JCStress builds a cache for every trial).
     */
    public static final int BUCKET_BITS = 1;

    /** Capacity of a small test cache: far above what a race creates, so reclaim runs only when asked. */
    public static final long MAX_ENTRIES = 1024;

    private final String label;

    Backend(String label) {
        this.label = label;
    }

    /**
     * The backend's short name: benchmark parameter values and row labels.
     *
     * @return the label, for example {@code "mbcache"}
     */
    public String label() {
        return label;
    }

    /**
     * The backend with this label.
     *
     * @param label as {@link #label()} gives it
     * @return the backend
     * @throws IllegalArgumentException if no backend has that label
     */
    public static Backend byLabel(String label) {
        for (Backend backend : values()) {
            if (backend.label.equals(label)) {
                return backend;
            }
        }
        throw new IllegalArgumentException("unknown backend: " + label + " (expected one of "
                + Arrays.stream(values()).map(Backend::label).toList() + ")");
    }

    /**
     * A small test cache: {@link #BUCKET_BITS} bits, room for {@link #MAX_ENTRIES}, background work
     * on the calling thread ({@code Runnable::run}), so a trial leaves nothing behind on a shared pool.
     *
     * @return a new, empty cache the caller must {@linkplain DedupCache#close() close}
     */
    public DedupCache open() {
        return open(BUCKET_BITS, MAX_ENTRIES, Runnable::run);
    }

    /**
     * A cache in the caller's configuration, with a random hash seed (as in production).
     *
     * @param bucketBits log2 of the bucket count (backends without buckets ignore it)
     * @param maxEntries the size bound at which reclaim starts
     * @param executor where background reclaim (or the backend's maintenance) runs
     * @return a new, empty cache the caller must {@linkplain DedupCache#close() close}
     */
    public DedupCache open(int bucketBits, long maxEntries, Executor executor) {
        return open(bucketBits, maxEntries, executor, null);
    }

    /**
     * A cache in the caller's configuration.
     *
     * @param bucketBits log2 of the bucket count (backends without buckets ignore it)
     * @param maxEntries the size bound at which reclaim starts
     * @param executor where background reclaim (or the backend's maintenance) runs
     * @param hashSeed the keyed index's seed, for reproducible runs; {@code null} for a random one
     * @return a new, empty cache the caller must {@linkplain DedupCache#close() close}
     * @throws IllegalArgumentException if {@code bucketBits} or {@code maxEntries} is out of range
     * @throws NullPointerException if {@code executor} is null
     */
    public abstract DedupCache open(int bucketBits, long maxEntries, Executor executor, Long hashSeed);

    private static DedupCache mbCache(CreateStrategy strategy, int bucketBits, long maxEntries, Executor executor,
                                      Long hashSeed) {
        MbCache.Builder builder = MbCache.builder().bucketBits(bucketBits).maxEntries(maxEntries)
                .createStrategy(strategy).executor(executor);
        if (hashSeed != null) {
            builder.hashSeed(hashSeed);
        }
        return builder.build();
    }
}
