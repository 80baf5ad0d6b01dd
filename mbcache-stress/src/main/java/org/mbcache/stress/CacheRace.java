package org.mbcache.stress;

import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;
import org.mbcache.testing.Backend;

/**
 * The state every stress test starts from: one fresh, small cache of one backend, plus the helpers
 * the tests share to turn entries into comparable result values.
 *
 * <p>Each JCStress test in this package is an outer class that carries the {@code @Outcome}s and the
 * steps of one race, and one nested {@code @JCStressTest} per backend that binds those steps to actors.
 */
abstract class CacheRace {

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
     * 1 if {@code get} of {@code held}'s pair answers {@code held} itself (a held entry is still cached,
     * not freed and replaced by a twin), 0 if it answers nothing or another entry, -1 if nothing is held.
     */
    int stillCached(CacheEntry held) {
        if (held == null) {
            return -1;
        }
        CacheEntry again = cache.get(held.key(), held.value());
        releaseIfHeld(again);
        return again == held ? 1 : 0;
    }

    /**
     * Result value for "a reclaim pass freed entries during the trial": the memory-pressure
     * registry runs passes in every open cache when a collection leaves the old generation 80% full,
     * which JCStress's forks (256 MB heaps, full of result arrays) reach. A pass may free any entry
     * nobody holds, so a test whose entries are unheld reports this instead of what it checks.
     */
    static final int RECLAIMED = -1;

    /**
     * The arbiter's check of a test whose entries nobody holds: {@code check} as computed, or
     * {@link #RECLAIMED} if a reclaim pass freed anything. Read after the check: a pass that freed an
     * entry before the check counted it before this reads the counter (both under the LRU lock).
     */
    int unlessReclaimed(int check) {
        return cache.stats().entriesReclaimed() > 0 ? RECLAIMED : check;
    }

    /** The cache's entry count, as an int result value (a negative count shows as negative). */
    int size() {
        return Math.toIntExact(cache.size());
    }
}
