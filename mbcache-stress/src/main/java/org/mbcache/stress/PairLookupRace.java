package org.mbcache.stress;

import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
import static org.mbcache.stress.Keys.VALUE;
import static org.mbcache.stress.Keys.filler;

import org.mbcache.CacheEntry;
import org.openjdk.jcstress.infra.results.IIII_Result;
import org.mbcache.testing.Backend;

/**
 * The reader of the races that change a chain under a lookup ({@link LookupVsChainShift},
 * {@link LookupVsChainGrow}): it looks the pair under test P = ({@code KEY}, {@code VALUE}) up by
 * {@code get}, then by {@code findFirst} of its key, in a one-bucket cache where P is the newest
 * reusable entry of {@code KEY} throughout, and holds both answers until the arbiter.
 *
 * <p>P's neighbours (the fillers, and the entry {@link LookupVsChainShift} removes) are of
 * {@code OTHER_KEY} on the kernel port: P is then the only entry of its key in its bucket, so a scan
 * that steps over P's slot has nothing else to tell it the key may be there, and only the version
 * validation stands between it and a wrong miss. On the Caffeine backend, whose chains are the groups
 * of one key, they are of {@code KEY} (not reusable, so that P stays the newest reusable entry of
 * {@code KEY}): it is P's own group that changes.
 *
 * <p>Results it writes: {@code r1} = {@code get} found P (1) or not (0); {@code r2} = {@code findFirst}
 * returned P (1), nothing (0) or another entry (-1); {@code r4} = {@code size()} once both are
 * released, or -99 if the cache refused a release. {@code r3} is the writer's.
 */
abstract class PairLookupRace extends CacheRace {
    /** The key of P's neighbours: {@code OTHER_KEY} on the kernel port, {@code KEY} on Caffeine. */
    final int neighbourKey;
    private CacheEntry got;
    private CacheEntry first;

    /**
     * Opens a one-bucket cache of the backend ({@code bucketBits} 0: every key shares the chain).
     *
     * @param backend the implementation under test
     */
    PairLookupRace(Backend backend) {
        super(backend.open(0, Backend.MAX_ENTRIES, Runnable::run));
        neighbourKey = backend == Backend.CAFFEINE ? KEY : OTHER_KEY;
    }

    /**
     * Creates the {@code i}-th filler in P's chain, of the neighbours' key; reusable unless it shares
     * P's key (so that P stays the newest reusable entry of {@code KEY}).
     *
     * @return whether the filler was inserted
     */
    boolean createFiller(int i) {
        return cache.create(neighbourKey, filler(i), neighbourKey != KEY);
    }

    /**
     * Caches the chain of the shift races ({@link LookupVsChainShift}, {@link DuplicateVsChainShift}),
     * oldest first: O = (the neighbours' key, {@code OTHER_VALUE}), then P, then four fillers.
     */
    void createShiftedChain() {
        createShiftedChain(4);
    }

    /**
     * Caches O = (the neighbours' key, {@code OTHER_VALUE}), then P, then {@code fillers} fillers,
     * oldest first.
     */
    void createShiftedChain(int fillers) {
        createShiftedChain(0, fillers);
    }

    /**
     * Caches {@code first} fillers, then O = (the neighbours' key, {@code OTHER_VALUE}), then P,
     * then {@code fillers} more fillers, oldest first.
     */
    void createShiftedChain(int first, int fillers) {
        for (int i = 0; i < first; i++) {
            createFiller(i);
        }
        cache.create(neighbourKey, OTHER_VALUE, true);
        cache.create(KEY, VALUE, true);
        for (int i = first; i < first + fillers; i++) {
            createFiller(i);
        }
    }

    /**
     * The shift: {@code deleteOrGet} of O, which moves every newer entry one place.
     *
     * @return 1 if O was handed back (somebody held it), 0 if it was deleted
     */
    int removeOldest() {
        return removeNeighbour(OTHER_VALUE);
    }

    /**
     * {@code deleteOrGet} of the neighbour (the neighbours' key, {@code value}): O, or a filler.
     *
     * @return 1 if it was handed back (somebody held it), 0 if it was deleted
     */
    int removeNeighbour(long value) {
        CacheEntry returned = cache.deleteOrGet(neighbourKey, value);
        releaseIfHeld(returned);
        return found(returned);
    }

    /** The reader's actor: get of P, then findFirst of its key. */
    void lookUp(IIII_Result r) {
        got = cache.get(KEY, VALUE);
        r.r1 = found(got);
        first = cache.findFirst(KEY);
        r.r2 = first == null ? 0 : first.value() == VALUE ? 1 : -1;
    }

    /** The arbiter: releases what the reader holds, counts the entries and closes the cache. */
    void settle(IIII_Result r) {
        r.r4 = sizeAfterReleasing(got, first);
        cache.close();
    }
}
