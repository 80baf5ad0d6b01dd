package org.mbcache;

/**
 * An immutable snapshot of a cache's counters, taken by {@link DedupCache#stats()}.
 *
 * <p><b>Exactness.</b> No counter is sampled or estimated: each counts every event it names exactly
 * once, and a snapshot of a quiet cache is exact. The cache is not stopped to take one, though: the
 * counters live in striped cells and are summed one after another. So a snapshot taken
 * while other threads work includes every event that completed before {@code stats()} was called,
 * may or may not include those in flight, and is not an atomic cut across counters (for example,
 * {@code lookupHits + lookupMisses} can for a moment differ from the lookups that have returned).
 * Counters only grow; subtract two snapshots to get rates. Below, "exact" means exactly this.
 *
 * <p>Per counter, what it counts and where the backends differ:
 *
 * @param creates {@code create} calls that inserted a new entry (returned {@code true}). Exact.
 * @param duplicatesRefused {@code create} calls refused because the pair was cached or being created
 *     by another thread (returned {@code false}). Exact. {@code creates + duplicatesRefused} is every
 *     {@code create} that returned.
 * @param lookupHits {@code findFirst}, {@code findNext} and {@code get} calls that returned an entry.
 *     Exact. {@code deleteOrGet} is not a lookup and is not counted here.
 * @param lookupMisses {@code findFirst}, {@code findNext} and {@code get} calls that returned
 *     {@code null} (for {@code findNext}: the end of the chain). Exact.
 * @param deletes entries removed by {@code deleteOrGet} (the calls that returned {@code null}
 *     because they removed the pair; not those that found nothing or handed a held entry back). Exact.
 * @param entriesReclaimed entries removed by reclaim of any kind: background, synchronous, requested
 *     and memory-pressure passes, {@code CompactMbCache}'s line reclaim (the contract, section 4),
 *     and (in the Caffeine backend) Caffeine's own eviction. Exact, counted
 *     when the entry is removed; in the Caffeine backend that is when Caffeine's maintenance has run,
 *     which can be a moment after the create that made room necessary. Entries reclaimed because
 *     their chain reached its cap are counted in {@code chainCapReclaims}, not here.
 * @param backgroundReclaimPasses passes run on the cache's executor because a create found
 *     {@code size() >= maxEntries} (the contract, section 4), or because the previous pass left the
 *     count there (each such pass is a task of its own), including those the creating thread
 *     ran instead because the executor threw. Exact. In the Caffeine backend, the
 *     tasks it hands to the executor (Caffeine's maintenance and its own unpin drains) that start
 *     while the cache is at or over {@code maxEntries}.
 * @param synchronousReclaimPasses passes run on a creating thread because it found
 *     {@code size() >= 2 * maxEntries}. Exact. Any rise means background reclaim is falling behind
 *     the creates.
 * @param requestedReclaimPasses passes asked for through {@code shrink}, by a caller or by the
 *     memory-pressure registry (the JVM signalled heap pressure). Exact.
 * @param chainCapReclaims entries removed because a create found their chain (in the Caffeine
 *     backend: the values of their key) at the cache's chain cap (the contract, section 4). Exact.
 *     Honest workloads leave it at zero: a steady rise means colliding keys arrive faster than
 *     honest data makes them, an attack or a cap set too low.
 * @param restores pairs a {@code readSnapshot} restored into the cache. Exact. Not counted in
 *     {@code creates}: a warm restart shows here, not as a burst of creates.
 */
public record CacheStats(
        long creates,
        long duplicatesRefused,
        long lookupHits,
        long lookupMisses,
        long deletes,
        long entriesReclaimed,
        long backgroundReclaimPasses,
        long synchronousReclaimPasses,
        long requestedReclaimPasses,
        long chainCapReclaims,
        long restores) {

    /**
     * Validates that no counter is negative.
     *
     * @param creates the value of {@link #creates()}
     * @param duplicatesRefused the value of {@link #duplicatesRefused()}
     * @param lookupHits the value of {@link #lookupHits()}
     * @param lookupMisses the value of {@link #lookupMisses()}
     * @param deletes the value of {@link #deletes()}
     * @param entriesReclaimed the value of {@link #entriesReclaimed()}
     * @param backgroundReclaimPasses the value of {@link #backgroundReclaimPasses()}
     * @param synchronousReclaimPasses the value of {@link #synchronousReclaimPasses()}
     * @param requestedReclaimPasses the value of {@link #requestedReclaimPasses()}
     * @param chainCapReclaims the value of {@link #chainCapReclaims()}
     * @param restores the value of {@link #restores()}
     * @throws IllegalArgumentException if a counter is negative
     */
    public CacheStats {
        if (creates < 0 || duplicatesRefused < 0 || lookupHits < 0 || lookupMisses < 0 || deletes < 0
                || entriesReclaimed < 0 || backgroundReclaimPasses < 0 || synchronousReclaimPasses < 0
                || requestedReclaimPasses < 0 || chainCapReclaims < 0 || restores < 0) {
            throw new IllegalArgumentException("cache counters cannot be negative");
        }
    }

    /**
     * Statistics of a cache that restored nothing ({@link #restores()} 0).
     *
     * @param creates the value of {@link #creates()}
     * @param duplicatesRefused the value of {@link #duplicatesRefused()}
     * @param lookupHits the value of {@link #lookupHits()}
     * @param lookupMisses the value of {@link #lookupMisses()}
     * @param deletes the value of {@link #deletes()}
     * @param entriesReclaimed the value of {@link #entriesReclaimed()}
     * @param backgroundReclaimPasses the value of {@link #backgroundReclaimPasses()}
     * @param synchronousReclaimPasses the value of {@link #synchronousReclaimPasses()}
     * @param requestedReclaimPasses the value of {@link #requestedReclaimPasses()}
     * @param chainCapReclaims the value of {@link #chainCapReclaims()}
     * @throws IllegalArgumentException if a counter is negative
     */
    public CacheStats(long creates, long duplicatesRefused, long lookupHits, long lookupMisses, long deletes,
                      long entriesReclaimed, long backgroundReclaimPasses, long synchronousReclaimPasses,
                      long requestedReclaimPasses, long chainCapReclaims) {
        this(creates, duplicatesRefused, lookupHits, lookupMisses, deletes, entriesReclaimed,
                backgroundReclaimPasses, synchronousReclaimPasses, requestedReclaimPasses, chainCapReclaims, 0);
    }

    /**
     * All reclaim passes, whatever started them: background, synchronous and requested.
     *
     * @return the sum of the three pass counters
     */
    public long reclaimPasses() {
        return backgroundReclaimPasses + synchronousReclaimPasses + requestedReclaimPasses;
    }

    /**
     * Hits over all lookups, or {@code 1.0} when there were none.
     *
     * @return {@code lookupHits / (lookupHits + lookupMisses)}, in {@code [0, 1]}
     */
    public double hitRate() {
        long lookups = lookupHits + lookupMisses;
        return lookups == 0 ? 1.0 : (double) lookupHits / lookups;
    }
}
