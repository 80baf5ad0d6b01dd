package org.mbcache;

/**
 * Reaches the hot mode of both kernel-port layouts ({@link HotReferences}: {@code ListEntry}'s
 * and {@link CompactMbCache}'s slots) from tests and the stress races, which need an entry hot
 * before a race starts. Test support, in this package because the protocol is package-private; the
 * stress module reaches it through the test jar.
 */
public final class HotEntries {

    private HotEntries() {
    }

    /**
     * Switches a live entry of a kernel-port cache to hot mode, as an acquire does under contention.
     *
     * @param entry an entry of an {@link MbCache} or a {@link CompactMbCache}, live (cached) and held
     * @return whether the entry is hot now
     */
    public static boolean makeHot(CacheEntry entry) {
        if (entry instanceof ListEntry own) {
            own.switchToHot(0);
            return own.isHot();
        }
        return compactOf(entry).switchToHot(CompactEntry.handleOfEntry(entry));
    }

    /**
     * Spends a compact cache's hot-mode budget: creates {@link HotReferences#MAX_HOT_ENTRIES} pairs
     * (keys {@code firstKey} and up, value the index), takes a handle of each and switches it hot.
     * The caller releases the handles.
     *
     * @param cache the compact cache
     * @param firstKey the first key, clear of the test's own keys
     * @return the hot pairs' handles, held
     */
    public static java.util.List<Long> spendHotBudget(CompactMbCache cache, int firstKey) {
        java.util.List<Long> hot = new java.util.ArrayList<>();
        for (int i = 0; i < HotReferences.MAX_HOT_ENTRIES; i++) {
            if (!cache.create(firstKey + i, i, true)) {
                throw new AssertionError("pair " + (firstKey + i) + " was cached already");
            }
            long handle = cache.getHandle(firstKey + i, i);
            if (!makeHot(cache, handle)) {
                throw new AssertionError("pair " + (firstKey + i) + " did not switch to hot mode");
            }
            hot.add(handle);
        }
        return hot;
    }

    /**
     * Switches a held handle's slot to hot mode.
     *
     * @param cache the compact cache
     * @param handle a handle the caller holds
     * @return whether the slot is hot now
     */
    public static boolean makeHot(CompactMbCache cache, long handle) {
        return cache.switchToHot(handle);
    }

    /**
     * Whether an entry of a kernel-port cache is in hot mode.
     *
     * @param entry an entry of an {@link MbCache} or a {@link CompactMbCache}
     * @return whether it is hot
     */
    public static boolean isHot(CacheEntry entry) {
        if (entry instanceof ListEntry own) {
            return own.isHot();
        }
        return compactOf(entry).isHot(CompactEntry.handleOfEntry(entry));
    }

    /**
     * Whether a handle's slot is in hot mode (with the handle's generation).
     *
     * @param cache the compact cache
     * @param handle a handle of it
     * @return whether it is hot
     */
    public static boolean isHot(CompactMbCache cache, long handle) {
        return cache.isHot(handle);
    }

    /**
     * How many entries of a kernel-port cache are hot now.
     *
     * @param cache an {@link MbCache} or a {@link CompactMbCache}
     * @return its hot entries (a compact cache: its slots with cells)
     */
    public static int hotEntries(DedupCache cache) {
        return cache instanceof MbCache mb ? mb.hotEntries() : ((CompactMbCache) cache).hotSlots();
    }

    private static CompactMbCache compactOf(CacheEntry entry) {
        return CompactEntry.cacheOf(entry);
    }
}
