package org.mbcache.micrometer;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.cache.CacheMeterBinder;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import org.mbcache.CacheStats;
import org.mbcache.DedupCache;

/**
 * Publishes a {@link DedupCache}'s size and counters as Micrometer meters, for every backend, in the
 * conventions of Micrometer's own cache binders (those built on {@link CacheMeterBinder}, such as
 * its binder for Caffeine caches). Bind it once per cache:
 *
 * <pre>{@code
 * MbCache cache = MbCache.builder().build();
 * MbCacheMetrics.monitor(registry, cache, "xattr", "region", "eu");
 * }</pre>
 *
 * <p>Every meter is tagged {@code cache=<cacheName>} and with the caller's tags. The counters are
 * the figures of {@link DedupCache#stats()} (see {@link CacheStats} for exactly what each counts):
 * <ul>
 *   <li>{@code cache.size} (gauge): {@link DedupCache#size()};</li>
 *   <li>{@code cache.gets} tagged {@code result=hit} and {@code result=miss}:
 *       {@link CacheStats#lookupHits()} and {@link CacheStats#lookupMisses()} ({@code findFirst},
 *       {@code findNext} and {@code get});</li>
 *   <li>{@code cache.puts}: {@link CacheStats#creates()}, the creates that inserted an entry;</li>
 *   <li>{@code cache.evictions}: {@link CacheStats#entriesReclaimed()}, the entries removed by
 *       reclaim of every kind (and by Caffeine's own eviction in the Caffeine backend), but not
 *       those removed to keep a chain under its cap, which {@code cache.chain.cap.reclaims}
 *       counts, so that the two add up without counting an entry twice;</li>
 *   <li>{@code cache.duplicates}: {@link CacheStats#duplicatesRefused()}, the creates refused
 *       because the pair was cached or being created;</li>
 *   <li>{@code cache.deletes}: {@link CacheStats#deletes()}, the entries {@code deleteOrGet}
 *       removed;</li>
 *   <li>{@code cache.reclaim.passes} tagged {@code kind=background}, {@code kind=synchronous} and
 *       {@code kind=requested}: {@link CacheStats#backgroundReclaimPasses()},
 *       {@link CacheStats#synchronousReclaimPasses()} and {@link CacheStats#requestedReclaimPasses()}
 *       (requested: by {@code shrink}, whether a caller or the JVM's memory pressure asked);</li>
 *   <li>{@code cache.chain.cap.reclaims}: {@link CacheStats#chainCapReclaims()};</li>
 *   <li>{@code cache.restores}: {@link CacheStats#restores()}, the pairs {@code readSnapshot}
 *       restored (not in {@code cache.puts}: a warm restart is not a burst of creates).</li>
 * </ul>
 *
 * <p><b>Cost of a scrape.</b> {@code stats()} sums striped counters and, on {@code MbCache} and
 * {@code CompactMbCache}, takes the lock that reclaim passes hold, so the counters do not call it once each: the first counter
 * read takes a snapshot and the counters read within the next 100 milliseconds (the rest of a
 * scrape) reuse it. So the counters of one scrape come from one snapshot and agree with each other,
 * and each may lag the cache by up to 100 milliseconds. Snapshots are taken one at a time, so a
 * counter never goes down between two reads, whichever threads scrape. The size gauge reads
 * {@code size()} each time, which takes no lock.
 *
 * <p><b>A closed cache</b> never makes a scrape throw: {@code cache.size} reads 0 (a closed cache
 * holds no entries) and every counter keeps the value of the last snapshot taken before the close
 * (what happened between that snapshot and the close is not published; a counter never goes down).
 * A cache closed before it is bound publishes zeros. A Caffeine-backed cache broken by an invariant
 * breach throws its {@link AssertionError} from the scrape, as it does from every call: never silently.
 *
 * <p>The meters hold the cache weakly, as Micrometer's cache binders do: they do not keep a cache
 * from being collected, and Micrometer reports a collected cache's gauge as {@code NaN}.
 */
public final class MbCacheMetrics extends CacheMeterBinder<DedupCache> {

    /** How long one stats snapshot serves the counters: long enough for a scrape, short enough to be current. */
    private static final long SNAPSHOT_REUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private static final CacheStats NOTHING_COUNTED = new CacheStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    private final long snapshotReuseNanos;
    /** Guards the snapshot fields, so that snapshots are taken one at a time and never replaced by an older one. */
    private final Object snapshotLock = new Object();
    /** The last stats read; {@link #NOTHING_COUNTED} until the first read of an open cache. */
    private CacheStats snapshot = NOTHING_COUNTED;
    /** {@link System#nanoTime()} when {@link #snapshot} was taken; meaningless until {@link #snapshotTaken}. */
    private long snapshotTakenAt;
    private boolean snapshotTaken;
    /** Whether {@code stats()} said the cache is closed: the snapshot is then final. */
    private boolean cacheClosed;

    /**
     * A binder for {@code cache}'s meters, tagged {@code cache=<cacheName>} and with {@code tags}.
     * Nothing is registered until {@link #bindTo(MeterRegistry)}.
     *
     * @param cache the cache to publish, held weakly
     * @param cacheName the value of the {@code cache} tag
     * @param tags further tags for every meter
     * @throws NullPointerException if an argument is null
     */
    public MbCacheMetrics(DedupCache cache, String cacheName, Iterable<Tag> tags) {
        this(cache, cacheName, tags, SNAPSHOT_REUSE_NANOS);
    }

    /** As the public constructor, with the time a snapshot is reused (0: never); for tests. */
    MbCacheMetrics(DedupCache cache, String cacheName, Iterable<Tag> tags, long snapshotReuseNanos) {
        super(Objects.requireNonNull(cache, "cache"), Objects.requireNonNull(cacheName, "cacheName"),
                Objects.requireNonNull(tags, "tags"));
        this.snapshotReuseNanos = snapshotReuseNanos;
    }

    /**
     * Binds {@code cache}'s meters to {@code registry}, as Micrometer's {@code CaffeineCacheMetrics.monitor} does.
     *
     * @param registry where the meters are registered
     * @param cache the cache to publish, held weakly
     * @param cacheName the value of the {@code cache} tag
     * @param tags further tags as key, value, key, value...
     * @param <C> the cache's type
     * @return {@code cache}, for chaining
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code tags} has an odd number of elements
     */
    public static <C extends DedupCache> C monitor(MeterRegistry registry, C cache, String cacheName, String... tags) {
        return monitor(registry, cache, cacheName, Tags.of(Objects.requireNonNull(tags, "tags")));
    }

    /**
     * Binds {@code cache}'s meters to {@code registry}.
     *
     * @param registry where the meters are registered
     * @param cache the cache to publish, held weakly
     * @param cacheName the value of the {@code cache} tag
     * @param tags further tags for every meter
     * @param <C> the cache's type
     * @return {@code cache}, for chaining
     * @throws NullPointerException if an argument is null
     */
    public static <C extends DedupCache> C monitor(MeterRegistry registry, C cache, String cacheName,
                                                   Iterable<Tag> tags) {
        Objects.requireNonNull(registry, "registry");
        new MbCacheMetrics(cache, cacheName, tags).bindTo(registry);
        return cache;
    }

    /**
     * The cache's {@link DedupCache#size()}, or 0 once it is closed.
     *
     * @return the entry count, or {@code null} if the cache was collected
     */
    @Override
    protected Long size() {
        DedupCache cache = getCache();
        if (cache == null) {
            return null;
        }
        try {
            return cache.size();
        } catch (IllegalStateException closed) { // the one reason size() throws it (the contract)
            return 0L;
        }
    }

    /**
     * {@link CacheStats#lookupHits()}.
     *
     * @return the lookups that returned an entry
     */
    @Override
    protected long hitCount() {
        return snapshot().lookupHits();
    }

    /**
     * {@link CacheStats#lookupMisses()}.
     *
     * @return the lookups that returned {@code null}
     */
    @Override
    protected Long missCount() {
        return snapshot().lookupMisses();
    }

    /**
     * {@code null}, so that {@link CacheMeterBinder} does not register {@code cache.evictions}: this
     * binder registers it itself, with a description that says which removals it counts.
     *
     * @return {@code null}
     */
    @Override
    protected Long evictionCount() {
        return null;
    }

    /**
     * {@link CacheStats#creates()}.
     *
     * @return the creates that inserted an entry
     */
    @Override
    protected long putCount() {
        return snapshot().creates();
    }

    /**
     * Registers {@code cache.evictions} and the meters Micrometer's cache binders do not have.
     *
     * @param registry where the meters are registered
     */
    @Override
    protected void bindImplementationSpecificMetrics(MeterRegistry registry) {
        DedupCache cache = getCache();
        if (cache == null) {
            return;
        }
        register(registry, cache, "cache.evictions", CacheStats::entriesReclaimed,
                "Entries removed by reclaim passes of every kind (and by Caffeine's eviction in the Caffeine"
                        + " backend); not those removed for the chain cap (cache.chain.cap.reclaims) nor deleted"
                        + " (cache.deletes)");
        register(registry, cache, "cache.duplicates", CacheStats::duplicatesRefused,
                "Creates refused because the pair was already cached or being created by another thread");
        register(registry, cache, "cache.deletes", CacheStats::deletes, "Entries removed by deleteOrGet");
        String passes = "Reclaim passes: background (on the executor, at maxEntries), synchronous (on a creating"
                + " thread, at twice maxEntries; a rise means background reclaim falls behind) or requested"
                + " (shrink, by a caller or under memory pressure)";
        register(registry, cache, "cache.reclaim.passes", CacheStats::backgroundReclaimPasses, passes,
                Tag.of("kind", "background"));
        register(registry, cache, "cache.reclaim.passes", CacheStats::synchronousReclaimPasses, passes,
                Tag.of("kind", "synchronous"));
        register(registry, cache, "cache.reclaim.passes", CacheStats::requestedReclaimPasses, passes,
                Tag.of("kind", "requested"));
        register(registry, cache, "cache.chain.cap.reclaims", CacheStats::chainCapReclaims,
                "Entries removed because a create found their chain at the chain cap; a steady rise means"
                        + " colliding keys arrive faster than honest data makes them");
        register(registry, cache, "cache.restores", CacheStats::restores,
                "Pairs restored from a snapshot by readSnapshot (not counted in cache.puts)");
    }

    /**
     * One counter of the snapshot. The meter holds the cache weakly and the function reaches it only
     * through this binder's weak reference, so the registry does not keep the cache alive.
     */
    private void register(MeterRegistry registry, DedupCache cache, String name, ToLongFunction<CacheStats> counter,
                          String description, Tag... extraTags) {
        FunctionCounter.builder(name, cache, ignored -> counter.applyAsLong(snapshot()))
                .tags(getTagsWithCacheName())
                .tags(Tags.of(extraTags))
                .description(description)
                .register(registry);
    }

    /**
     * The stats snapshot for a counter read: the last one if it was taken less than
     * {@link #snapshotReuseNanos} ago, or the cache is closed or collected; else a new one.
     */
    private CacheStats snapshot() {
        DedupCache cache = getCache();
        synchronized (snapshotLock) {
            if (cache == null || cacheClosed) {
                return snapshot;
            }
            long now = System.nanoTime();
            if (snapshotTaken && now - snapshotTakenAt < snapshotReuseNanos) {
                return snapshot;
            }
            try {
                snapshot = cache.stats();
            } catch (IllegalStateException closed) { // the one reason stats() throws it (the contract)
                cacheClosed = true;
                return snapshot;
            }
            snapshotTakenAt = now;
            snapshotTaken = true;
            return snapshot;
        }
    }
}
