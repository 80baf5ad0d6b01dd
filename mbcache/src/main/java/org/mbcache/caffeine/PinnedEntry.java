package org.mbcache.caffeine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.BiFunction;
import org.mbcache.CacheEntry;

/**
 * One cached pair of a {@link CaffeineDedupCache}, with its reference count and the PINNED bit that
 * keeps its key's group out of Caffeine's eviction while somebody holds it. A class of its own
 * because the pin protocol below is the whole argument for why Caffeine never evicts a held entry,
 * and every state change of that protocol is a method here.
 *
 * <p>The key, {@code value} and the owner are final, so any thread that reaches the entry
 * through the cache sees them (and the flags written in the constructor: the group that publishes
 * the entry is itself published by Caffeine's map, whose put happens-before a get that sees it).
 */
final class PinnedEntry implements CacheEntry, BiFunction<Integer, PinnedEntry[], PinnedEntry[]> {

    /*
     * How held entries are kept (the journal-corruption race). Caffeine evicts by its own policy,
     * so a held entry must be out of its reach. The weigher (KeyGroups) gives a group weight 0
     * while any of its entries is pinned, and otherwise its number of entries; the maximum weight
     * is maxEntries. Caffeine never evicts a zero-weight entry: its eviction re-reads the node's
     * weight under the node's lock, inside the same map compute that would remove it, and keeps the
     * node when the weight is 0 (BoundedLocalCache.evictEntry in Caffeine 3.2; the pinning tests
     * fail should a later version drop that re-check, and the eviction listener records a breach).
     * PINNED is set and cleared only inside computes on the key, and the weigher runs in the same
     * compute, so "pinned" implies "its group weighs 0" whenever eviction can look. The invariant
     * that makes it safe is "held implies pinned" (count >= 2 implies PINNED):
     *  - a lookup takes a reference without any lock only if the entry is pinned: a CAS of the
     *    count word from (c, PINNED) to (c + 1, PINNED) (tryAcquirePinned);
     *  - an unpinned entry is first pinned inside a computeIfPresent on its key (the entry is its
     *    own remapping function, apply, so nothing of ours is allocated); the reference is then
     *    taken by the same lock-free CAS (should an unpin get in between, the CAS sees the entry
     *    unpinned and the lookup pins it again);
     *  - a release only decrements the count (releaseReference): the entry stays pinned (the next
     *    lookup of a hot entry is again a lock-free CAS) and goes, once, on the lazy-unpin stack
     *    (UnpinStack);
     *  - unpinning clears PINNED inside a compute by a CAS from exactly (1, PINNED) to (1)
     *    (unpinIfUnheld): on the same word as the lookups' CAS, so a lookup either gets there first
     *    (count 2: the entry stays pinned) or sees it unpinned and takes the locked path. Caffeine
     *    then re-weighs.
     * Every removal of ours (reclaim, chain cap, deleteOrGet) drops the cache's reference by a CAS
     * from count 1 to 0 inside a compute; Caffeine's eviction only ever sees unpinned entries at
     * count 1 and retires them to 0 in its eviction listener, inside the removing compute. A lookup
     * that finds count 0 skips the entry. Dead entries are never left in a group: each removal
     * allocates the group it returns before its kills, so a Throwable of that allocation kills
     * nothing.
     */

    static final int REUSABLE = 1;
    static final int REFERENCED = 2;
    /** Internal flag: the entry is on the cache's lazy-unpin stack. */
    static final int UNPIN_QUEUED = 4;

    /** The reference count: the low 28 bits of {@link #state}. */
    static final int COUNT_MASK = (1 << 28) - 1;
    /**
     * The state bit that says this entry's group weighs 0 in Caffeine because of this entry. Set
     * and cleared only inside a compute on the key (with the key's lock held), so the weigher,
     * which runs in that compute, sees exactly the bits the compute left.
     */
    static final int PINNED = 1 << 28;

    private static final VarHandle STATE;
    private static final VarHandle FLAGS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(PinnedEntry.class, "state", int.class);
            FLAGS = lookup.findVarHandle(PinnedEntry.class, "flags", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final CaffeineDedupCache cache;
    /**
     * The key as the map's key object, kept so that calls given an entry never box; also the only
     * copy of the key ({@link #key()} unboxes it), which keeps the entry at 40 bytes with
     * compressed references instead of 48.
     */
    final Integer boxedKey;
    final long value;

    /**
     * The reference count ({@link #COUNT_MASK}: 1 is the cache's own reference, each caller adds
     * one, 0 is dead, out of the cache for good) and the {@link #PINNED} bit, in one word so that
     * a lock-free lookup's increment and the unpin under the key's lock are ordered by the same
     * CAS. Invariant: a count of 2 or more implies PINNED, and PINNED implies that the group's
     * weight in Caffeine is 0.
     *
     * <p>Read with volatile reads and changed only by volatile CAS: the CAS makes
     * increment-unless-dead atomic against the removals (count 1 to 0) and the unpin (PINNED
     * cleared at count 1), and its volatile (sequentially consistent) write is what the wait
     * queues' Dekker handshake with {@code waitUnused} needs: a release-only CAS would let the
     * waker's read of the waiter count move above it. On x86 and AArch64 a CAS is a full barrier
     * anyway, so a weaker mode would save nothing.
     */
    private volatile int state = 1;

    /**
     * {@link #REUSABLE}, {@link #REFERENCED} and {@link #UNPIN_QUEUED}, in one word changed only by
     * atomic {@code getAndBitwiseOr/And} (volatile mode), so setting one flag never loses a
     * concurrent change of another (kernel fix a44e84a9b776). Volatile reads: a reader must not
     * keep using a stale value in a loop (ext4 would spin on a stale reusable bit); opaque would
     * do for coherence, and volatile costs the same plain load on x86.
     */
    private volatile int flags;

    /**
     * The next entry on the lazy-unpin stack: written with a plain store before the push's CAS
     * of the stack head publishes it, and below the head only by the (single) drain thread.
     */
    private PinnedEntry nextToUnpin;

    PinnedEntry(CaffeineDedupCache cache, Integer boxedKey, long value, boolean reusable) {
        this.cache = cache;
        this.boxedKey = boxedKey;
        this.value = value;
        this.flags = reusable ? REUSABLE : 0;
    }

    @Override
    public int key() {
        return boxedKey;
    }

    @Override
    public long value() {
        return value;
    }

    @Override
    public void close() {
        cache.release(this);
    }

    PinnedEntry lpNextToUnpin() {
        return nextToUnpin;
    }

    void spNextToUnpin(PinnedEntry next) {
        nextToUnpin = next;
    }

    /** The count word, volatile read: orders later reads of the entry after it. */
    int lvState() {
        return state;
    }

    /** Volatile CAS of the count word: see {@link #state} for why volatile. */
    private boolean casState(int expected, int update) {
        return STATE.compareAndSet(this, expected, update);
    }

    /** The flags word, volatile read. */
    private int lvFlags() {
        return flags;
    }

    @Override
    public boolean reusable() {
        return (lvFlags() & REUSABLE) != 0;
    }

    @Override
    public void setReusable(boolean reusable) {
        cache.lifecycle().ensureOpen();
        if (reusable) {
            FLAGS.getAndBitwiseOr(this, REUSABLE);
        } else {
            FLAGS.getAndBitwiseAnd(this, ~REUSABLE);
        }
    }

    /**
     * Sets REFERENCED. Skips the atomic write when the bit is already set: linearizable, because
     * the volatile read saw the bit set at that moment (a concurrent clear is then ordered after).
     */
    void setReferenced() {
        if ((lvFlags() & REFERENCED) == 0) {
            FLAGS.getAndBitwiseOr(this, REFERENCED);
        }
    }

    /** Clears REFERENCED; returns whether it was set. */
    boolean clearReferenced() {
        return (lvFlags() & REFERENCED) != 0
                && ((int) FLAGS.getAndBitwiseAnd(this, ~REFERENCED) & REFERENCED) != 0;
    }

    boolean isReferenced() {
        return (lvFlags() & REFERENCED) != 0;
    }

    /** Sets UNPIN_QUEUED; returns whether this call set it (and so must push the entry). */
    boolean markUnpinQueued() {
        return (lvFlags() & UNPIN_QUEUED) == 0
                && ((int) FLAGS.getAndBitwiseOr(this, UNPIN_QUEUED) & UNPIN_QUEUED) == 0;
    }

    void clearUnpinQueued() {
        FLAGS.getAndBitwiseAnd(this, ~UNPIN_QUEUED);
    }

    static int count(int state) {
        return state & COUNT_MASK;
    }

    int count() {
        return count(lvState());
    }

    /** Whether this entry currently keeps its group at weight 0. */
    boolean isPinned() {
        return (lvState() & PINNED) != 0;
    }

    /**
     * The lock-free half of a lookup: takes a reference if the entry is pinned (its group weighs
     * 0, and only a compute on the key could change that, which this CAS and the unpin's CAS
     * order), whatever the count.
     *
     * @return 1 if a reference was taken; 0 if the entry is unpinned (at count 1: the caller must
     *     pin it under the key's lock); -1 if the entry is dead
     */
    int tryAcquirePinned() {
        for (;;) {
            int s = lvState();
            if (count(s) == 0) {
                return -1;
            }
            if ((s & PINNED) == 0) {
                return 0;
            }
            checkOverflow(s);
            if (casState(s, s + 1)) {
                return 1;
            }
        }
    }

    /**
     * Takes a reference and pins the entry, unless it is dead. Only inside a compute on the key:
     * the weigher that runs after it in the same compute sees PINNED and weighs the group 0.
     */
    boolean acquireAndPinUnderKeyLock() {
        for (;;) {
            int s = lvState();
            if (count(s) == 0) {
                return false;
            }
            checkOverflow(s);
            if (casState(s, (s + 1) | PINNED)) {
                return true;
            }
        }
    }

    /**
     * The remapping function of a pin (the entry is its own, so a pin allocates nothing of ours):
     * with the key's lock held, sets PINNED if the entry is alive and still in the key's group,
     * and returns the group unchanged, so that Caffeine re-weighs it (to 0) before the lock is
     * released. It takes no reference: the caller then does, by the lock-free CAS of
     * {@link #tryAcquirePinned}.
     */
    @Override
    public PinnedEntry[] apply(Integer boxedKey, PinnedEntry[] group) {
        if (KeyGroups.indexOf(group, this) >= 0) {
            for (;;) {
                int s = lvState();
                if (count(s) == 0 || (s & PINNED) != 0 || casState(s, s | PINNED)) {
                    break;
                }
            }
        }
        return group;
    }

    /** Drops the cache's reference if nobody else holds one: count 1 to dead. Only inside a compute. */
    boolean killIfUnheld() {
        for (;;) {
            int s = lvState();
            if (count(s) != 1) {
                return false;
            }
            if (casState(s, 0)) {
                return true;
            }
        }
    }

    /**
     * Drops the cache's reference of an entry that is unpinned and unheld: exactly (1) to dead.
     * Only inside a compute on the key, after {@link #unpinIfUnheld} returned true under the
     * same lock: then nothing can have changed the word, and this cannot fail. (An entry still
     * pinned, at count 1 because a holder released it meanwhile, is left alone.)
     */
    boolean killIfUnpinnedUnheld() {
        return casState(1, 0);
    }

    /**
     * Clears PINNED if nobody but the cache holds the entry. Only inside a compute on the key. A
     * lookup's lock-free increment and this CAS are on the same word, so either the lookup wins
     * (count 2: the entry stays pinned) or this does (the lookup then sees it unpinned and pins
     * it again under the lock).
     *
     * @return whether the entry is now unpinned at count 1: then, as long as the caller holds
     *     the key's lock, nobody can take a reference and {@link #killIfUnheld} cannot fail
     */
    boolean unpinIfUnheld() {
        for (;;) {
            int s = lvState();
            if (s == 1) {
                return true;
            }
            if (s != (1 | PINNED)) {
                return false;
            }
            if (casState(s, 1)) {
                return true;
            }
        }
    }

    /**
     * Drops a caller's reference; PINNED stays (the unpin is lazy). A count of 1 is the cache's
     * own reference and 0 a dead entry: releasing then is an over-release, refused without
     * touching the count.
     *
     * @return the new count
     */
    int releaseReference() {
        for (;;) {
            int s = lvState();
            int count = count(s);
            if (count <= 1) {
                throw cache.lifecycle().referenceNotHeld("entry released more often than it was handed out: " + this);
            }
            if (casState(s, s - 1)) {
                return count - 1;
            }
        }
    }

    private void checkOverflow(int s) {
        if (count(s) == COUNT_MASK) {
            throw new IllegalStateException("too many references to " + this);
        }
    }

    @Override
    public String toString() {
        int s = lvState();
        int f = flags;
        return "CacheEntry[key=" + boxedKey + ", value=" + value + ", count=" + count(s)
                + ", pinned=" + ((s & PINNED) != 0) + ", reusable=" + ((f & REUSABLE) != 0)
                + ", referenced=" + ((f & REFERENCED) != 0) + "]";
    }
}
