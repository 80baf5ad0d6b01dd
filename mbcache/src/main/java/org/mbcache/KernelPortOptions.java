package org.mbcache;

import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import org.mbcache.internal.Saturating;

/**
 * The options of both kernel-port builders ({@link MbCache.Builder}, {@link CompactMbCache.Builder}),
 * stored and validated in one place. Each public builder holds one, forwards its setters here and
 * returns itself, so that both keep their own types for chaining and their own Javadoc; a layout's
 * constructor reads the options, resolving the defaults that differ between the layouts
 * ({@code maxEntries} per bucket; the create strategy, which only {@code MbCache} offers a choice
 * of) through the methods below. Not thread-safe, as the builders.
 *
 * <p>Unset options are zero or null and mean "the default": {@code maxEntries} and {@code chainCap}
 * 0, the executor null (the shared daemon thread), the hash seed null (a random one).
 */
final class KernelPortOptions {

    /** Largest {@code bucketBits}: a table of 2^30 buckets is the most a Java array index allows. */
    static final int MAX_BUCKET_BITS = 30;
    /** Default {@code bucketBits}: ext4's. */
    static final int DEFAULT_BUCKET_BITS = 10;
    /** The smallest default chain cap, whatever the load. */
    static final int MIN_DEFAULT_CHAIN_CAP = 32;

    /**
     * The default chain cap for a table: twice the mean chain length at twice {@code maxEntries},
     * plus 16, and at least {@value #MIN_DEFAULT_CHAIN_CAP}. With the keyed index, chain lengths at
     * that load are Poisson-distributed around the mean {@code m}, and a chain reaches
     * {@code max(32, 2m + 16)} with probability below 1e-10 per bucket for every {@code m} (worst
     * near m = 8 to 16; 3e-13 at m = 32, the default load): a table of a million buckets at twice
     * its maxEntries sees one chain reach the cap with odds below 1 in 10,000. The work of any one
     * operation stays within a small multiple of an honest chain's. That is for a typical seed: a
     * 2-independent index promises pairs, not the longest chain, and roughly one seed in
     * {@code 2^32 / buckets} draws a multiplier near a fraction with a small denominator, which
     * crowds even random keys into part of the table. Such a cache stays correct and bounded; its
     * crowded chains lose old entries to the cap, which {@code chainCapReclaims} shows.
     */
    static int defaultChainCap(long maxEntries, int bucketBits) {
        return defaultChainCapOfBuckets(maxEntries, 1L << bucketBits);
    }

    /** {@link #defaultChainCap}'s rule for any bucket count (the compact layout's need not be a power of two). */
    static int defaultChainCapOfBuckets(long maxEntries, long buckets) {
        long twiceMax = Saturating.twice(maxEntries);
        // Rounded up without adding first: twiceMax saturates at Long.MAX_VALUE ("no bound").
        long meanAtTwiceMax = twiceMax / buckets + (twiceMax % buckets == 0 ? 0 : 1);
        long cap = 2 * Math.min(meanAtTwiceMax, Integer.MAX_VALUE / 4) + 16;
        return (int) Math.max(MIN_DEFAULT_CHAIN_CAP, cap);
    }

    /** The default background-reclaim executor of both layouts, created on first use (initialization-on-demand holder). */
    private static final class ReclaimThread {
        static final Executor EXECUTOR = Executors.newSingleThreadExecutor(task -> {
            Thread thread = new Thread(task, "mbcache-reclaim");
            thread.setDaemon(true);
            return thread;
        });
    }

    private int bucketBits = DEFAULT_BUCKET_BITS;
    private boolean bucketBitsSet;
    private long maxEntries;
    private Executor executor;
    private CreateStrategy createStrategy = CreateStrategy.REQUEST_LIST;
    private Long hashSeed;
    private int chainCap;
    private boolean memoryPressureReclaim = true;

    /** Sets log2 of the bucket count; throws {@link IllegalArgumentException} if outside {@code [0, 30]}. */
    void bucketBits(int bucketBits) {
        if (bucketBits < 0 || bucketBits > MAX_BUCKET_BITS) {
            throw new IllegalArgumentException(
                    "bucketBits must be in [0, " + MAX_BUCKET_BITS + "], was " + bucketBits);
        }
        this.bucketBits = bucketBits;
        this.bucketBitsSet = true;
    }

    /** Sets the bound; throws {@link IllegalArgumentException} if not positive. */
    void maxEntries(long maxEntries) {
        if (maxEntries <= 0) {
            throw new IllegalArgumentException("maxEntries must be positive, was " + maxEntries);
        }
        this.maxEntries = maxEntries;
    }

    /** Sets where background passes run; throws {@link NullPointerException} if null. */
    void executor(Executor executor) {
        this.executor = Objects.requireNonNull(executor, "executor");
    }

    /** Sets how creates refuse duplicates; throws {@link NullPointerException} if null. */
    void createStrategy(CreateStrategy createStrategy) {
        this.createStrategy = Objects.requireNonNull(createStrategy, "createStrategy");
    }

    /** Fixes the keyed index's seed. */
    void hashSeed(long hashSeed) {
        this.hashSeed = hashSeed;
    }

    /** Sets the chain cap; throws {@link IllegalArgumentException} if below 1. */
    void chainCap(int chainCap) {
        if (chainCap < 1) {
            throw new IllegalArgumentException("chainCap must be at least 1, was " + chainCap);
        }
        this.chainCap = chainCap;
    }

    /** Sets whether the cache takes part in memory-pressure reclaim. */
    void memoryPressureReclaim(boolean enabled) {
        this.memoryPressureReclaim = enabled;
    }

    /** {@return log2 of the bucket count} */
    int bucketBits() {
        return bucketBits;
    }

    /** {@return whether {@code bucketBits} was set (the compact layout sizes its table from {@code maxEntries} otherwise)} */
    boolean bucketBitsSet() {
        return bucketBitsSet;
    }

    /** {@return {@code maxEntries} as set, or {@code entriesPerBucket} a bucket (0: 0 if unset)} */
    long maxEntries(int entriesPerBucket) {
        return maxEntries > 0 ? maxEntries : (1L << bucketBits) * entriesPerBucket;
    }

    /** {@return the chain cap as set, or {@link #defaultChainCap} for this table at {@code maxEntries}} */
    int chainCap(long maxEntries) {
        return chainCap > 0 ? chainCap : defaultChainCap(maxEntries, bucketBits);
    }

    /** {@return the chain cap as set, or the same rule for a table of {@code buckets} buckets, any count} */
    int chainCap(long maxEntries, long buckets) {
        return chainCap > 0 ? chainCap : defaultChainCapOfBuckets(maxEntries, buckets);
    }

    /** {@return the executor as set, or the shared daemon thread {@code mbcache-reclaim}} */
    Executor executor() {
        return executor != null ? executor : ReclaimThread.EXECUTOR;
    }

    /** {@return the create strategy, {@link CreateStrategy#REQUEST_LIST} unless set} */
    CreateStrategy createStrategy() {
        return createStrategy;
    }

    /** {@return the hash seed as set, or null for a random one} */
    Long hashSeed() {
        return hashSeed;
    }

    /** {@return whether the cache takes part in memory-pressure reclaim} */
    boolean memoryPressureReclaim() {
        return memoryPressureReclaim;
    }

    /**
     * Refuses a table whose up-front arrays alone exceed this JVM's maximum heap, with an exception
     * that says so, where allocating them would end in an {@link OutOfMemoryError} (a builder given
     * {@code maxEntries(Long.MAX_VALUE)} for "no bound" sizes a compact table at 2^30 buckets).
     * {@code bytesPerBucket} is a lower bound of what the layout allocates up front a bucket, so a
     * table that might fit is never refused.
     *
     * @param buckets the table's bucket count, at most 2^30
     * @param bytesPerBucket a lower bound of the bytes a bucket takes up front, at most 2^32
     * @param layout the layout's name, for the message
     * @throws IllegalArgumentException if {@code buckets * bytesPerBucket} exceeds
     *     {@link Runtime#maxMemory()}
     */
    static void requireHeapFor(long buckets, long bytesPerBucket, String layout) {
        long bytes = buckets * bytesPerBucket; // at most 2^30 buckets: no overflow
        long heap = Runtime.getRuntime().maxMemory();
        if (bytes > heap) {
            throw new IllegalArgumentException(layout + " of " + buckets + " buckets allocates at least " + bytes
                    + " bytes up front, more than this JVM's maximum heap of " + heap
                    + " bytes: give fewer buckets (bucketBits) or a smaller maxEntries");
        }
    }
}
