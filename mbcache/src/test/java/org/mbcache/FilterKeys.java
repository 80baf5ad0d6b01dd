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
     * For a {@link CompactMbCache} built with {@code hashSeed}: a key, other than {@code key}, whose
     * bit in a bucket header's pool filter is not {@code key}'s (any bucket count: the bit does not
     * depend on it), so that a pool filter built from the decoy alone turns {@code key} away.
     *
     * @param key the key the lookups will ask for
     * @param hashSeed the seed the cache is built with ({@code CompactMbCache.Builder.hashSeed})
     * @return the decoy key
     */
    public static int compactPoolDecoyOf(int key, long hashSeed) {
        CompactTable table = new CompactTable(1, 512, KeyedIndex.seed(hashSeed));
        long bit = CompactLine.poolFilterBit(table.filterMix(key));
        for (int candidate = key + 1; ; candidate++) {
            if (CompactLine.poolFilterBit(table.filterMix(candidate)) != bit) {
                return candidate;
            }
        }
    }

    /**
     * The home slots of a {@link CompactMbCache} bucket: a chain's entries beyond these, while they
     * are all in use or resting, go to pool slots.
     *
     * @return the home slots a bucket's line holds
     */
    public static int compactHomeSlots() {
        return CompactLine.HOME_SLOTS;
    }
}
