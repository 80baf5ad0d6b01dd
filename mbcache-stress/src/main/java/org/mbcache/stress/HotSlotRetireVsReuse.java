package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.VALUE;

import org.mbcache.CompactMbCache;
import org.mbcache.HotEntries;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * A hit on a hot slot vs the retirement of its cells and the reuse of the slot (compact layout only:
 * an entry object is never reused). The claim of {@code deleteOrGet} retires the hot slot's cells
 * before the slot goes back to the free list, and the next create (one chain, the delay ring moved
 * to the free list first, {@link SlotRace#reuseFreedSlot}) gives the slot to a new pair of the same
 * key. A hit that read the old occupant's word either holds the old pair (the delete then hands it over and the new pair takes another slot) or
 * fails; the new pair starts cold, with no cells and no unit of the hit's, and every cell is retired
 * once both pairs are deleted.
 *
 * <p>The pair P = ({@code KEY}, {@code VALUE}) is cached, hot, held by nobody; the new pair is
 * ({@code KEY}, {@code VALUE + 1}). Result: {@code r1} = the hit ({@code getHandle} of P) returned P
 * (1) or nothing (0); {@code r2} = the delete removed P (1) or handed it over (0); {@code r3} = the
 * new pair is cached and a {@code deleteOrGet} removes it at once (1; 2: somebody holds it, a leaked
 * unit; 0: not cached); {@code r4} = after the hit's release, P is cached and removed at once (1) or
 * gone (0), or -1 if any slot still has cells once both pairs are deleted, -99 if the hit's release
 * was refused.
 */
@JCStressTest
@Outcome(id = "1, 0, 1, 1", expect = ACCEPTABLE, desc = "The hit first: the delete hands P over, the new pair gets another slot.")
@Outcome(id = "0, 1, 1, 0", expect = ACCEPTABLE, desc = "The delete first: the hit misses; the new pair reuses the slot, cold.")
@Outcome(expect = FORBIDDEN, desc = "A unit, a reference or cells carried over to the slot's next occupant, or a held pair removed.")
@State
public class HotSlotRetireVsReuse extends SlotRace {
    long held = CompactMbCache.NO_ENTRY;

    /** One chain holding P, hot. */
    public HotSlotRetireVsReuse() {
        compact.create(KEY, VALUE, true);
        long handle = compact.getHandle(KEY, VALUE);
        if (!HotEntries.makeHot(compact, handle)) {
            throw new IllegalStateException("setup: the slot did not switch to hot mode");
        }
        compact.release(handle);
    }

    /** A hit on P, held. */
    @Actor
    public void user(IIII_Result r) {
        held = compact.getHandle(KEY, VALUE);
        r.r1 = held == CompactMbCache.NO_ENTRY ? 0 : 1;
    }

    /** Deletes P (a handed-over reference released at once), then creates the new pair. */
    @Actor
    public void reuser(IIII_Result r) {
        long handed = compact.deleteOrGetHandle(KEY, VALUE);
        r.r2 = handed == CompactMbCache.NO_ENTRY ? 1 : 0;
        if (handed != CompactMbCache.NO_ENTRY) {
            compact.release(handed);
        }
        reuseFreedSlot();
        compact.create(KEY, VALUE + 1, true);
    }

    /** Checks the new pair's count, releases the hit, checks P, that no cells are left, and closes. */
    @Arbiter
    public void check(IIII_Result r) {
        r.r3 = deletesCleanly(KEY, VALUE + 1);
        if (held != CompactMbCache.NO_ENTRY && !accepted(held)) {
            r.r4 = REFERENCE_LOST;
        } else {
            r.r4 = deletesCleanly(KEY, VALUE);
            if (HotEntries.hotEntries(compact) != 0) {
                r.r4 = -1;
            }
        }
        compact.close();
    }
}
