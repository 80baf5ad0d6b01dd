package org.mbcache;

/**
 * Builds {@link CompactMbCache}s with line reclaim forced on for tests and the stress races, and
 * checks their chains: a table small enough for a race to fill one line has line reclaim off
 * ({@link CompactMbCache#LINE_RECLAIM_MIN_BUCKETS}). Test support, in this package because the
 * constructor that forces it and the chain check are package-private; the stress module reaches it
 * through the test jar.
 */
public final class LineReclaimCaches {

    private LineReclaimCaches() {
    }

    /**
     * A one-bucket cache (every key in one line of {@link FilterKeys#compactHomeSlots()} home slots)
     * bounded at {@code maxEntries}, with line reclaim on, background passes dropped (an executor
     * that never runs them, so the count stays where the creates put it) and no memory-pressure
     * registration.
     *
     * @param maxEntries the bound, from which a create into the full line reclaims in it
     * @param hashSeed the keyed index's seed
     * @return a new, empty cache, which the caller closes
     */
    public static CompactMbCache oneLine(long maxEntries, long hashSeed) {
        CompactMbCache.Builder builder = CompactMbCache.builder().maxEntries(maxEntries).hashSeed(hashSeed)
                .executor(task -> { }).memoryPressureReclaim(false);
        return new CompactMbCache(builder, 1, true);
    }

    /**
     * Whether every live slot is in its key's chain and every chain reference is a live slot of the
     * chain's bucket. Quiet caches only.
     *
     * @param cache the compact cache
     * @return {@code true} if the chains are consistent
     */
    public static boolean chainsConsistent(CompactMbCache cache) {
        try {
            cache.checkChains();
            return true;
        } catch (AssertionError breach) {
            return false;
        }
    }
}
