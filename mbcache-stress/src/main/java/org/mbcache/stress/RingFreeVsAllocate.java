package org.mbcache.stress;

import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
import static org.mbcache.stress.Keys.VALUE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.mbcache.CompactMbCache;
import org.mbcache.FilterKeys;
import org.mbcache.FreedSlots;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * A free through the delay ring vs an allocate (compact layout): one thread deletes pair A, whose
 * slot goes into the ring and displaces the slot X freed a ring's length of frees earlier, which it
 * pushes onto the free list; the other creates pair B, whose allocate pops the free list's top: X if
 * the push came first, else the slot Y already there. The free list's push and pop race on its head;
 * neither A's slot, held back by the ring, nor a slot of another live pair may be handed out, and no
 * slot may be lost or handed out twice.
 *
 * <p>Setup, in the one bucket: seven fillers fill its line's home slots and stay, so that every
 * other pair goes to a pool slot; A in the first pool slot; then one ring's length plus one pairs of
 * {@code OTHER_KEY}, each created and deleted in turn, in the pool slots after A's: the ring is
 * full, the free list holds the first of them (Y, pushed by the last delete), and the ring's next
 * place holds the second (X). A stale handle of each slot's previous pair is kept. The arbiter
 * creates pair D, which takes the other of X and Y.
 *
 * <p>Result: {@code r1} = A's delete removed it (1); {@code r2} = B's slot (2 = Y, 3 = X; 1 would be
 * A's, handed out at once; -1 any other); {@code r3} = D's slot is the other of X and Y (1) or not
 * (0); {@code r4} = 1 if B and D read their own values and are each held once, the stale handles of
 * A, X and Y are refused, and the free slots plus the live pairs are every slot of the table; else
 * the first check that failed (-1 to -5; -5: the setup's pairs did not spread over the pool, as a
 * ring that delays nothing leaves them).
 */
@JCStressTest
@Outcome(id = "1, 2, 1, 1", expect = ACCEPTABLE, desc = "The allocate popped Y before the free pushed X; D took X.")
@Outcome(id = "1, 3, 1, 1", expect = ACCEPTABLE, desc = "The free pushed X first and the allocate popped it; D took Y.")
@Outcome(expect = FORBIDDEN, desc = "A's slot handed out at once, a slot shared, lost or stale, or a reference lost.")
@State
public class RingFreeVsAllocate extends SlotRace {
    private static final long D_VALUE = VALUE + 2;
    private static final long FILLERS = 1_000_000;

    private final long staleA;
    private final long staleY;
    private final long staleX;
    private long b = CompactMbCache.NO_ENTRY;

    /** The line full, A in the first pool slot, the ring full, Y on the free list, X next in the ring. */
    public RingFreeVsAllocate() {
        for (int i = 0; i < FilterKeys.compactHomeSlots(); i++) {
            compact.create(OTHER_KEY, FILLERS + i, true);
        }
        staleA = releasedHandle(KEY, VALUE);
        int ring = FreedSlots.ringSize(compact);
        long y = CompactMbCache.NO_ENTRY;
        long x = CompactMbCache.NO_ENTRY;
        for (int i = 0; i <= ring; i++) {
            long handle = releasedHandle(OTHER_KEY, i);
            if (i == 0) {
                y = handle;
            } else if (i == 1) {
                x = handle;
            }
            compact.deleteOrGetHandle(OTHER_KEY, i);
        }
        int slotA = FreedSlots.slotOf(staleA);
        int slotX = FreedSlots.slotOf(x);
        int slotY = FreedSlots.slotOf(y);
        boolean spread = slotY != slotA && slotX != slotA && slotX != slotY;
        staleY = spread ? y : CompactMbCache.NO_ENTRY; // not spread: a ring that delays nothing (-5 below)
        staleX = spread ? x : CompactMbCache.NO_ENTRY;
    }

    /** Deletes A: its slot into the ring, X out of it onto the free list. */
    @Actor
    public void free(IIII_Result r) {
        r.r1 = compact.deleteOrGetHandle(KEY, VALUE) == CompactMbCache.NO_ENTRY ? 1 : -1;
    }

    /** Creates B and holds it. */
    @Actor
    public void allocate(IIII_Result r) {
        compact.create(KEY, OTHER_VALUE, true);
        b = compact.getHandle(KEY, OTHER_VALUE);
        r.r2 = slotCode(b);
    }

    /** Creates D, then checks both pairs, the stale handles and the slot accounting; closes. */
    @Arbiter
    public void check(IIII_Result r) {
        compact.create(KEY, D_VALUE, true);
        long d = compact.getHandle(KEY, D_VALUE);
        int bCode = slotCode(b);
        int dCode = slotCode(d);
        r.r3 = (bCode == 2 && dCode == 3) || (bCode == 3 && dCode == 2) ? 1 : 0;
        r.r4 = check(d);
        cache.close();
    }

    /** 1 for A's slot, 2 for Y's, 3 for X's, -1 for any other or none. */
    private int slotCode(long handle) {
        int slot = FreedSlots.slotOf(handle);
        return handle == CompactMbCache.NO_ENTRY ? -1 : slot == FreedSlots.slotOf(staleA) ? 1
                : slot == FreedSlots.slotOf(staleY) ? 2 : slot == FreedSlots.slotOf(staleX) ? 3 : -1;
    }


    /** {@code r4}: 1, or the first check that failed (see the class comment). */
    private int check(long d) {
        if (b == CompactMbCache.NO_ENTRY || d == CompactMbCache.NO_ENTRY
                || compact.value(b) != OTHER_VALUE || compact.value(d) != D_VALUE) {
            return -1;
        }
        if (staleX == CompactMbCache.NO_ENTRY || staleY == CompactMbCache.NO_ENTRY) {
            return -5;
        }
        if (accepted(staleA) || accepted(staleX) || accepted(staleY)) {
            return -2;
        }
        if (FreedSlots.freeSlots(compact) + compact.size() != FreedSlots.capacity(compact)) {
            return -3;
        }
        boolean once = accepted(b) && accepted(d);
        return once && deletesCleanly(KEY, OTHER_VALUE) == 1 && deletesCleanly(KEY, D_VALUE) == 1 ? 1 : -4;
    }
}
