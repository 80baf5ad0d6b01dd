package org.mbcache.stress;

import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
import static org.mbcache.stress.Keys.VALUE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.mbcache.CompactMbCache;
import org.mbcache.FreedSlots;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * A stale handle's release vs the reuse of its slot (compact layout): a handle already released is
 * released again while another thread deletes the pair, creates another value of the key in the
 * same slot (the delay ring moved to the free list first, {@link SlotRace#reuseFreedSlot}) and
 * holds it. The stale release must be refused whenever it runs, and never take the
 * new holder's reference.
 *
 * <p>Result: {@code r1} = the stale release was refused (0) or accepted (1); {@code r2} = the new
 * pair took the old slot (1) or another (0); {@code r3} = the new holder's release was accepted (1)
 * or refused (-99); {@code r4} = the new pair then deletes at once (1) or is still held (2).
 */
@JCStressTest
@Outcome(id = "0, 1, 1, 1", expect = ACCEPTABLE, desc = "The stale release is refused; the new pair's counts are intact.")
@Outcome(id = "0, 0, 1, 1", expect = ACCEPTABLE, desc = "The same, the new pair in another slot.")
@Outcome(expect = FORBIDDEN, desc = "A stale release accepted, or the new holder's reference stolen.")
@State
public class StaleHandleVsSlotReuse extends SlotRace {
    private final long stale;
    private long fresh = CompactMbCache.NO_ENTRY;

    /** A cache holding the pair, whose handle was taken and released. */
    public StaleHandleVsSlotReuse() {
        stale = releasedHandle(KEY, VALUE);
    }

    /** Releases the stale handle once more. */
    @Actor
    public void staleRelease(IIII_Result r) {
        r.r1 = accepted(stale) ? 1 : 0;
    }

    /** Deletes the pair, creates another value of the key in its slot, and holds it. */
    @Actor
    public void reuse(IIII_Result r) {
        compact.deleteOrGetHandle(KEY, VALUE);
        reuseFreedSlot();
        compact.create(KEY, OTHER_VALUE, true);
        fresh = compact.getHandle(KEY, OTHER_VALUE);
        r.r2 = FreedSlots.slotOf(fresh) == FreedSlots.slotOf(stale) ? 1 : 0;
    }

    /** The new holder releases; then the new pair's references are checked; closes. */
    @Arbiter
    public void check(IIII_Result r) {
        r.r3 = fresh != CompactMbCache.NO_ENTRY && accepted(fresh) ? 1 : REFERENCE_LOST;
        r.r4 = deletesCleanly(KEY, OTHER_VALUE);
        cache.close();
    }
}
