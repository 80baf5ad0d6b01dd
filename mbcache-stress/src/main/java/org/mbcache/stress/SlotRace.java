package org.mbcache.stress;

import org.mbcache.CompactMbCache;
import org.mbcache.FreedSlots;
import org.mbcache.testing.Backend;

/**
 * The state of the slot-reuse races of {@link CompactMbCache}: one chain (bucketBits 0), and the
 * helpers that read the primitive API's answers as result values. A freed slot waits in the table's
 * delay ring for a ring's length of further frees before the free list hands it out; the races that
 * want the slot freed by their {@code deleteOrGet} reused by their next create move the ring's slots
 * to the free list first ({@link #reuseFreedSlot}, what a create does when no other slot is left), so
 * that the create takes the slot freed last.
 */
abstract class SlotRace extends CacheRace {
    final CompactMbCache compact;

    SlotRace() {
        super(CompactMbCache.builder().bucketBits(0).maxEntries(Backend.MAX_ENTRIES).executor(Runnable::run).build());
        compact = (CompactMbCache) cache;
    }

    /**
     * Caches the pair and returns a handle to it, taken and already released: the handle a caller
     * keeps after its release, stale once the pair leaves the cache.
     */
    long releasedHandle(int key, long value) {
        cache.create(key, value, true);
        long handle = compact.getHandle(key, value);
        compact.release(handle);
        return handle;
    }

    /**
     * Whether the pair is cached with no reference but the cache's: 0 if it is not cached, 1 if a
     * {@code deleteOrGet} removes it at once, 2 if somebody still holds it (a leaked reference).
     */
    int deletesCleanly(int key, long value) {
        long handle = compact.getHandle(key, value);
        if (handle == CompactMbCache.NO_ENTRY) {
            return 0;
        }
        compact.release(handle);
        long held = compact.deleteOrGetHandle(key, value);
        if (held == CompactMbCache.NO_ENTRY) {
            return 1;
        }
        compact.release(held);
        return 2;
    }

    /**
     * Moves the delay ring's slots to the free list, the one freed last on top: the next create takes
     * it ({@link FreedSlots#reuseNext}).
     */
    void reuseFreedSlot() {
        FreedSlots.reuseNext(compact);
    }

    /** Releases a handle; {@code false} if the cache refused (the reference was lost). */
    boolean accepted(long handle) {
        return releaseAccepted(compact, handle);
    }
}
