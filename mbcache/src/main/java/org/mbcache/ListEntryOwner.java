package org.mbcache;

import org.mbcache.internal.HashedWaitQueues;
import org.mbcache.internal.Lifecycle;

/**
 * One list-layout cache's side of its entries ({@link ListEntry.Owner}): the hot cells, the
 * hot-mode vote ({@link ContentionVote}, by entry identity), the lifecycle's answers, and the
 * release of a caller's reference with the wake-up of {@code waitUnused}'s waiters. A class of its
 * own, so that the entry and the table depend on it and not on the façade, and the façade shows
 * none of it.
 */
final class ListEntryOwner implements ListEntry.Owner {
    private final Lifecycle lifecycle;
    private final HotCellTable hotCells;
    /** Where {@code waitUnused} sleeps (kernel {@code wait_var_event} on {@code e_refcnt}). */
    private final HashedWaitQueues unusedWaiters;
    private final ContentionVote contentionVote = new ContentionVote();
    /** Per slot of the vote, the entry it favours (racy on purpose: see ContentionVote). */
    private final ListEntry[] contendedEntries = new ListEntry[ContentionVote.SLOTS];

    /** The owner of one cache's entries. */
    ListEntryOwner(Lifecycle lifecycle, HotCellTable hotCells, HashedWaitQueues unusedWaiters) {
        this.lifecycle = lifecycle;
        this.hotCells = hotCells;
        this.unusedWaiters = unusedWaiters;
    }

    @Override
    public HotCellTable hotCells() {
        return hotCells;
    }

    @Override
    public boolean noteContention(ListEntry entry) {
        int slot = ContentionVote.slotOf(entry.key);
        int verdict = contentionVote.tally(slot, contendedEntries[slot] == entry);
        if (verdict == ContentionVote.TAKE_OVER) {
            contendedEntries[slot] = entry;
        }
        return verdict == ContentionVote.SWITCH;
    }

    @Override
    public IllegalStateException referenceNotHeld(String misuse) {
        return lifecycle.referenceNotHeld(misuse);
    }

    @Override
    public void ensureOpen() {
        lifecycle.ensureOpen();
    }

    /** The cache's {@code release}: an entry of this owner is one of its cache's. */
    @Override
    public void release(ListEntry entry) {
        lifecycle.ensureOpen();
        releaseReference(entry);
    }

    /**
     * Drops a caller's reference (kernel {@code mb_cache_entry_put}) and, if that left only the cache
     * and one holder while somebody waits, wakes the waiters (kernel {@code wake_up_var}). The
     * {@link ListEntry#WAITERS} bit, read from the same CAS that dropped the count, keeps the wait
     * queues off the common path: a release nobody waits for touches nothing but the entry.
     */
    @Override
    public void releaseReference(ListEntry entry) {
        if (entry.releaseReference()) {
            entry.setFlag(ListEntry.WAITERS, false);
            // If this throws (the queue lock's node allocation), the reference is dropped all the
            // same, and the waiters find the entry unused at their next re-check (HashedWaitQueues),
            // which also sets the bit again for whoever still waits.
            unusedWaiters.wake(entry);
        }
    }
}
