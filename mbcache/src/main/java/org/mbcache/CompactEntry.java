package org.mbcache;

import java.util.Objects;

/**
 * The entry object a {@link CompactMbCache} hands out through the {@link DedupCache} methods: one
 * per live pair, stored in the table's handle pages ({@link CompactTable#casHandleObject}), its
 * handle, and the key and value copied, so that they stay readable after release.
 */
final class CompactEntry implements CacheEntry {
    final CompactMbCache cache;
    final long handle;
    final int key;
    final long value;

    CompactEntry(CompactMbCache cache, long handle, int key, long value) {
        this.cache = cache;
        this.handle = handle;
        this.key = key;
        this.value = value;
    }

    @Override
    public int key() {
        return key;
    }

    @Override
    public long value() {
        return value;
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
        return "CompactMbCache.Entry[key=" + key + ", value=" + value + ", slot=" + (int) handle
                + ", generation=" + CompactSlots.generationOf(handle) + "]";
    }

    /**
     * The one entry object of a held handle: the stored one if it is this generation's, else a new
     * one stored by CAS (a racing lookup of the same entry gets the winner). May allocate.
     */
    static CompactEntry of(CompactMbCache cache, CompactTable table, long handle) {
        int slot = (int) handle;
        Object current = table.laHandleObject(slot);
        for (;;) {
            if (current instanceof CompactEntry && ((CompactEntry) current).handle == handle) {
                return (CompactEntry) current;
            }
            long[] page = table.slotPage(slot);
            int at = table.valueIndex(slot);
            CompactEntry fresh = new CompactEntry(cache, handle, CompactSlots.keyOf(CompactSlots.lvMeta(page, at)), page[at]);
            Object now = table.casHandleObject(slot, current, fresh);
            if (now == fresh) {
                return fresh;
            }
            current = now;
        }
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
