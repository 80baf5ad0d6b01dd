package org.mbcache;

/**
 * Reaches the hot mode of the kernel port's entries ({@code MbCache.Entry}'s class comment) from
 * tests and the stress races, which need an entry hot before a race starts. Test support, in this
 * package because the entry is package-private; the stress module reaches it through the test jar.
 */
public final class HotEntries {

    private HotEntries() {
    }

    /**
     * Switches a live kernel-port entry to hot mode, as an acquire does under contention.
     *
     * @param entry an entry of an {@link MbCache}, live (cached)
     * @return whether the entry is hot now
     */
    public static boolean makeHot(CacheEntry entry) {
        MbCache.Entry own = (MbCache.Entry) entry;
        own.switchToHot(0);
        return own.isHot();
    }

    /**
     * Whether an entry of an {@link MbCache} is in hot mode.
     *
     * @param entry an entry of an {@link MbCache}
     * @return whether it is hot
     */
    public static boolean isHot(CacheEntry entry) {
        return ((MbCache.Entry) entry).isHot();
    }

    /**
     * How many entries of a cache are hot now.
     *
     * @param cache a kernel-port cache
     * @return its hot entries
     */
    public static int hotEntries(MbCache cache) {
        return cache.hotEntries();
    }
}
