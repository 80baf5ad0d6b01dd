package org.mbcache.stress;

import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.VALUE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.I_Result;

/**
 * A batch lookup vs close (compact layout): {@code findFirstHandles} of a cached key while another
 * thread closes the cache. The batch checks once per call that the cache is open: before its first
 * key, and after its last where a key missed. A batch that overlaps {@code close()} finds the pair
 * (it ran before the close emptied the chain) or says the cache is closed; it never answers a miss
 * for a pair that was cached until the close, which a single {@code findFirstHandle} does not
 * either.
 *
 * <p>Result: {@code r1} = the pairs the batch found (1), a miss (0), or the cache is closed (-1).
 */
@JCStressTest
@Outcome(id = "1", expect = ACCEPTABLE, desc = "The batch found the pair before the close.")
@Outcome(id = "-1", expect = ACCEPTABLE, desc = "The batch was told the cache is closed.")
@Outcome(expect = FORBIDDEN, desc = "A miss of a pair that was cached until the close.")
@State
public class BatchLookupVsClose extends SlotRace {
    private final int[] keys = {KEY};
    private final long[] handles = new long[1];

    /** A cache holding the pair, unheld. */
    public BatchLookupVsClose() {
        cache.create(KEY, VALUE, true);
    }

    /** Looks the key up in a batch of one (what it found stays held: the close drops it). */
    @Actor
    public void reader(I_Result r) {
        try {
            r.r1 = compact.findFirstHandles(keys, handles);
        } catch (IllegalStateException closed) {
            r.r1 = -1;
        }
    }

    /** Closes the cache. */
    @Actor
    public void closer() {
        cache.close();
    }
}
