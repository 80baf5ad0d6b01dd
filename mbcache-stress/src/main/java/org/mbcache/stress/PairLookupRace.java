package org.mbcache.stress;

import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_KEY;
import static org.mbcache.stress.Keys.VALUE;
import static org.mbcache.stress.Keys.filler;

import org.mbcache.CacheEntry;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * The reader of the races that change a chain under a lookup ({@link LookupVsChainShift},
 * {@link LookupVsChainGrow}): it looks the pair under test P = ({@code KEY}, {@code VALUE}) up by
 * {@code get}, then by {@code findFirst} of its key, in a one-bucket cache where P is the newest
 * reusable entry of {@code KEY} throughout, and holds both answers until the arbiter.
 *
 * <p>Results it writes: {@code r1} = {@code get} found P (1) or not (0); {@code r2} = {@code findFirst}
 * returned P (1), nothing (0) or another entry (-1); {@code r4} = {@code size()} once both are
 * released, or -99 if the cache refused a release. {@code r3} is the writer's.
 */
abstract class PairLookupRace extends CacheRace {
    private CacheEntry got;
    private CacheEntry first;

    /**
     * Opens a one-bucket cache of the backend ({@code bucketBits} 0: every key shares the chain).
     *
     * @param backend the implementation under test
     */
    PairLookupRace(Backend backend) {
        super(backend.open(0, Backend.MAX_ENTRIES, Runnable::run));
    }

    /**
     * Creates the {@code i}-th filler in P's chain: alternately of {@code OTHER_KEY} (reusable, so a
     * lookup of {@code KEY} scans past it) and of {@code KEY} (not reusable, so P stays the newest
     * reusable entry of {@code KEY}).
     *
     * @return whether the filler was inserted
     */
    boolean createFiller(int i) {
        return cache.create(i % 2 == 0 ? OTHER_KEY : KEY, filler(i), i % 2 == 0);
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
        r.r4 = releaseAll(got, first) ? size() : REFERENCE_LOST;
        cache.close();
    }
}
