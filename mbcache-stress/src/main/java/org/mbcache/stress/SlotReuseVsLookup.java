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
 * Lookup vs free-and-reuse of its slot (compact layout): {@code getHandle} of a pair races a
 * {@code deleteOrGet} of the pair followed by a create of another value of the same key, which takes
 * the freed slot (the delay ring moved to the free list first, {@link SlotRace#reuseFreedSlot}). The
 * lookup may read the slot's index before the delete and its meta word after the reuse; it must
 * never hand out the new pair for the old one, nor leave a reference on it.
 *
 * <p>Result: {@code r1} = the lookup found the pair (1), nothing (0), or a wrong one (-1);
 * {@code r2} = the delete handed the held pair back (2) or removed it and the create of the other
 * value succeeded (1); {@code r3} = {@code size()} once the lookup released (-99 if its release was
 * refused); {@code r4} = the other value is not cached (0), deletes at once (1), or is still held
 * by somebody (2: a reference leaked onto the slot's new pair).
 */
@JCStressTest
@Outcome(id = "1, 2, 1, 0", expect = ACCEPTABLE, desc = "Lookup first: the delete hands the held pair back, no reuse.")
@Outcome(id = "0, 1, 1, 1", expect = ACCEPTABLE, desc = "Delete first: the lookup finds nothing, the slot's new pair is clean.")
@Outcome(expect = FORBIDDEN, desc = "A wrong pair, a held pair deleted, a lost or a leaked reference.")
@State
public class SlotReuseVsLookup extends SlotRace {
    private long found = CompactMbCache.NO_ENTRY;

    /** A cache holding the pair. */
    public SlotReuseVsLookup() {
        cache.create(KEY, VALUE, true);
    }

    /** Looks the pair up and holds it. */
    @Actor
    public void lookup(IIII_Result r) {
        found = compact.getHandle(KEY, VALUE);
        r.r1 = found == CompactMbCache.NO_ENTRY ? 0
                : compact.key(found) == KEY && compact.value(found) == VALUE ? 1 : -1;
    }

    /** Deletes the pair unless held, then reuses its slot for another value of the key. */
    @Actor
    public void reuse(IIII_Result r) {
        long held = compact.deleteOrGetHandle(KEY, VALUE);
        if (held != CompactMbCache.NO_ENTRY) {
            compact.release(held);
            r.r2 = 2;
        } else {
            reuseFreedSlot();
            r.r2 = compact.create(KEY, OTHER_VALUE, true) ? 1 : -1;
        }
    }

    /** Releases the lookup's handle, counts, checks the other value's references, closes. */
    @Arbiter
    public void check(IIII_Result r) {
        boolean released = found == CompactMbCache.NO_ENTRY || accepted(found);
        r.r3 = released ? size() : REFERENCE_LOST;
        r.r4 = deletesCleanly(KEY, OTHER_VALUE);
        cache.close();
    }
}
