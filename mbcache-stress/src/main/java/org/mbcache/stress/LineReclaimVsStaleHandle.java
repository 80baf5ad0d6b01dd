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
 * A stale handle vs the line reclaim that refills its slot (compact layout): in a one-line cache at
 * its bound with its line full ({@link LineReclaimRace}), a handle of the oldest entry V was taken
 * and released, so nobody holds V. One thread creates N, whose line reclaim claims V, retires its
 * slot (its generation advanced) and refills it with N at once, without the delay ring, then takes
 * a handle of N and holds it; the other reads the stale handle's key and releases it once more. The
 * slot changes occupant with nothing in between, so the generation alone tells V's handle from N's:
 * the handle must read V or read stale, never N, and its release must be refused whenever it runs,
 * never taking N's holder's reference.
 *
 * <p>Result: {@code r1} = N's create succeeded and N's handle was taken (1), or not (0);
 * {@code r2} = the stale handle read V's key (1: V not reclaimed yet), read stale
 * ({@link LineReclaimRace#STALE}), or read another key (-1); {@code r3} = the stale release was
 * refused (0) or accepted (1); {@code r4} = 1 if N took V's slot, N's holder's release is accepted,
 * V is gone, and the books hold ({@link LineReclaimRace#books}); else the first check that failed
 * (-6 N in another slot, -7 N's release refused, -8 V still cached, or the books' code).
 */
@JCStressTest
@Outcome(id = "1, 1, 0, 1", expect = ACCEPTABLE,
        desc = "The key read before the claim (V's, as a released handle's pair still cached reads); release refused.")
@Outcome(id = "1, 2, 0, 1", expect = ACCEPTABLE,
        desc = "The key read after the claim: stale (claimed, retired, or N's generation); release refused.")
@Outcome(expect = FORBIDDEN,
        desc = "The stale handle reading N, a stale release accepted (N's holder's reference taken), N not in V's "
                + "slot, V still cached, a leaked reference or broken chains.")
@State
public class LineReclaimVsStaleHandle extends StaleHandleInLineRace {
    /** The line full of seven pairs, V the oldest, a handle of V taken and released. */
    public LineReclaimVsStaleHandle() {
        super();
    }

    /** Creates N, whose line reclaim refills V's slot, and holds it. */
    @Actor
    public void reclaim(IIII_Result r) {
        boolean created = createNew() == 1;
        r.r1 = created && holdNew() ? 1 : 0;
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
