package org.mbcache;

/**
 * What every kernel-port entry handed out is: a (key, value) pair, copied into the object when it
 * is made, so that both stay readable after the entry is released or has left the cache.
 * {@link ListEntry} (the list layout's entry itself) and {@link CompactEntry} (a view of a compact
 * slot's handle) add the reference counting.
 */
abstract class CachedPair implements CacheEntry {
    /** The key; a field, not a call, for the chain walks that compare it. */
    final int key;
    /** The value; a field, for the same walks. */
    final long value;

    CachedPair(int key, long value) {
        this.key = key;
        this.value = value;
    }

    @Override
    public final int key() {
        return key;
    }

    @Override
    public final long value() {
        return value;
    }
}
