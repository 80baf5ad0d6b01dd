package org.mbcache;

/**
 * An immutable snapshot of a cache's counters, taken by {@link DedupCache#stats()}.
 *
 * <p>Counters are gathered from per-bucket (or otherwise striped) cells without stopping the
 * cache, so a snapshot taken while other threads work is a consistent-enough sum, not an atomic
 * cut: each counter is exact once the cache is quiet.
 *
 * @param creates creates that inserted a new entry ({@code create} returned {@code true})
 * @param duplicatesRefused creates refused because the pair was cached or being created
 * @param lookupHits {@code findFirst}, {@code findNext} and {@code get} calls that returned an entry
 * @param lookupMisses {@code findFirst}, {@code findNext} and {@code get} calls that returned {@code null}
 * @param deletes entries removed by {@code deleteOrGet}
 * @param entriesReclaimed entries freed by reclaim passes of any kind
 * @param backgroundReclaimPasses passes run on the executor because {@code size() >= maxEntries}
 * @param synchronousReclaimPasses passes run by a creating thread because {@code size() >= 2 * maxEntries}
 * @param requestedReclaimPasses passes asked for through {@code shrink} (by a caller or on memory pressure)
 * @param chainCapReclaims entries reclaimed because a create found their chain (or, in the Caffeine
 *     backend, their key's values) at the cache's chain cap: a steady rise means colliding keys are
 *     arriving faster than honest workloads make them, an attack or a cap set too low
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
        long chainCapReclaims) {

    /** Validates that no counter is negative. */
    public CacheStats {
        if (creates < 0 || duplicatesRefused < 0 || lookupHits < 0 || lookupMisses < 0 || deletes < 0
                || entriesReclaimed < 0 || backgroundReclaimPasses < 0 || synchronousReclaimPasses < 0
                || requestedReclaimPasses < 0 || chainCapReclaims < 0) {
            throw new IllegalArgumentException("cache counters cannot be negative");
        }
    }

    /** All reclaim passes, whatever started them. */
    public long reclaimPasses() {
        return backgroundReclaimPasses + synchronousReclaimPasses + requestedReclaimPasses;
    }

    /** Hits over all lookups, or {@code 1.0} when there were none. */
    public double hitRate() {
        long lookups = lookupHits + lookupMisses;
        return lookups == 0 ? 1.0 : (double) lookupHits / lookups;
    }
}
