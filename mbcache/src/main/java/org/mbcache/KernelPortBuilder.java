package org.mbcache;

import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * The options both kernel-port builders share, {@link MbCache.Builder} and
 * {@link CompactMbCache.Builder}: the reclaim bound, the executor of background reclaim, the keyed
 * index's seed, the chain cap, memory-pressure reclaim, the bucket count and the create strategy.
 * Each setter returns the builder it was called on, so calls chain on the concrete builder; each
 * builder adds {@code build()}. Not thread-safe;
 * each {@code build()} makes a new cache.
 *
 * @param <B> the concrete builder
 */
public abstract class KernelPortBuilder<B extends KernelPortBuilder<B>> {

    /** The options as set, checked as they are set. */
    final KernelPortOptions options = new KernelPortOptions();

    KernelPortBuilder() {
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * log2 of the bucket count (kernel {@code bucket_bits}); default 10, as ext4. The table takes its
     * buckets' memory up front: {@link MbCache}'s 28 bytes a bucket (the head word, the wide key
     * filter and three array references; 40 without compressed references), 28 KiB at the default
     * and 28 GiB or more at 30; {@link CompactMbCache}'s 128 (a 64-byte line, 56 bytes of home
     * values, a 4-byte key filter and a 4-byte chain-array reference), and it takes at most 26. A {@code CompactMbCache}
     * builder given {@link #maxEntries(long)} and no {@code bucketBits} sizes its table from that
     * bound instead: 6 entries a bucket at the bound, a bucket count that need not be a power of
     * two. {@code build()} throws {@link IllegalArgumentException} where the buckets' arrays alone
     * (16 bytes a bucket for {@code MbCache}, 128 for {@code CompactMbCache}) exceed the maximum heap,
     * and may throw {@link OutOfMemoryError} where the heap holds that but not the whole table.
     *
     * @param bucketBits in {@code [0, 30]}
     * @return this builder
     * @throws IllegalArgumentException if outside {@code [0, 30]}
     */
    public B bucketBits(int bucketBits) {
        options.bucketBits(bucketBits);
        return self();
    }

    /**
     * How creates refuse duplicates; default {@link CreateStrategy#REQUEST_LIST}.
     * {@link CompactMbCache} has that behaviour only and refuses any other.
     *
     * @param createStrategy the strategy
     * @return this builder
     * @throws NullPointerException if {@code createStrategy} is null
     * @throws IllegalArgumentException if this builder's cache does not have that strategy
     */
    public B createStrategy(CreateStrategy createStrategy) {
        // Checked first: a refused strategy changes nothing.
        options.createStrategy(accepted(Objects.requireNonNull(createStrategy, "createStrategy")));
        return self();
    }

    /** {@code createStrategy} if this builder's cache has that behaviour; else the exception. */
    CreateStrategy accepted(CreateStrategy createStrategy) {
        return createStrategy;
    }

    /**
     * The size at which creates start background reclaim (kernel {@code c_max_entries}); at twice
     * this they also reclaim synchronously. Default: 16 entries a bucket for {@link MbCache}, 8 for
     * {@link CompactMbCache}, which, given this bound and no {@code bucketBits}, sizes its table
     * from it instead (14 entries a bucket).
     *
     * @param maxEntries positive
     * @return this builder
     * @throws IllegalArgumentException if not positive
     */
    public B maxEntries(long maxEntries) {
        options.maxEntries(maxEntries);
        return self();
    }

    /**
     * Where background reclaim passes run. Default: one shared daemon thread,
     * {@code mbcache-reclaim}, for all caches that do not name their own. If the executor throws,
     * the pass runs on the creating thread instead; if it accepts a pass and never runs it, the
     * pass is handed to it again when a create reaches {@code 2 * maxEntries} while the pass
     * has been pending for over a second.
     *
     * @param executor the executor
     * @return this builder
     * @throws NullPointerException if {@code executor} is null
     */
    public B executor(Executor executor) {
        options.executor(executor);
        return self();
    }

    /**
     * Fixes the secret seed of the keyed bucket index, for reproducible tests and benchmarks; the
     * same seed gives the same buckets in both layouts at the same bucket count. By default every
     * cache draws its own seed from {@link java.security.SecureRandom}, so that nobody who chooses
     * keys can aim them at one bucket. Do not fix it where keys come from untrusted content.
     *
     * @param hashSeed any value; the same seed always gives the same bucket for a key
     * @return this builder
     */
    public B hashSeed(long hashSeed) {
        options.hashSeed(hashSeed);
        return self();
    }

    /**
     * The most entries a bucket chain keeps while nobody holds them: a create that would make a
     * chain longer first reclaims that chain's oldest unheld entries (a referenced one gets a
     * second chance). Held entries are never removed, so a chain exceeds the cap only by held
     * entries. Default: twice the mean chain length at {@code 2 * maxEntries}, plus 16, at least
     * 32, which honest keys do not reach (see {@link MbCache#chainCap()}).
     *
     * @param chainCap the cap, at least 1
     * @return this builder
     * @throws IllegalArgumentException if {@code chainCap < 1}
     */
    public B chainCap(int chainCap) {
        options.chainCap(chainCap);
        return self();
    }

    /**
     * Whether the cache answers heap pressure with reclaim passes (see {@link MbCache}); default
     * {@code true}. A cache built with {@code false} is never asked to shrink when a collection
     * leaves the old generation full, so only its {@code maxEntries} bound and explicit
     * {@link DedupCache#shrink(long)} calls free its entries; and if no cache of the process asks
     * for pressure reclaim, none sets the heap pools' collection-usage thresholds either. For a
     * cache whose entries are cheap next to what recreating them costs, or whose owner already
     * shrinks it on a signal of its own.
     *
     * @param enabled {@code false} to keep this cache out of memory-pressure reclaim
     * @return this builder
     */
    public B memoryPressureReclaim(boolean enabled) {
        options.memoryPressureReclaim(enabled);
        return self();
    }
}
