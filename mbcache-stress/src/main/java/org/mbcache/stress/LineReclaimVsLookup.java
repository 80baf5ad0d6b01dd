package org.mbcache.stress;

import static org.mbcache.stress.Keys.KEY;
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
 * A lookup vs the line reclaim of its entry (compact layout): in a one-line cache at its bound with
 * its line full ({@link LineReclaimRace}), one thread creates N, whose line reclaim claims the line's
 * oldest entry V, removes it and refills its slot with N in one critical section; the other looks V
 * up by key ({@code findFirstHandle}), reads the handle's key and value, and releases it. A lookup
 * holding V when the claim comes to it must keep it (the claim needs the cache's reference alone:
 * the second oldest goes instead), and a handle must never read N, nor read stale while held; a
 * lookup that misses V must find it gone.
 *
 * <p>How a lookup meets the create: under the bucket's bit, it runs wholly before or after the
 * critical section. Optimistic, it may read V's word before the claim and CAS after it: the CAS
 * compares the whole word (key and generation), so it fails on the claimed or refilled word, the
 * walk reads N's key there and goes on, and the version, moved by the critical section, sends it to
 * the bit, where V is gone. If its CAS came first, the claim finds V held and passes over it; the
 * version then fails to validate, the lookup gives its reference back and finds V again under the
 * bit.
 *
 * <p>Result: {@code r1} = the lookup found V and read its key and value, and its release was
 * accepted (1), found nothing (0), read another pair's key or value (-1), read stale ({@code 2}: V
 * left under its holder), or read V but had its release refused (-3); {@code r2} = N's create
 * succeeded (1) or was refused (0); {@code r3} = which of the line's seven pairs left
 * ({@link LineReclaimRace#leftTheLine}: 1 V, 2 the second oldest, 0 none, negative if more than
 * one); {@code r4} = the books ({@link LineReclaimRace#books}: 1 if the count is the bound, the
 * chains are consistent, and N and V are held by nobody).
 */
@JCStressTest
@Outcome(id = "1, 1, 1, 1", expect = ACCEPTABLE,
        desc = "Lookup first: V found, read and released before the claim; then V was reclaimed, N took its slot.")
@Outcome(id = "1, 1, 2, 1", expect = ACCEPTABLE,
        desc = "V held when the claim came to it (or the lookup's CAS came first and it retried under the bit): "
                + "V passed over, the second oldest reclaimed; V read its own pair throughout.")
@Outcome(id = "0, 1, 1, 1", expect = ACCEPTABLE,
        desc = "Create first: V reclaimed and its slot refilled with N; the lookup finds V gone.")
@Outcome(id = "0, 1, 2, 1", expect = FORBIDDEN, desc = "V missed while it stayed cached.")
@Outcome(expect = FORBIDDEN,
        desc = "A handle of V reading N or stale, a refused release, N not cached, two entries gone or none, "
                + "a leaked reference, or broken chains.")
@State
public class LineReclaimVsLookup extends LineReclaimRace {
    /** The line full of seven pairs, V the oldest; the cache at its bound. */
    public LineReclaimVsLookup() {
    }

    /** Creates N: the line reclaim claims the oldest entry nobody holds and refills its slot. */
    @Actor
    public void create(IIII_Result r) {
        r.r2 = createNew();
    }

    /** Looks V up by key, reads the handle's key and value, releases it. */
    @Actor
    public void lookup(IIII_Result r) {
        long handle = compact.findFirstHandle(KEY);
        if (handle == CompactMbCache.NO_ENTRY) {
            r.r1 = 0;
            return;
        }
        int read = reads(handle, 0);
        boolean released = accepted(handle);
        r.r1 = read == 1 && !released ? -3 : read;
    }

    /** Which pair left, then the books; closes. */
    @Arbiter
    public void check(IIII_Result r) {
        r.r3 = leftTheLine();
        r.r4 = books();
        cache.close();
    }
}
