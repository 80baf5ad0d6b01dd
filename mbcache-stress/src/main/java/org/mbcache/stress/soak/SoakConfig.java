package org.mbcache.stress.soak;

/**
 * The shape of a soak run.
 *
 * @param threads worker threads per phase, at least 1
 * @param seed the seed of every random choice the workers make
 * @param keys distinct keys: few, so that they collide constantly
 * @param valuesPerKey values under each key (hash collisions, as ext4 makes a new block of the same
 *     content whenever one reaches its sharer limit)
 * @param bucketBits log2 of the bucket count of the kernel port: few buckets, long chains
 * @param maxEntries the size bound: far below {@code keys * valuesPerKey}, so reclaim runs all the time
 */
public record SoakConfig(int threads, long seed, int keys, int valuesPerKey, int bucketBits, long maxEntries) {

    /**
     * Checks the shape.
     *
     * @param threads worker threads per phase, at least 1
     * @param seed the seed of every random choice the workers make
     * @param keys distinct keys, at least 1
     * @param valuesPerKey values under each key, at least 1
     * @param bucketBits log2 of the kernel port's bucket count, in {@code [0, 30]}
     * @param maxEntries the size bound, at least 1
     * @throws IllegalArgumentException if a count is not positive or the bucket bits are out of range
     */
    public SoakConfig {
        if (threads < 1 || keys < 1 || valuesPerKey < 1 || maxEntries < 1) {
            throw new IllegalArgumentException("threads, keys, valuesPerKey and maxEntries must be positive: " + this);
        }
        if (bucketBits < 0 || bucketBits > 30) {
            throw new IllegalArgumentException("bucketBits must be in [0, 30], was " + bucketBits);
        }
    }

    /**
     * The default shape with the given threads and seed: 8 keys of 16 values (128 pairs) in 4 buckets,
     * bound 32 (so background reclaim from 32 entries, synchronous reclaim from 64).
     *
     * @param threads worker threads, at least 1
     * @param seed the random seed
     * @return the shape
     */
    public static SoakConfig of(int threads, long seed) {
        return new SoakConfig(threads, seed, 8, 16, 2, 32);
    }

    /**
     * The default thread count: 2, or one per processor where there are more (at most 16).
     *
     * @return the thread count
     */
    public static int defaultThreads() {
        return Math.max(2, Math.min(16, Runtime.getRuntime().availableProcessors()));
    }
}
