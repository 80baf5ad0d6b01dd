package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One cache entry (kernel {@code struct mb_cache_entry}) and the reference-counting protocol on
 * its state word.
 *
 * <p>State word layout: bits 0-26 the reference count; bit 27 {@link #FROZEN}; bit 28
 * {@link #REFERENCED}; bit 29 {@link #REUSABLE}; bit 30 {@link #WAITERS} (a thread waits in
 * {@code waitUnused} for this entry); bit 31 {@link #HOT}. The count is zero exactly when the
 * entry has left its chain, in both modes below, and zero is final.
 *
 * <h2>Cold mode</h2>
 *
 * Every entry starts cold: the count is the cache's reference plus one per caller. A hit takes a
 * reference by increment-if-not-zero ({@link #tryAcquire}), a release CASes it down unless that
 * would reach the cache's own reference (over-release: refused, nothing changed), a claim
 * (reclaim, the chain cap, {@code deleteOrGet}) CASes it from 1 to 0, and {@code waitUnused}
 * sets {@link #WAITERS} in the CAS loop that reads a count above 2. One word decides everything,
 * so every decision is one CAS. Its cost: every hit writes the word twice, and when all threads
 * look up one key (ext4's zero block, a shared ACL) its line moves between cores on every hit.
 *
 * <h2>Hot mode</h2>
 *
 * An entry whose acquire or release CAS keeps failing switches to hot mode
 * ({@link Owner#noteContention} votes, then {@link #switchToHot}): callers' references then go
 * to per-stripe cells, kept in the cache's {@link HotCellTable} under the entry's identity, and
 * the exact decisions (claims, {@code waitUnused}, the over-release check, {@code findNext}'s
 * check) freeze the word and sum the cells. The protocol and its argument are {@link HotReferences}', shared with
 * {@link CompactMbCache}'s slots; each method below runs its cold CAS loop and hands the word to
 * {@link #HOT_REFERENCES} once it reads {@link #HOT}. The entry is that class's {@link
 * HotReferences.Host} (the {@code at} argument unused; the word zero-extended to a {@code long},
 * with no identity bits: an entry object is never reused).
 *
 * <p><b>Memory.</b> A cold entry is 40 bytes with compressed oops: it has no field for hot mode.
 * At most {@value HotReferences#MAX_HOT_ENTRIES} entries of a cache are hot at once, their cells
 * in the cache's {@link HotCellTable} (whose places are the budget), given back when a hot entry
 * dies. {@code close()} kills every entry ({@link #kill}), which retires the cells of a hot one.
 */
final class ListEntry extends CachedPair implements HotReferences.Host {
    /**
     * The cache's side of its entries: what an entry needs from the cache that holds it, and nothing
     * else, so that the entry, the table and the LRU list depend on this interface, not on the
     * façade. One object per cache; an entry belongs to the cache whose owner it names.
     */
    interface Owner {
        /** The cache's hot cells, where hot entries keep their callers' references. */
        HotCellTable hotCells();

        /** Notes a failed CAS on {@code entry}'s state word ({@link ContentionVote}); whether to switch it to hot mode. */
        boolean noteContention(ListEntry entry);

        /** The exception for a reference the caller does not hold ({@link org.mbcache.internal.Lifecycle#referenceNotHeld}). */
        IllegalStateException referenceNotHeld(String misuse);

        /** Throws once the cache is closed. */
        void ensureOpen();

        /** The cache's {@code release} of one caller's reference to {@code entry} (its {@code close()}). */
        void release(ListEntry entry);

        /** Drops a reference the cache took for a caller, waking waiters if that left the entry unused. */
        void releaseReference(ListEntry entry);
    }

    static final int COUNT_MASK = (1 << 27) - 1;
    /** A thread is deciding on the exact number of callers of a hot entry; see {@link HotReferences}. */
    static final int FROZEN = 1 << 27;
    static final int REFERENCED = 1 << 28;
    static final int REUSABLE = 1 << 29;
    static final int WAITERS = 1 << 30;
    /** Callers' references are counted in cells of the cache's {@link HotCellTable} too ({@link HotReferences}). */
    static final int HOT = 1 << 31;

    /** The hot-mode protocol over this word's bits (no identity bits: entries are never reused). */
    static final HotReferences HOT_REFERENCES =
            new HotReferences(COUNT_MASK, FROZEN, Integer.toUnsignedLong(HOT), WAITERS, 0L);

    private static final VarHandle STATE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(ListEntry.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The cache's side of the entry: its hot cells, its vote, its lifecycle (see {@link Owner}). */
    final Owner owner;
    /** Count and flags; see the class comment. Changed only by CAS. */
    private volatile int state;
    /**
     * The mark of the last snapshot walk that copied this entry (0: none); read and written under
     * the LRU lock only (see {@link ListLru#snapshotChunk}). Costs nothing: the object stays 40 bytes
     * with compressed references (it fills what was padding).
     */
    private int snapshotMark;
    /**
     * The LRU link: while the entry sits on an append stack, the next older entry of that stack
     * (written by its creator before the CAS that publishes the entry); once drained, the next
     * newer entry of the LRU list (under the LRU lock). Plain: see {@link ListLru}.
     */
    private ListEntry lruNext;

    /** A new entry at count 2: the cache's reference and the creator's, dropped once listed. */
    ListEntry(Owner owner, int key, long value, boolean reusable) {
        super(key, value);
        this.owner = owner;
        // Plain store, not a volatile one (which would cost a full fence per create): the entry
        // reaches other threads only through a bucket unlock (release) or an append stack's CAS.
        STATE.set(this, 2 | (reusable ? REUSABLE : 0));
    }

    static int count(int state) {
        return state & COUNT_MASK;
    }

    int lvState() {
        return state;
    }

    private boolean casState(int expected, int updated) {
        return STATE.compareAndSet(this, expected, updated);
    }

    // HotReferences.Host: the word zero-extended; at is unused.

    @Override
    public long lvWord(long at) {
        return Integer.toUnsignedLong(state);
    }

    @Override
    public boolean casWord(long at, long expected, long updated) {
        return STATE.compareAndSet(this, (int) expected, (int) updated);
    }

    /** The entry's cells in its cache's table, found by the entry's identity (from its key's place). */
    @Override
    public long[] hotCells(long at, long word) {
        return owner.hotCells().cells(key, this, 0, 0);
    }

    @Override
    public boolean publishHotCells(long at, long word, long[] cells) {
        return owner.hotCells().publish(key, this, 0, 0, cells);
    }

    @Override
    public void retireHotCells(long at, long[] cells) {
        owner.hotCells().retire(cells);
    }

    @Override
    public boolean hotBudgetSpent() {
        return owner.hotCells().full();
    }

    /** Whether the entry is in hot mode (its references partly counted in per-stripe cells). */
    boolean isHot() {
        return (lvState() & HOT) != 0;
    }

    /**
     * Takes a reference unless the count already reached zero (kernel {@code atomic_inc_not_zero}).
     * A cold entry whose CAS keeps failing switches to hot mode (see the class comment).
     *
     * @return {@code false} if the entry is dead
     */
    boolean tryAcquire() {
        for (;;) {
            int s = lvState();
            if ((s & HOT) != 0) {
                return HOT_REFERENCES.tryAcquire(this, 0, Integer.toUnsignedLong(s));
            }
            int count = count(s);
            if (count == 0) {
                return false;
            }
            if (count == COUNT_MASK) {
                throw new IllegalStateException("too many references to " + this);
            }
            if (casState(s, s + 1)) {
                return true;
            }
            if (owner.noteContention(this) && switchToHot(1)) {
                return true;
            }
        }
    }

    /**
     * Switches a cold entry to hot mode, adding {@code references} to the count in the same CAS
     * ({@link HotReferences#switchToHot}); {@code false} if it stayed as it was.
     */
    boolean switchToHot(int references) {
        return HOT_REFERENCES.switchToHot(this, 0, lvWord(0), references);
    }

    /**
     * Drops one caller's reference (the count part of kernel {@code mb_cache_entry_put}). A count
     * of 1 is the cache's own reference and 0 a dead entry: releasing then is an over-release,
     * refused without touching the count (a hot entry: with no unit in any cell either, frozen).
     *
     * @return whether waiters must be woken: {@link #WAITERS} is set and at most one caller
     *     (the waiter) still holds the entry
     */
    boolean releaseReference() {
        for (;;) {
            int s = lvState();
            if ((s & HOT) != 0) {
                int outcome = HOT_REFERENCES.release(this, 0, Integer.toUnsignedLong(s));
                if (outcome == HotReferences.REFUSED) {
                    throw overRelease();
                }
                return outcome == HotReferences.RELEASED_WAKE;
            }
            if (count(s) <= 1) {
                throw overRelease();
            }
            if (casState(s, s - 1)) {
                return (s & WAITERS) != 0 && count(s - 1) <= 2;
            }
            owner.noteContention(this);
        }
    }

    /**
     * The over-release refusal, or "cache is closed" where {@code close()} took the reference
     * (see {@link Owner#referenceNotHeld}).
     */
    private IllegalStateException overRelease() {
        String misuse = "entry released more often than it was handed out: " + this;
        return owner.referenceNotHeld(misuse);
    }

    /**
     * Drops the cache's reference if it is the only one (count 1, and for a hot entry no unit in
     * any cell): reclaim, the chain cap and {@code deleteOrGet}. Flags survive; the count goes to
     * 0. Called with the entry's bucket bit held, so the caller unhashes it before anyone looks.
     *
     * @return {@code false} if somebody holds the entry (or it is dead already)
     */
    boolean tryClaim() {
        return tryClaim(0);
    }

    /**
     * {@link #tryClaim()}, refusing an entry whose state shows any of {@code refusedFlags}: with
     * {@link #REFERENCED}, a reclaim's second chance, which must pass over an entry touched by the
     * time it claims (the state is read again after each failed CAS, and a hot entry's claim checks
     * the flag on the state it freezes and on the state its CAS replaces, so a touch that lands
     * between the reclaim's look and the claim is seen).
     *
     * @return {@code false} if somebody holds the entry, it is dead already, or it is flagged
     */
    boolean tryClaim(int refusedFlags) {
        for (;;) {
            int s = lvState();
            if ((s & HOT) != 0) {
                return HOT_REFERENCES.tryClaim(this, 0, Integer.toUnsignedLong(s), Integer.toUnsignedLong(refusedFlags));
            }
            if (count(s) != 1 || (s & refusedFlags) != 0) {
                return false;
            }
            if (casState(s, s & ~COUNT_MASK)) {
                return true;
            }
        }
    }

    /** Drops every reference at once: only {@code close()} does this. */
    void kill() {
        int s;
        do {
            s = lvState();
        } while (!casState(s, s & ~COUNT_MASK));
        // A switch still in progress (cells published, HOT not yet set) finds the entry dead in
        // its CAS loop and retires the cells itself (HotReferences.switchToHot).
        if ((s & HOT) != 0) {
            HOT_REFERENCES.retire(this, 0, 0);
        }
    }

    /** Sets or clears one flag, never losing a concurrent change of the count or another flag. */
    void setFlag(int flag, boolean on) {
        for (;;) {
            int s = lvState();
            int updated = on ? s | flag : s & ~flag;
            if (s == updated || casState(s, updated)) {
                return;
            }
        }
    }

    /**
     * Sets {@link #WAITERS} unless the entry is already unused (at most one caller: the waiter).
     *
     * @return {@code true} if the caller must wait (the flag is now set); {@code false} if unused
     */
    boolean markWaitingUnlessUnused() {
        for (;;) {
            int s = lvState();
            if ((s & HOT) != 0) {
                return HOT_REFERENCES.markWaitingUnlessUnused(this, 0, Integer.toUnsignedLong(s));
            }
            if (count(s) <= 2) {
                return false;
            }
            if ((s & WAITERS) != 0 || casState(s, s | WAITERS)) {
                return true;
            }
        }
    }

    /**
     * Whether any caller holds the entry ({@code findNext}'s check): a count above 1, or for a hot
     * entry a unit in some cell, exactly (frozen) if a plain look finds none.
     */
    boolean heldByAnyCaller() {
        int s = lvState();
        if ((s & HOT) == 0) {
            return count(s) > 1;
        }
        return HOT_REFERENCES.heldByAnyCaller(this, 0, Integer.toUnsignedLong(s));
    }

    boolean hasFlag(int flag) {
        return (lvState() & flag) != 0;
    }

    ListEntry lpLruNext() {
        return lruNext;
    }

    int lpSnapshotMark() {
        return snapshotMark;
    }

    void spSnapshotMark(int mark) {
        snapshotMark = mark;
    }

    void spLruNext(ListEntry next) {
        lruNext = next;
    }

    @Override
    public boolean reusable() {
        return hasFlag(REUSABLE);
    }

    @Override
    public void setReusable(boolean reusable) {
        owner.ensureOpen();
        setFlag(REUSABLE, reusable);
    }

    @Override
    public void close() {
        owner.release(this);
    }

    @Override
    public String toString() {
        int s = lvState();
        long references = HOT_REFERENCES.references(this, 0, Integer.toUnsignedLong(s));
        return "MbCache.Entry[key=" + key + ", value=" + value + ", refcount=" + references
                + ((s & REUSABLE) != 0 ? ", reusable" : "")
                + ((s & REFERENCED) != 0 ? ", referenced" : "")
                + ((s & HOT) != 0 ? ", hot" : "") + "]";
    }
}
