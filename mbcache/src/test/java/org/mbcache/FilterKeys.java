package org.mbcache;

/**
 * Keys chosen for the key filters of a one-bucket kernel-port cache, for the stress races that need a
 * lookup to take one particular path through {@link ListTable}'s filters, or {@link CompactTable}'s in
 * the compact layout ({@link CompactMbCache}). Test support, in this package
 * because the filters' bits are package-private; the stress module reaches it through the test jar.
 */
public final class FilterKeys {

    private FilterKeys() {
    }

    /**
     * A key, other than {@code key}, that has {@code key}'s bit in the head word's filter but not
     * both of its bits in the wide filter, in a cache of {@code bucketBits} 0 built with
     * {@code hashSeed}: with it
     * in the chain, a lookup of an absent {@code key} passes the head filter and is turned away by
     * the wide one, the path that must validate its answer against the version.
     *
     * @param key the key the lookups will ask for
     * @param hashSeed the seed the cache is built with ({@code MbCache.Builder.hashSeed})
     * @return the decoy key
     */
    public static int headTwinOf(int key, long hashSeed) {
        ListTable buckets = new ListTable(0, hashSeed);
        for (int candidate = key + 1; ; candidate++) {
            if (buckets.filterBit(candidate) == buckets.filterBit(key)
                    && (buckets.wideFilterBits(key) & ~buckets.wideFilterBits(candidate)) != 0) {
                return candidate;
            }
        }
    }

    /**
     * As {@link #headTwinOf}, for a {@link CompactMbCache} built with {@code hashSeed}: a key, other
     * than {@code key}, that has {@code key}'s bit in the head word's filter but not both of its bits
     * in the wide filter. The compact layout's filters take other bits of the keyed hash than the
     * kernel port's (any bucket count: they do not depend on it).
     *
     * @param key the key the lookups will ask for
     * @param hashSeed the seed the cache is built with ({@code CompactMbCache.Builder.hashSeed})
     * @return the decoy key
     */
    public static int compactHeadTwinOf(int key, long hashSeed) {
        CompactTable table = new CompactTable(1, 12, 12, KeyedIndex.seed(hashSeed));
        int mix = table.filterMix(key);
        for (int candidate = key + 1; ; candidate++) {
            int other = table.filterMix(candidate);
            if (CompactTable.filterBit(other) == CompactTable.filterBit(mix)
                    && (CompactTable.wideFilterBits(mix) & ~CompactTable.wideFilterBits(other)) != 0) {
                return candidate;
            }
        }
    }

    /**
     * The removals from one chain of a {@link CompactMbCache} that leave its key filters as they are,
     * counted from the last rebuild (or from the chain's creation), before the one that rebuilds them
     * from the keys left.
     *
     * @param cache a compact cache
     * @return one less than the removals that rebuild the filters, one in so many
     */
    public static int compactRemovalsBeforeRebuild(DedupCache cache) {
        return ((CompactMbCache) cache).filterRebuildEvery() - 1;
    }
}
