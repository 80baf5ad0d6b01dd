package org.mbcache.stress;

import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
import static org.mbcache.stress.Keys.VALUE;

import org.mbcache.CompactMbCache;
import org.mbcache.FreedSlots;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * The state of the races of a released handle of V against a reuse in place of V's slot by N
 * ({@link LineReclaimVsStaleHandle}, {@link PassFreeVsStaleHandle}): the line full of seven pairs,
 * V the oldest, a handle of V taken and released. Each race's reusing actor ends by taking N's
 * handle ({@link #holdNew}); the other actor is {@link #useStale}, the arbiter {@link #check}.
 */
abstract class StaleHandleInLineRace extends LineReclaimRace {
    private final long stale;
    private long fresh = CompactMbCache.NO_ENTRY;

    StaleHandleInLineRace() {
        stale = compact.getHandle(KEY, VALUE);
        compact.release(stale);
    }

    /** Takes a handle of N and keeps it; whether N is cached. */
    boolean holdNew() {
        fresh = compact.getHandle(OTHER_KEY, OTHER_VALUE);
        return fresh != CompactMbCache.NO_ENTRY;
    }

    /** Reads the stale handle's key into {@code r2} (1 V's, -1 another, {@link #STALE}), then releases it once more ({@code r3}). */
    void useStale(IIII_Result r) {
        int key;
        try {
            key = compact.key(stale) == KEY ? 1 : -1;
        } catch (IllegalStateException gone) {
            key = STALE;
        }
        r.r2 = key;
        r.r3 = accepted(stale) ? 1 : 0;
    }

    /** N's holder releases; V must be gone; then the books, into {@code r4}; closes. */
    void check(IIII_Result r) {
        r.r4 = FreedSlots.slotOf(fresh) != FreedSlots.slotOf(stale) ? -6 : !accepted(fresh) ? -7
                : cached(KEY, VALUE) ? -8 : books();
        cache.close();
    }
}
