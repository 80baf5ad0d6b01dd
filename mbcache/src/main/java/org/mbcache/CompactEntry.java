package org.mbcache;

import java.util.Objects;

/**
 * What a {@link CompactMbCache} hands out through the {@link DedupCache} methods: a light view of a
 * handle, made per lookup and kept by nobody but the caller, with the key and value copied so that
 * they stay readable after release. Views of one pair's handle are equal: same cache, same handle
 * (slot, generation and the cache's tag), so a view of the pair a slot holds later is not equal to
 * one of the pair it held before.
 */
final class CompactEntry extends CachedPair {
    final CompactMbCache cache;
    final long handle;

    CompactEntry(CompactMbCache cache, long handle, int key, long value) {
        super(key, value);
        this.cache = cache;
        this.handle = handle;
    }

    @Override
    public boolean reusable() {
        return cache.reusable(handle);
    }

    @Override
    public void setReusable(boolean reusable) {
        cache.setReusable(handle, reusable);
    }

    @Override
    public void close() {
        cache.release(this);
    }

    @Override
    public String toString() {
        return "CompactMbCache.Entry[key=" + key + ", value=" + value + ", slot=" + CompactSlots.slotOf(handle)
                + ", generation=" + CompactSlots.generationOf(handle) + "]";
    }

    /**
     * {@code true} for a view of the same cache and handle: the same cached pair.
     *
     * @param other another object
     * @return whether it is a view of the same pair
     */
    @Override
    public boolean equals(Object other) {
        return other instanceof CompactEntry && ((CompactEntry) other).cache == cache
                && ((CompactEntry) other).handle == handle;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(handle);
    }

    /**
     * The handle of {@code entry}, one of {@code cache}'s entry objects.
     *
     * @throws NullPointerException if {@code entry} is null
     * @throws IllegalArgumentException if it belongs to another cache
     */
    static long handleIn(CompactMbCache cache, CacheEntry entry) {
        Objects.requireNonNull(entry, "entry");
        if (entry instanceof CompactEntry && ((CompactEntry) entry).cache == cache) {
            return ((CompactEntry) entry).handle;
        }
        throw new IllegalArgumentException("entry belongs to another cache: " + entry);
    }

    /** The handle of one of a compact cache's entry objects (tests). */
    static long handleOfEntry(CacheEntry entry) {
        return ((CompactEntry) entry).handle;
    }

    /** The cache of one of a compact cache's entry objects (tests). */
    static CompactMbCache cacheOf(CacheEntry entry) {
        return ((CompactEntry) entry).cache;
    }
}
