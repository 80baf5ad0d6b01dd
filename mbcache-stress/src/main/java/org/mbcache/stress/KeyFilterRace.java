package org.mbcache.stress;

import static org.mbcache.stress.Keys.KEY;

import org.mbcache.FilterKeys;
import org.mbcache.testing.Backend;

/**
 * The state of the key-filter races ({@link FilteredMissVsCreate}, {@link FilterRebuildVsLookup}): a
 * one-bucket kernel-port cache ({@code bucketBits} 0) with a fixed hash seed, and {@link #DECOY}, a
 * key that shares {@code KEY}'s bit in the head word's filter but not its bits in the wide filter,
 * so that with the decoy cached a lookup of an absent {@code KEY} passes the first filter and is
 * turned away by the second. Kernel port only (the compact layout, whose filters take other bits,
 * has a decoy of its own): the Caffeine backend has no key filters.
 */
abstract class KeyFilterRace extends CacheRace {

    /** The caches' hash seed: the decoy is chosen for it. */
    static final long SEED = 0x5EED_F117_E75L;

    /** The decoy key (see the class comment). */
    static final int DECOY = FilterKeys.headTwinOf(KEY, SEED);

    /** A fresh, empty one-bucket kernel-port cache with {@link #SEED}. */
    KeyFilterRace() {
        this(Backend.MBCACHE_REQUEST_LIST);
    }

    /**
     * A fresh, empty one-bucket cache of {@code backend} with {@link #SEED}.
     *
     * @param backend a backend with key filters (the kernel port, either layout)
     */
    KeyFilterRace(Backend backend) {
        super(backend.open(0, Backend.MAX_ENTRIES, Runnable::run, SEED));
    }
}
