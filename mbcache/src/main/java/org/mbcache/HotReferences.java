package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.mbcache.internal.StripedStatistics;

/**
 * Hot mode: the reference counting of a heavily contended entry, shared by both kernel-port layouts
 * ({@link ListEntry}'s {@code int} state word, and a {@link CompactMbCache} slot's meta word, the
 * state in its low 32 bits under the key). Each layout keeps its cold protocol (one CAS loop on its
 * word per operation) where it is, and calls in here only for a word that has {@link #hot} set, or
 * to switch one. One instance per layout: the bit masks of its word. The word's home is a
 * {@link Host}; {@code at} names the word in it (the slot; ignored by an entry).
 *
 * <h2>The word</h2>
 *
 * Every layout's word carries a reference count ({@link #countMask}: the cache's reference plus one
 * per caller; zero exactly when the entry has left its chain, and zero is final for that entry),
 * {@link #waiters} (a thread waits in {@code waitUnused}), {@link #frozen} and {@link #hot}, and
 * flags this class never touches. A compact slot's word also carries its occupant's identity
 * ({@link #identity}: the key and the slot's generation), which a new pair in the slot changes:
 * every CAS here compares the whole word, so a CAS on a slot that got a new occupant fails, and a
 * word of another identity reads as dead ({@link #dead}).
 *
 * <h2>Switching</h2>
 *
 * An entry whose acquire or release CAS keeps failing (another thread wrote the word in between)
 * switches to hot mode, for the rest of its life (a {@code percpu_ref} that never goes back to
 * atomic mode until it dies). "Keeps failing" is a vote ({@code noteContention} of each layout): a
 * CAS failure alone is no sign (two threads meet on an entry by chance with uniform keys too), and
 * a contended hit's CAS fails only now and then, though every one of its hits moves the line. A
 * hot entry has cells ({@link Host#hotCells}): one {@code long} counter per stripe
 * ({@link StripedStatistics#stripeOfCurrentThread}, {@value #CELL_STRIDE} longs, 128 bytes, apart;
 * the first 128 bytes unused, so that no cell shares a line with the array's header). The host keeps
 * them where it finds them by the owner ({@link HotCellTable}). Invariant of a live hot entry:
 *
 * <pre>    callers' references = (count(word) - 1) + sum of the cells,   every cell &gt;= 0</pre>
 *
 * A hot hit adds 1 to its own stripe's cell and only reads the word, so threads that hit the same
 * entry write lines of their own. The count part of the word keeps the cache's reference and the
 * callers' references taken before the switch; nothing adds to it in hot mode.
 *
 * <p><b>Freezing.</b> Decisions that need the exact number of callers (a claim, the wait condition
 * of {@code waitUnused}, the wake-up check of a release while somebody waits, the last check
 * before calling a release an over-release, {@code findNext}'s check that the caller holds the
 * entry) CAS {@link #frozen} into the word (one freezer at a time: a thread that finds it set
 * waits until it is clear), sweep the cells, decide, and CAS it out again, or, for a successful
 * claim, CAS the word to count 0 and the bit out at once. While the bit is set, only the freezer
 * and a kill ({@code close()}) change the count (a release CASes the count down only from a word
 * without {@link #frozen}; a claim needs the freeze), hits wait before they add to a cell, and the
 * cells change only by releases, which decrease them, and by hits that had passed that wait before
 * the freeze ("in flight"). Nothing between freezing and thawing allocates, calls out or waits, so
 * the bit is always cleared again. A frozen word keeps its identity: a slot is reused only after a
 * claim, which needs the freeze, or never after a kill.
 *
 * <p><b>Memory ordering.</b> Every access to the word and to a cell that decides anything is a
 * volatile-mode {@link VarHandle} access (getVolatile, compareAndSet, getAndAdd), so all of them are
 * in the Java memory model's synchronization order, a total order consistent with each thread's
 * program order; every argument below is about that order. The cells are published (a volatile
 * store or CAS of the host) before the CAS that sets {@link #hot}, so whoever reads {@link #hot}
 * from the word finds the cells, or none once the entry died, which it then treats as dead.
 *
 * <p><b>Hit vs claim.</b> A hot hit reads the word (dead: fail; {@link #frozen}: wait until
 * clear), adds 1 to its cell (a), reads the word again (b): live and not frozen, it holds the
 * entry; frozen, it waits until the freezer is done and then holds it if the entry is live, or
 * takes its 1 back and fails if it is dead. A claim freezes (f), sweeps (reading cell i at s(i)),
 * and kills only if the count was 1 and every cell read 0. If the hit's (a) precedes the sweep's
 * read of its cell, the sweep sees its unit (a release may have taken that very unit instead of its
 * own, which leaves the sum the same), the claim fails, and the hit finds the entry live: it holds
 * it, linearized at (a), before the claim. If (a) follows that read, it follows (f), so (b) reads
 * the word at or after (f): while frozen the hit waits for the outcome, a dead entry makes it fail
 * (linearized after the claim) and a live one succeed; a word read at (b) that is no longer frozen
 * but live means the freeze ended live before (b), and every later freeze starts after (a) and
 * counts the unit. So a claim never kills an entry a hit returns, and a hit never returns an entry
 * a claim killed. A claim that fails because of an in-flight hit fails correctly: that hit keeps
 * its reference (the entry stays live) and is linearized at its add. The cheap pre-check of a claim
 * (a positive cell or a count above 1, read without freezing: busy) is the same argument with one
 * read.
 *
 * <p><b>A sweep never undercounts.</b> During a freeze the count is fixed and each cell, once
 * swept, only decreases, apart from units added after the sweep passed it by hits in flight, which
 * wait for the freeze's outcome and are linearized after it. So the sum read is at least the
 * callers' number at the end of the freeze, counting every unit of a hit it saw. Exact decisions use
 * it in the direction that cannot hurt: a claim kills only on 0 (the entry is then unused at the
 * kill); a release finds its own unit (at least 1 callers remain until it is spent); an
 * over-release is declared only when the sweep finds nothing and the count is 1, which at the end
 * of the freeze means no caller at all. The sum may overcount (a cell swept before a release took
 * from it): a claim then fails or a waiter waits, both of which a caller that held the entry at the
 * sweep's start justifies, and the releaser wakes the waiter (next paragraph).
 *
 * <p><b>Release vs waitUnused.</b> A hot release takes one unit: from its own cell if positive,
 * else from any positive cell (references are interchangeable: one taken on another thread may be
 * released here), else from the count if above 1 and the word not frozen, else it freezes and looks
 * again exactly; a cell is decremented only by a CAS from a positive value, so cells never go below
 * 0. Then it reads the word, and if {@link #waiters} is set it freezes and sums: at most one caller
 * (the waiter's own reference) and it tells its layout to wake the waiters, as a cold release does
 * when its CAS leaves a count of 2. A waiter freezes with {@link #waiters} in the same CAS and sums:
 * at most one caller and it does not wait. No lost wake-up: if a release's decrement comes before
 * the waiter's sweep reads that cell, the sweep sees it; if after, then after the waiter's freezing
 * CAS, so the release's read of the word (after its decrement) sees {@link #waiters} (only a waker
 * clears it, and it wakes the queue when it does) and it sums again, after its own decrement and,
 * frozen one at a time, after any other release's; the last release sees them all. The wait
 * queue's own handshake is {@link org.mbcache.internal.HashedWaitQueues}'.
 *
 * <p><b>Switch-over vs release on another thread.</b> The switch is a CAS of the word that adds
 * {@link #hot} (and the switching hit's reference) to the word it read, so every cold operation
 * that read the word before fails its CAS, re-reads, and takes the hot path; a cold reference
 * released after the switch comes out of the count (or a cell: interchangeable), so the invariant
 * holds across it, and a cold claim from count 1 cannot succeed on a word that changed. The cells
 * are allocated and published first (and the hot budget taken): if the allocation throws (out of
 * memory) or the budget is spent, the entry stays cold and the hit goes on with the cold protocol;
 * if the entry died or another thread switched it meanwhile, the cells are retired unused (nobody
 * adds to cells before reading {@link #hot} from the word).
 *
 * <p><b>Over-release.</b> A release that finds no unit anywhere, frozen, with the count at 1 is
 * refused and changes nothing, as a cold one is at count 1; on a dead entry likewise. What no
 * counter can see stays as in cold mode: a caller that releases twice while another holder still
 * uses the entry spends that holder's reference.
 *
 * <p><b>Retiring, and slot reuse.</b> The claim that kills a hot entry retires its cells (gives them
 * and their place in the budget back) before it returns, and a kill ({@code close()}) retires them
 * after zeroing the count. An entry object is never reused. A compact slot is: its claim runs under
 * its bucket's bit, and the slot goes back to the free list only after the claim returned, so the
 * cells are gone from the cache's table before a new pair can take the slot, and the new pair
 * starts cold, with no cells (its word is written whole, without {@link #hot}). The cells are found
 * by the owner's identity (the host's tag: slot, key and generation), not by the slot alone, so a thread that
 * read the old occupant's word and looks its cells up after the reuse finds none (dead); one that
 * found them before the retirement adds to cells nobody counts any more, then reads the word again,
 * finds another identity or count 0 (dead), and takes its unit back. A new occupant cannot see the
 * old cells at all. The one window left is the generation's wrap: an occupant of the same key and
 * generation, 2^17 pairs of the slot later, is the same identity, as for handles.
 *
 * <p><b>Memory.</b> At most {@value #MAX_HOT_ENTRIES} entries of a cache are hot at once; each
 * holds {@code (stripes + 1) * 128} bytes of cells ({@link StripedStatistics#stripeCount}: 2 KiB up
 * to 2 processors, 33 KiB from 32), dropped when it dies. When the budget is spent, contended
 * entries stay cold: correct, only slower.
 */
final class HotReferences {

    /** Where the words live, and where a hot word's cells are kept. Implementations allocate nothing. */
    interface Host {
        /** The word at {@code at}, volatile, with the state in its low 32 bits (zero-extended). */
        long lvWord(long at);

        /** A volatile CAS of the whole word. */
        boolean casWord(long at, long expected, long updated);

        /** The cells of the hot occupant of {@code at} whose word is {@code word}, or {@code null}. */
        long[] hotCells(long at, long word);

        /**
         * Publishes {@code cells} as the cells of the occupant of {@code at} whose word is {@code word},
         * taking a place in the hot budget; {@code false} (nothing changed) if the
         * budget is spent or the occupant has cells already.
         */
        boolean publishHotCells(long at, long word, long[] cells);

        /**
         * Whether every place of the hot budget is taken now (a hint: a place may free or fill
         * at once), so that a switch need not allocate cells it could not publish.
         */
        boolean hotBudgetSpent();

        /** Drops published cells and gives their place in the budget back (no-op if already dropped). */
        void retireHotCells(long at, long[] cells);
    }

    /** Net contention votes that switch an entry to hot mode. */
    static final int HOT_SWITCH_VOTES = 4;
    /** How many entries (or slots) of one cache may be hot at once. */
    static final int MAX_HOT_ENTRIES = 16;
    /** Longs from one stripe's cell to the next: 128 bytes, apart also for the adjacent-line prefetcher. */
    static final int CELL_STRIDE = 16;
    private static final int CELL_MASK = StripedStatistics.stripeCount() - 1;
    /** Spins on a frozen word before a waiting thread starts yielding its processor. */
    private static final int SPINS_BEFORE_YIELD = 64;
    private static final VarHandle CELL = MethodHandles.arrayElementVarHandle(long[].class);

    /** What {@link #release} answers: the reference was dropped. */
    static final int RELEASED = 0;
    /** What {@link #release} answers: dropped, and the waiters must be woken (at most one caller left). */
    static final int RELEASED_WAKE = 1;
    /** What {@link #release} answers: nothing to release (an over-release, or a dead entry); nothing changed. */
    static final int REFUSED = -1;

    final long countMask;
    final long frozen;
    final long hot;
    final long waiters;
    /** The bits of the word that name its occupant (a compact slot's key and generation); 0 for an entry. */
    final long identity;

    HotReferences(long countMask, long frozen, long hot, long waiters, long identity) {
        this.countMask = countMask;
        this.frozen = frozen;
        this.hot = hot;
        this.waiters = waiters;
        this.identity = identity;
    }

    long count(long word) {
        return word & countMask;
    }

    /** Whether {@code word} shows the occupant of {@code seen} dead: count 0, or another occupant. */
    boolean dead(long word, long seen) {
        return (word & countMask) == 0 || ((word ^ seen) & identity) != 0;
    }

    // ---------------------------------------------------------------------------------------------
    // Switching
    // ---------------------------------------------------------------------------------------------

    /**
     * Switches the cold occupant of {@code at} whose word was {@code seen} to hot mode, adding
     * {@code references} to its count in the same CAS. Allocates the cells first; a Throwable there,
     * a spent budget, a dead entry, another thread's switch or a count that {@code references}
     * would take past {@link #countMask} leave it as it was (then {@code false}). A saturated count
     * (at the mask) switches with no references added: its next callers go to the cells.
     */
    boolean switchToHot(Host host, long at, long seen, int references) {
        if ((seen & hot) != 0 || host.hotCells(at, seen) != null || host.hotBudgetSpent()) {
            return false;
        }
        long[] cells;
        try {
            cells = new long[(CELL_MASK + 2) * CELL_STRIDE];
        } catch (Throwable allocationFailure) {
            return false;
        }
        if (!host.publishHotCells(at, seen, cells)) {
            return false;
        }
        for (;;) {
            long w = host.lvWord(at);
            if (dead(w, seen) || (w & hot) != 0 || count(w) + references > countMask) {
                // Dead, switched by another thread, or saturated: the cells go (nobody used them).
                host.retireHotCells(at, cells);
                return false;
            }
            if (host.casWord(at, w, (w + references) | hot)) {
                return true;
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The operations on a hot word (the layouts call these once they read the hot bit)
    // ---------------------------------------------------------------------------------------------

    /** The hot hit: a unit in the own cell, kept unless the occupant of {@code seen} died. */
    boolean tryAcquire(Host host, long at, long seen) {
        long s = seen;
        if ((s & frozen) != 0) {
            s = awaitThawed(host, at);
        }
        long[] cells = host.hotCells(at, seen);
        if (dead(s, seen) || cells == null) {
            return false;
        }
        int own = ownCell();
        CELL.getAndAdd(cells, own, 1L);
        s = host.lvWord(at);
        if ((s & frozen) != 0) {
            s = awaitThawed(host, at);
        }
        if (!dead(s, seen)) {
            return true;
        }
        CELL.getAndAdd(cells, own, -1L); // dead: nobody counts these cells any more
        return false;
    }

    /**
     * The hot release, then its wake-up check: {@link #RELEASED}, {@link #RELEASED_WAKE}, or
     * {@link #REFUSED} (nothing held: an over-release, or the occupant of {@code seen} died).
     */
    int release(Host host, long at, long seen) {
        long[] cells = host.hotCells(at, seen);
        if (cells == null || dead(host.lvWord(at), seen)) {
            return REFUSED;
        }
        if (!takeFromCell(cells, ownCell()) && !takeFromAnyCell(cells) && !releaseFromCount(host, at, seen, cells)) {
            return REFUSED;
        }
        if ((host.lvWord(at) & waiters) == 0) {
            return RELEASED;
        }
        long s = freeze(host, at, seen, 0);
        if (dead(s, seen)) {
            return RELEASED;
        }
        long callers = count(s) - 1 + sumCells(cells);
        thaw(host, at, 0);
        return callers <= 1 ? RELEASED_WAKE : RELEASED;
    }

    /** A hot release that found no cell with a unit: the count if above 1, else an exact look. */
    private boolean releaseFromCount(Host host, long at, long seen, long[] cells) {
        for (;;) {
            long s = awaitThawed(host, at);
            if (dead(s, seen)) {
                return false;
            }
            if (count(s) > 1) {
                if (host.casWord(at, s, s - 1)) {
                    return true;
                }
                continue;
            }
            s = freeze(host, at, seen, 0);
            if (dead(s, seen)) {
                return false;
            }
            if (takeFromAnyCell(cells)) {
                thaw(host, at, 0);
                return true;
            }
            if (count(s) > 1) {
                // Only the freezer changes the count while frozen (and a kill, to 0: then done).
                for (;;) {
                    long f = host.lvWord(at);
                    long thawed = count(f) == 0 ? f & ~frozen : (f & ~frozen) - 1;
                    if (host.casWord(at, f, thawed)) {
                        return true;
                    }
                }
            }
            thaw(host, at, 0);
            return false;
        }
    }

    /**
     * The hot claim: count 1 and no unit in any cell, decided frozen; the word goes to count 0 (flags
     * and identity kept) and the cells are retired. {@code false} if somebody holds the occupant of
     * {@code seen} (or it is dead already), or if the word shows any of {@code refusedFlags} (a
     * reclaim pass's "referenced" flag, which a holder may set until the claim's CAS: it is checked
     * on the word frozen and again on the word the CAS replaces, as a cold claim's CAS fails on a
     * flag set after its read).
     */
    boolean tryClaim(Host host, long at, long seen, long refusedFlags) {
        long[] cells = host.hotCells(at, seen);
        if (count(seen) != 1 || (seen & refusedFlags) != 0 || cells == null || anyCellPositive(cells)) {
            return false;
        }
        long s = freeze(host, at, seen, 0);
        if (dead(s, seen)) {
            return false;
        }
        if (count(s) != 1 || (s & refusedFlags) != 0 || sumCells(cells) != 0) {
            thaw(host, at, 0);
            return false;
        }
        for (;;) {
            long f = host.lvWord(at);
            if (count(f) == 0 || (f & refusedFlags) != 0) { // killed meanwhile (close), or flagged
                thaw(host, at, 0);
                return false;
            }
            if (host.casWord(at, f, f & ~(frozen | countMask))) {
                host.retireHotCells(at, cells);
                return true;
            }
        }
    }

    /** After a kill (the count zeroed by {@code close()}): drops the cells, if any. */
    void retire(Host host, long at, long seen) {
        long[] cells = host.hotCells(at, seen);
        if (cells != null) {
            host.retireHotCells(at, cells);
        }
    }

    /**
     * The hot wait condition: sets {@link #waiters} unless at most one caller (the waiter) holds the
     * occupant of {@code seen}.
     *
     * @return {@code true} if the caller must wait (the flag is now set); {@code false} if unused or dead
     */
    boolean markWaitingUnlessUnused(Host host, long at, long seen) {
        long[] cells = host.hotCells(at, seen);
        long s = freeze(host, at, seen, waiters);
        if (dead(s, seen)) {
            return false;
        }
        if (cells == null) {
            thaw(host, at, (s & waiters) != 0 ? 0 : waiters);
            return false;
        }
        boolean used = count(s) - 1 + sumCells(cells) > 1;
        // Unused: leave the bit as it was (another waiter may have set it).
        thaw(host, at, used || (s & waiters) != 0 ? 0 : waiters);
        return used;
    }

    /**
     * Whether any caller holds the hot occupant of {@code seen} ({@code findNext}'s check): a count
     * above 1 or a unit in some cell, exactly (frozen) if a plain look finds none.
     */
    boolean heldByAnyCaller(Host host, long at, long seen) {
        if (dead(seen, seen)) {
            return false;
        }
        if (count(seen) > 1) {
            return true;
        }
        long[] cells = host.hotCells(at, seen);
        if (cells == null) {
            return false;
        }
        if (anyCellPositive(cells)) {
            return true;
        }
        long s = freeze(host, at, seen, 0);
        if (dead(s, seen)) {
            return false;
        }
        boolean held = count(s) > 1 || sumCells(cells) > 0;
        thaw(host, at, 0);
        return held;
    }

    /** The callers' references of a hot word (not frozen: a moment's estimate, for descriptions). */
    long references(Host host, long at, long word) {
        long[] cells = (word & hot) != 0 ? host.hotCells(at, word) : null;
        return count(word) + (cells != null ? sumCells(cells) : 0);
    }

    // ---------------------------------------------------------------------------------------------
    // Freezing and the cells
    // ---------------------------------------------------------------------------------------------

    /** Index of the calling thread's cell. */
    private static int ownCell() {
        return (StripedStatistics.stripeOfCurrentThread(CELL_MASK) + 1) * CELL_STRIDE;
    }

    /** Waits until no thread freezes the word; the word then. */
    private long awaitThawed(Host host, long at) {
        for (int spins = 0; ; spins++) {
            long s = host.lvWord(at);
            if ((s & frozen) == 0) {
                return s;
            }
            if (spins < SPINS_BEFORE_YIELD) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /**
     * Sets {@link #frozen} (and {@code flags}) once no other thread has it set, unless the occupant
     * of {@code seen} is dead.
     *
     * @return the word before this freeze (dead: nothing was set)
     */
    private long freeze(Host host, long at, long seen, long flags) {
        for (;;) {
            long s = awaitThawed(host, at);
            if (dead(s, seen) || host.casWord(at, s, s | frozen | flags)) {
                return s;
            }
        }
    }

    /** Clears {@link #frozen} and {@code flags}, keeping what others changed meanwhile (flags, a kill). */
    private void thaw(Host host, long at, long flags) {
        for (;;) {
            long s = host.lvWord(at);
            if (host.casWord(at, s, s & ~(frozen | flags))) {
                return;
            }
        }
    }

    /** The sum of the cells, read one by one (exact while frozen: see the class comment). */
    private static long sumCells(long[] cells) {
        long sum = 0;
        for (int i = CELL_STRIDE; i < cells.length; i += CELL_STRIDE) {
            sum += (long) CELL.getVolatile(cells, i);
        }
        return sum;
    }

    /** Whether some cell is positive, read without freezing: a caller holds the entry (or one in flight). */
    private static boolean anyCellPositive(long[] cells) {
        for (int i = CELL_STRIDE; i < cells.length; i += CELL_STRIDE) {
            if ((long) CELL.getVolatile(cells, i) > 0) {
                return true;
            }
        }
        return false;
    }

    /** Takes one unit from cell {@code i} if it holds any (a CAS from a positive value). */
    private static boolean takeFromCell(long[] cells, int i) {
        for (;;) {
            long v = (long) CELL.getVolatile(cells, i);
            if (v <= 0) {
                return false;
            }
            if (CELL.compareAndSet(cells, i, v, v - 1)) {
                return true;
            }
        }
    }

    /** Takes one unit from any positive cell. */
    private static boolean takeFromAnyCell(long[] cells) {
        for (int i = CELL_STRIDE; i < cells.length; i += CELL_STRIDE) {
            if (takeFromCell(cells, i)) {
                return true;
            }
        }
        return false;
    }
}
