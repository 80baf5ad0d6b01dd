package org.mbcache.stress;

import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.VALUE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.mbcache.CompactMbCache;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * A delete vs close (compact layout): the pair of a released handle is deleted while another
 * thread closes the cache and then asks the handle's accessors. A delete that removed the pair did
 * so before close() took the chain's bit, so once close() has returned the handle must read stale
 * ({@code reusable} false, {@code value} refused); a pair close() found still cached stays readable
 * through the handle, as every pair close() kills does.
 *
 * <p>Result: {@code r1} = the delete removed the pair (1) or found the cache closed (0);
 * {@code r2} = after close(), the handle's {@code reusable()} (1 true, 0 false); {@code r3} = after
 * close(), {@code value()} answered (1) or was refused (0).
 */
@JCStressTest
@Outcome(id = "1, 0, 0", expect = ACCEPTABLE, desc = "Deleted before the close: the handle is stale after it.")
@Outcome(id = "0, 1, 1", expect = ACCEPTABLE, desc = "Closed first: the delete was refused, the killed pair stays readable.")
@Outcome(expect = FORBIDDEN, desc = "A pair deleted before close() read as live after it, or a delete refused with the pair gone.")
@State
public class DeleteVsClose extends SlotRace {
    private final long handle;

    /** A cache holding the pair, whose handle was taken and released. */
    public DeleteVsClose() {
        handle = releasedHandle(KEY, VALUE);
    }

    /** Deletes the pair. */
    @Actor
    public void delete(III_Result r) {
        try {
            r.r1 = compact.deleteOrGetHandle(KEY, VALUE) == CompactMbCache.NO_ENTRY ? 1 : -1;
        } catch (IllegalStateException closed) {
            r.r1 = 0;
        }
    }

    /** Closes the cache, then reads the handle. */
    @Actor
    public void closeThenRead(III_Result r) {
        cache.close();
        r.r2 = compact.reusable(handle) ? 1 : 0;
        try {
            compact.value(handle);
            r.r3 = 1;
        } catch (IllegalStateException stale) {
            r.r3 = 0;
        }
    }
}
