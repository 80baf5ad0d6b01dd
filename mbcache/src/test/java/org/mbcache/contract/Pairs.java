package org.mbcache.contract;

import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;

/** Questions about a cache's pairs that tests of every backend ask, answered without holding anything. */
public final class Pairs {

    private Pairs() {}

    /** Whether the pair is cached, leaving nothing held. */
    public static boolean isCached(DedupCache cache, int key, long value) {
        CacheEntry entry = cache.get(key, value);
        if (entry == null) {
            return false;
        }
        cache.release(entry);
        return true;
    }
}
