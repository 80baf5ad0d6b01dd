package org.mbcache.stress;

import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
import static org.mbcache.stress.Keys.VALUE;

import org.mbcache.CompactMbCache;
import org.mbcache.FilterKeys;
import org.mbcache.LineReclaimCaches;

/**
 * The state of the line-reclaim races of {@link CompactMbCache}: one bucket, line reclaim forced on
 * ({@link LineReclaimCaches#oneLine}), bounded at its line's seven home slots, background passes
 * dropped. The line is filled with seven pairs of seven keys, V ({@code KEY}, {@code VALUE}) the
 * oldest, so the cache is at its bound with a full line: the next create of another key, N
 * ({@code OTHER_KEY}, {@code OTHER_VALUE}), reclaims the line's oldest entry that nobody holds and
 * that is not referenced (V, unless somebody holds it; else the second oldest; every slot is fresh,
 * never refilled in place, so may be) and refills its slot with N in the same critical section,
 * without a pool slot and without the delay ring.
 */
abstract class LineReclaimRace extends CacheRace {
    /** The line's home slots: the bound, and the pairs of the full line. */
    static final int LINE = FilterKeys.compactHomeSlots();
    /** The keys of the six pairs created after V (distinct from {@code KEY} and {@code OTHER_KEY}). */
    private static final int FILLER_KEY = 0x510E_527F;
    /** The result value of a handle whose key or value read stale ({@link IllegalStateException}). */
    static final int STALE = 2;

    final CompactMbCache compact;

    LineReclaimRace() {
        super(LineReclaimCaches.oneLine(LINE, 42));
        compact = (CompactMbCache) cache;
        for (int i = 0; i < LINE; i++) {
            if (!compact.create(keyOf(i), valueOf(i), true)) {
                throw new IllegalStateException("setup: pair " + i + " of the line was refused");
            }
        }
    }

    /** The key of the line's {@code i}-th oldest pair (0: V). */
    static int keyOf(int i) {
        return i == 0 ? KEY : FILLER_KEY + i;
    }

    /** The value of the line's {@code i}-th oldest pair (0: V). */
    static long valueOf(int i) {
        return i == 0 ? VALUE : Keys.filler(i);
    }

    /** Creates N, the create that finds the line full at the bound; 1 if it was cached, 0 if refused. */
    int createNew() {
        return compact.create(OTHER_KEY, OTHER_VALUE, true) ? 1 : 0;
    }

    /**
     * Which of the line's seven pairs left: 0 if none, {@code i + 1} if only the {@code i}-th oldest
     * (1: V, 2: the second oldest), minus the number that left if more than one did.
     */
    int leftTheLine() {
        int left = 0;
        int which = 0;
        for (int i = 0; i < LINE; i++) {
            if (!cached(keyOf(i), valueOf(i))) {
                left++;
                which = i + 1;
            }
        }
        return left <= 1 ? which : -left;
    }

    /**
     * The books once the race is over, before anything is deleted: 1 if the cache counts its bound,
     * the chains are consistent, N is cached and nobody holds it, and V, if cached, is held by nobody
     * either; else the first check that failed: -1 the count, -2 the chains, -3 N not cached, -4 N
     * still held (a reference leaked onto the refilled slot), -5 V still held.
     */
    int books() {
        if (size() != LINE) {
            return -1;
        }
        if (!LineReclaimCaches.chainsConsistent(compact)) {
            return -2;
        }
        int fresh = deletesCleanly(OTHER_KEY, OTHER_VALUE);
        if (fresh != 1) {
            return fresh == 0 ? -3 : -4;
        }
        return deletesCleanly(KEY, VALUE) == 2 ? -5 : 1;
    }

    /** Whether the pair is cached now (looked up by pair and released again). */
    boolean cached(int key, long value) {
        long handle = compact.getHandle(key, value);
        if (handle == CompactMbCache.NO_ENTRY) {
            return false;
        }
        compact.release(handle);
        return true;
    }

    /**
     * Whether the pair is cached with no reference but the cache's: 0 if it is not cached, 1 if a
     * {@code deleteOrGet} removes it at once, 2 if somebody still holds it.
     */
    int deletesCleanly(int key, long value) {
        if (!cached(key, value)) {
            return 0;
        }
        long held = compact.deleteOrGetHandle(key, value);
        if (held == CompactMbCache.NO_ENTRY) {
            return 1;
        }
        compact.release(held);
        return 2;
    }

    /**
     * What a handle reads as the line's {@code i}-th pair: 1 its own key and value, -1 another key
     * or value, {@link #STALE} if the cache answered that its pair is gone.
     */
    int reads(long handle, int i) {
        try {
            int key = compact.key(handle);
            long value = compact.value(handle);
            return key == keyOf(i) && value == valueOf(i) ? 1 : -1;
        } catch (IllegalStateException stale) {
            return STALE;
        }
    }

    /** Releases a handle; {@code false} if the cache refused (no reference of the handle's pair to give back). */
    boolean accepted(long handle) {
        return releaseAccepted(compact, handle);
    }
}
