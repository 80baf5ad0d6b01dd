package org.mbcache.stress;

import org.mbcache.CacheEntry;
import org.mbcache.CompactMbCache;
import org.mbcache.DedupCache;
import org.mbcache.HotEntries;
import org.mbcache.testing.Backend;
import org.mbcache.testing.MemoryPressureSignal;

/**
 * The state every stress test starts from: one fresh, small cache of one backend, plus the helpers
 * the tests share to turn entries into comparable result values.
 *
 * <p>Each JCStress test in this package is an outer class that carries the {@code @Outcome}s and the
 * steps of one race, and one nested {@code @JCStressTest} per backend that binds those steps to actors.
 */
abstract class CacheRace {

    /*
     * JCStress's forks have 256 MB heaps, whose old generation stays over the pressure registry's
     * default 80 % after collections (their result arrays are large), and a pressure pass may free
     * any entry nobody holds: a race whose entries are unheld would then see a pair vanish that no
     * actor deleted. So every fork silences the signal before its first cache is built. The passes
     * themselves are tested in the library's unit tests, not raced here.
     */
    static {
        MemoryPressureSignal.silence();
    }

    /**
     * Releases a compact cache's handle; {@code false} if the cache refused it (no reference of the
     * handle's pair to give back: stale, or already released).
     */
    static boolean releaseAccepted(CompactMbCache compact, long handle) {
        try {
            compact.release(handle);
            return true;
        } catch (IllegalStateException refused) {
            return false;
        }
    }

    /** The cache under test; JCStress builds a new one for every trial. */
    final DedupCache cache;

    /**
     * Opens a fresh cache.
     *
     * @param backend the implementation under test
     */
    CacheRace(Backend backend) {
        this(backend.open());
    }

    /**
     * Races on a cache the test built itself (another bucket count, a chain cap).
     *
     * @param cache a fresh cache, which the test closes in its {@code @Arbiter}
     */
    CacheRace(DedupCache cache) {
        this.cache = cache;
    }

    /**
     * Caches the pair, reusable, and switches its entry to hot mode (the kernel port's per-stripe
     * reference cells, as after contended hits); nobody holds it afterwards. Kernel port only.
     */
    void createHot(int key, long value) {
        cache.create(key, value, true);
        CacheEntry entry = cache.get(key, value);
        if (entry == null || !HotEntries.makeHot(entry)) {
            throw new IllegalStateException("setup: the entry did not switch to hot mode");
        }
        cache.release(entry);
    }

    /** 1 if a lookup returned an entry, 0 if it returned {@code null}. */
    static int found(CacheEntry entry) {
        return entry == null ? 0 : 1;
    }

    /**
     * Result value for "the cache refused to take back a reference the test held": the entry was freed
     * (its count forced to zero) while somebody held it. Shown instead of {@code size()}.
     */
    static final int REFERENCE_LOST = -99;

    /**
     * Gives back the references the test holds (nulls are skipped), and reports whether the cache took
     * them all. A refused release ({@link IllegalStateException}) means the entry was freed under its
     * holder; the tests turn that into the {@link #REFERENCE_LOST} outcome rather than an error, so that
     * the broken interleaving shows in the results table.
     *
     * @return {@code true} if every release was accepted
     */
    boolean releaseAll(CacheEntry... held) {
        boolean accepted = true;
        for (CacheEntry entry : held) {
            if (entry != null) {
                try {
                    cache.release(entry);
                } catch (IllegalStateException refused) {
                    accepted = false;
                }
            }
        }
        return accepted;
    }

    /**
     * The arbiters' last count: gives back the references the test holds (nulls are skipped), then
     * answers {@code size()}, or {@link #REFERENCE_LOST} if the cache refused one of the releases (an
     * entry was freed under its holder).
     */
    int sizeAfterReleasing(CacheEntry... held) {
        return releaseAll(held) ? size() : REFERENCE_LOST;
    }

    /** Gives back a reference the test holds, if it holds one. */
    void releaseIfHeld(CacheEntry entry) {
        if (entry != null) {
            cache.release(entry);
        }
    }

    /** 1 if the pair is cached now (looked up and released again), 0 if not. */
    int isCached(int key, long value) {
        CacheEntry entry = cache.get(key, value);
        releaseIfHeld(entry);
        return found(entry);
    }

    /** 1 if {@code findFirst} of the key answers an entry now (released again), 0 if not. */
    int isKeyCached(int key) {
        CacheEntry entry = cache.findFirst(key);
        releaseIfHeld(entry);
        return found(entry);
    }

    /**
     * 1 if {@code get} of {@code held}'s pair answers an entry equal to {@code held} (a held entry is
     * still cached, not freed and replaced by a twin, which is not equal), 0 if it answers nothing or
     * another entry, -1 if nothing is held.
     */
    int stillCached(CacheEntry held) {
        if (held == null) {
            return -1;
        }
        CacheEntry again = cache.get(held.key(), held.value());
        releaseIfHeld(again);
        return held.equals(again) ? 1 : 0;
    }

    /** The cache's entry count, as an int result value (a negative count shows as negative). */
    int size() {
        return Math.toIntExact(cache.size());
    }
}
