package org.mbcache.stress;

import java.util.concurrent.Executor;
import org.mbcache.CreateStrategy;
import org.mbcache.DedupCache;
import org.mbcache.MbCache;
import org.mbcache.caffeine.CaffeineDedupCache;

/**
 * The {@link DedupCache} implementations the stress tests run against, with the small configuration
 * every test uses.
 *
 * <p>JCStress builds a fresh state object, and so a fresh cache, for every single trial, so the cache
 * must be cheap to build: two buckets ({@code bucketBits = 1}) and room for far more entries than a
 * test ever creates, so that no background reclaim pass interferes with the race under test. A test
 * closes its cache in its {@code @Arbiter}, because {@link MbCache} registers every cache with a
 * process-wide memory-pressure registry until it is closed.
 *
 * <p>Every race runs on {@link #MBCACHE_REQUEST_LIST}; the races of {@code create} also run on
 * {@link #MBCACHE_ALLOCATE_FIRST}, and the most important ones (racing creators, reuse vs release,
 * reclaim vs user, release to zero vs lookup) on {@link #CAFFEINE}.
 */
public enum Backend {

    /** The kernel port with the 2019 in-progress request list (the default strategy). */
    MBCACHE_REQUEST_LIST {
        @Override
        public DedupCache open() {
            return mbCache(CreateStrategy.REQUEST_LIST, BUCKET_BITS, MAX_ENTRIES).build();
        }

        @Override
        public DedupCache open(int bucketBits, long maxEntries, Executor executor) {
            return mbCache(CreateStrategy.REQUEST_LIST, bucketBits, maxEntries).executor(executor).build();
        }
    },

    /** The kernel port with mainline's allocate-first create. */
    MBCACHE_ALLOCATE_FIRST {
        @Override
        public DedupCache open() {
            return mbCache(CreateStrategy.ALLOCATE_FIRST, BUCKET_BITS, MAX_ENTRIES).build();
        }

        @Override
        public DedupCache open(int bucketBits, long maxEntries, Executor executor) {
            return mbCache(CreateStrategy.ALLOCATE_FIRST, bucketBits, maxEntries).executor(executor).build();
        }
    },

    /**
     * The Caffeine-backed implementation. Its maintenance (eviction, unpin drains) runs on the calling
     * threads ({@code Runnable::run}), so a trial leaves no work behind on a shared pool that would
     * compete with the next trial's actors for the two CPUs.
     */
    CAFFEINE {
        @Override
        public DedupCache open() {
            return open(BUCKET_BITS, MAX_ENTRIES, Runnable::run);
        }

        /** {@inheritDoc} Caffeine has no buckets: {@code bucketBits} is ignored. */
        @Override
        public DedupCache open(int bucketBits, long maxEntries, Executor executor) {
            return CaffeineDedupCache.builder().maxEntries(maxEntries).executor(executor).build();
        }
    };

    /** Buckets per test cache: two, so that chains are short and construction is cheap. */
    static final int BUCKET_BITS = 1;

    /** Capacity of a test cache: far above what any test creates, so reclaim only runs when asked. */
    static final long MAX_ENTRIES = 1024;

    /**
     * Builds a new, empty cache of this backend.
     *
     * @return a cache the caller must {@linkplain DedupCache#close() close}
     */
    public abstract DedupCache open();

    /**
     * Builds a new, empty cache of this backend in a configuration of the caller's choosing: the soak
     * run uses a small bound, so that reclaim runs all the time, and an executor that injects faults.
     *
     * @param bucketBits log2 of the bucket count (backends without buckets ignore it)
     * @param maxEntries the size bound at which reclaim starts
     * @param executor where background reclaim (or the backend's maintenance) runs
     * @return a cache the caller must {@linkplain DedupCache#close() close}
     * @throws IllegalArgumentException if {@code bucketBits} or {@code maxEntries} is out of range
     * @throws NullPointerException if {@code executor} is null
     */
    public abstract DedupCache open(int bucketBits, long maxEntries, Executor executor);

    private static MbCache.Builder mbCache(CreateStrategy strategy, int bucketBits, long maxEntries) {
        return MbCache.builder().bucketBits(bucketBits).maxEntries(maxEntries).createStrategy(strategy);
    }
}
