package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * A stale handle vs a reclaim pass that gives its slot straight back to its bucket (compact layout):
 * in a one-line cache at its bound with its line full ({@link LineReclaimRace}), a handle of the
 * oldest entry V, in the line's first slot, was taken and released, so nobody holds V. One thread
 * runs a pass over one entry, which frees V and, the in-place clock allowing, gives its home slot
 * back to the bucket at once (its generation advanced, not resting in the delay ring), then creates
 * N, which takes that slot, and holds it; the other reads the stale handle's key and releases it
 * once more. The slot changes occupant with nothing in between but the pass's release store of the
 * advanced generation, so the generation alone tells V's handle from N's: the handle must read V or
 * read stale, never N, and its release must be refused whenever it runs.
 *
 * <p>Result: {@code r1} = the pass freed one entry, N's create succeeded and N's handle was taken
 * (1), or not (0); {@code r2} = the stale handle read V's key (1: V not freed yet), read stale
 * ({@link LineReclaimRace#STALE}), or read another key (-1); {@code r3} = the stale release was
 * refused (0) or accepted (1); {@code r4} = 1 if N took V's slot, N's holder's release is accepted,
 * V is gone, and the books hold ({@link LineReclaimRace#books}); else the first check that failed
 * (-6 N in another slot, -7 N's release refused, -8 V still cached, or the books' code).
 */
@JCStressTest
@Outcome(id = "1, 1, 0, 1", expect = ACCEPTABLE,
        desc = "The key read before the pass freed V; release refused.")
@Outcome(id = "1, 2, 0, 1", expect = ACCEPTABLE,
        desc = "The key read after the pass: stale (claimed, freed, or N's generation); release refused.")
@Outcome(expect = FORBIDDEN,
        desc = "The stale handle reading N, a stale release accepted (N's holder's reference taken), N not in V's "
                + "slot, V still cached, a leaked reference or broken chains.")
@State
public class PassFreeVsStaleHandle extends StaleHandleInLineRace {
    /** The line full of seven pairs, V the oldest, a handle of V taken and released. */
    public PassFreeVsStaleHandle() {
        super();
    }

    /** A pass over one entry (V, the hand's first), then creates N, which takes V's slot, and holds it. */
    @Actor
    public void passThenCreate(IIII_Result r) {
        boolean freed = compact.shrink(1) == 1;
        boolean created = createNew() == 1;
        r.r1 = freed && created && holdNew() ? 1 : 0;
    }

    /** Reads the stale handle's key, then releases it once more. */
    @Actor
    public void staleUse(IIII_Result r) {
        useStale(r);
    }

    /** N's holder releases; V must be gone; then the books; closes. */
    @Arbiter
    public void arbiter(IIII_Result r) {
        check(r);
    }
}
