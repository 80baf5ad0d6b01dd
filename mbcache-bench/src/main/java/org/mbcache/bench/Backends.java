package org.mbcache.bench;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import org.mbcache.DedupCache;
import org.mbcache.testing.Backend;

/**
 * The one backend factory every benchmark uses. Backend names are the values of the JMH
 * {@code @Param("backend")} field and the row labels of the results table. The {@link DedupCache}
 * backends are the project's one list, {@link Backend} (from the library's test jar); their names
 * are repeated here as constants only because JMH's {@code @Param} needs compile-time strings, and
 * {@code BackendsTest} checks that the two agree.
 */
public final class Backends {
    /** The kernel port with the 2019 in-progress request list (the default strategy). */
    public static final String MBCACHE = "mbcache";
    /** The kernel port allocating before the duplicate check, as mainline Linux does. */
    public static final String MBCACHE_ALLOCFIRST = "mbcache-allocfirst";
    /** {@code CompactMbCache}: the kernel port with no object per entry. */
    public static final String COMPACT = "compact";
    /** {@code CaffeineDedupCache}: the same DedupCache contract on top of Caffeine. */
    public static final String CAFFEINE = "caffeine";
    /** A plain Caffeine {@code Cache<Long, Long>} doing the nearest single-key operation: the floor. */
    public static final String CAFFEINE_RAW = "caffeine-raw";
    /**
     * {@link Baseline} only: a plain {@code ConcurrentHashMap<Integer, long[]>} from a key to its
     * pairs' values, no reference counts, no bound: the floor of a lookup.
     */
    public static final String CHM = "chm";
    /** xattr-bench only: no cache at all, every set writes a new block. */
    public static final String NONE = "none";

    /** The backends that implement {@link DedupCache}: every {@link Backend}, by label. */
    public static final List<String> DEDUP = Arrays.stream(Backend.values()).map(Backend::label).toList();

    /** The kernel's design load: 2^12 buckets, 16 entries per bucket, 65,536 entries. */
    public static final int BUCKET_BITS = 12;
    /** The bound of every backend at the design load: the fill of the {@link #AT} regime. */
    public static final int MAX_ENTRIES = 1 << 16;

    /**
     * The regime where the cache sits at its bound ({@code maxEntries} = the fill, 65,536): a steady
     * cache. Every create of a new pair makes reclaim (Caffeine: eviction) run, and the Caffeine
     * backend's lookups pin and unpin against that eviction.
     */
    public static final String AT = "at";
    /**
     * The regime where the cache is far below its bound (a cache filling up after a restart): the same
     * pairs, the same buckets, {@code maxEntries} {@value #BELOW_MAX_ENTRIES}, so nothing is reclaimed.
     */
    public static final String BELOW = "below";
    /** {@code maxEntries} of the {@link #BELOW} regime: 2^24, above anything a measurement iteration creates. */
    public static final long BELOW_MAX_ENTRIES = 1L << 24;
    /**
     * mbcache's {@code bucketBits} for {@code createNew} below the bound ({@link Growing}):
     * 2^16 buckets, so the 65,536-pair fill is 1 a bucket and the up to ~1,300,000 pairs one
     * main-job iteration adds (200 ms) take the chains to about the design load's 16, not past it.
     * At bucketBits 12 they would take every chain to ~250, and creates would measure chain scans
     * (or the chain cap) instead of a cache with room; at 20 nearly every create would be the first
     * of its bucket and allocate the bucket's arrays.
     */
    public static final int BELOW_CREATE_BUCKET_BITS = 16;

    /**
     * The one fixed seed of {@code MbCache}'s keyed bucket index in every benchmark, so that runs
     * place the same keys in the same buckets (the library's default is a random seed per cache).
     */
    public static final long HASH_SEED = 0x6D62_6361_6368_6531L;

    private Backends() {}

    /**
     * The executor every backend gets for background work (mbcache's reclaim pass, Caffeine's
     * maintenance): Caffeine's own default, so that both run their background work alike.
     */
    public static Executor executor() {
        return ForkJoinPool.commonPool();
    }

    /** Closes a trial's cache, whichever kind it filled (either may be null). */
    public static void dispose(DedupCache cache, Cache<Long, Long> raw) {
        if (cache != null) {
            cache.close();
        }
        if (raw != null) {
            raw.invalidateAll();
        }
    }

    /** Whether the backend is the plain Caffeine floor rather than a {@link DedupCache}. */
    public static boolean isRaw(String backend) {
        return CAFFEINE_RAW.equals(backend);
    }

    /** A DedupCache backend at the design load's geometry, with the design load's bound. */
    public static DedupCache dedup(String backend) {
        return dedup(backend, BUCKET_BITS, MAX_ENTRIES, executor());
    }

    /**
     * {@code maxEntries} of a regime.
     *
     * @param bound {@link #AT} or {@link #BELOW}
     * @throws IllegalArgumentException for any other name
     */
    public static long maxEntries(String bound) {
        switch (bound) {
            case AT: return MAX_ENTRIES;
            case BELOW: return BELOW_MAX_ENTRIES;
            default: throw new IllegalArgumentException("unknown bound: " + bound + " (expected at or below)");
        }
    }

    /**
     * A DedupCache backend; {@code bucketBits} matters to the mbcache backends only, which get the
     * fixed {@link #HASH_SEED}.
     */
    public static DedupCache dedup(String backend, int bucketBits, long maxEntries, Executor executor) {
        if (CAFFEINE_RAW.equals(backend)) {
            throw new IllegalArgumentException(
                    "caffeine-raw is not a DedupCache; use Backends.raw(..) (benchmark has no raw variant)");
        }
        return Backend.byLabel(backend).open(bucketBits, maxEntries, executor, HASH_SEED);
    }

    /** The caffeine-raw floor: a plain bounded Caffeine cache keyed by the pair id. */
    public static Cache<Long, Long> raw(long maxEntries, Executor executor) {
        return Caffeine.newBuilder().maximumSize(maxEntries).executor(executor).build();
    }

    /** The caffeine-raw floor with the bound of a regime ({@link #maxEntries(String)}). */
    public static Cache<Long, Long> raw(String bound) {
        return raw(maxEntries(bound), executor());
    }
}
