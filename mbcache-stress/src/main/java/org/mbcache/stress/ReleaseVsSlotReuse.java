package org.mbcache.stress;

import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
import static org.mbcache.stress.Keys.VALUE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.mbcache.CompactMbCache;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * Release vs reuse (compact layout): the last holder releases a pair while another thread deletes it
 * and creates another value of the key, which takes the freed slot (the delay ring moved to the
 * free list first, {@link SlotRace#reuseFreedSlot}). The release must act on the
 * old pair (its generation), and the new pair must start with the cache's reference alone.
 *
 * <p>Result: {@code r1} = the release was accepted (1) or refused (-1); {@code r2} = the delete
 * handed the pair back (2: the holder had not released yet) or removed it and the create succeeded
 * (1); {@code r3} = {@code size()}; {@code r4} = the other value is not cached (0), deletes at once
 * (1), or is still held (2: a leaked reference).
 */
@JCStressTest
@Outcome(id = "1, 2, 1, 0", expect = ACCEPTABLE, desc = "Delete first: the pair is handed back, nothing reused.")
@Outcome(id = "1, 1, 1, 1", expect = ACCEPTABLE, desc = "Release first: the pair is deleted, its slot's new pair is clean.")
@Outcome(expect = FORBIDDEN, desc = "A refused release, a held pair deleted, or a leaked reference.")
@State
public class ReleaseVsSlotReuse extends SlotRace {
    private final long held;

    /** A cache holding the pair, held by the first actor. */
    public ReleaseVsSlotReuse() {
        cache.create(KEY, VALUE, true);
        held = compact.getHandle(KEY, VALUE);
    }

    /** The last holder lets go. */
    @Actor
    public void release(IIII_Result r) {
        r.r1 = accepted(held) ? 1 : -1;
    }

    /** Deletes the pair unless held, then reuses its slot. */
    @Actor
    public void reuse(IIII_Result r) {
        long got = compact.deleteOrGetHandle(KEY, VALUE);
        if (got != CompactMbCache.NO_ENTRY) {
            compact.release(got);
            r.r2 = 2;
        } else {
            reuseFreedSlot();
            r.r2 = compact.create(KEY, OTHER_VALUE, true) ? 1 : -1;
        }
    }

    /** Counts, checks the other value's references, closes. */
    @Arbiter
    public void check(IIII_Result r) {
        r.r3 = size();
        r.r4 = deletesCleanly(KEY, OTHER_VALUE);
        cache.close();
    }
}
