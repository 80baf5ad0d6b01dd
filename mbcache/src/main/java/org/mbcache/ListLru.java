package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.ReentrantLock;
import org.mbcache.internal.StripedStatistics;

/**
 * The LRU list of all entries in creation order (kernel {@code c_list}), with its lock
 * ({@code c_list_lock}) and the lock-free append stacks that keep creates off that lock.
 *
 * <p><b>Append stacks.</b> The kernel appends under the list lock; taken by every create, that lock
 * would queue all creates behind one another and move its line between cores on each. Here a
 * create pushes its entry onto one of several Treiber stacks, linked through {@code lruNext},
 * newest on top; the creating thread's id picks the stack, so creates on different cores seldom
 * write the same line.
 * A push first links the entry to the current top with a plain store, then swings the top to it with
 * a CAS (volatile): the link is in place before the entry is reachable, so there is no moment at
 * which a drainer could find a half-pushed entry, and no asynchronous error between two steps can
 * leave one behind. A drainer, holding the list lock, takes each whole stack with one exchange and
 * reverses it onto the list's tail. Within one thread the list is exactly in creation order; creates
 * of different threads between two drains are appended stack by stack.
 *
 * <p><b>The list</b> itself is plain fields under {@link #lock}, linked oldest to newest through
 * {@code lruNext}. Entries that left their chain outside a reclaim pass ({@code deleteOrGet}, the chain
 * cap) stay linked until a pass meets them or a purge runs; {@link #deadEntries} counts them.
 */
final class ListLru {
    private static final VarHandle TOP = MethodHandles.arrayElementVarHandle(ListEntry[].class);
    /** Stack tops 32 references (128 bytes with compressed oops) apart, each on its own lines. */
    private static final int STRIDE = 32;

    /** Guards the list fields below: the cache's reclaim lock, held by reclaim passes, purges and close. */
    final ReentrantLock lock;
    private ListEntry head;
    private ListEntry tail;
    /** Entries on the list, dead ones included. Lock held. */
    private long length;

    /**
     * The next entry a snapshot walk copies (see {@link #snapshotChunk}); {@code null} when no walk is
     * in progress or it reached the tail. Lock held, as every field below.
     */
    private ListEntry snapshotCursor;
    /**
     * The entry that was the walk's cursor and the list's tail when a pass polled it: if the pass
     * puts it back, at the tail, it is the cursor again (it was not copied yet). Lock held.
     */
    private ListEntry snapshotRevive;
    /** The mark of the walk in progress (or the last one): entries it copied carry it. Lock held. */
    private int snapshotId;

    /**
     * The tops of the append stacks: stack {@code i} at {@code (i + 1) * STRIDE}. The first
     * {@code STRIDE} slots stay empty, so that no top shares a line with the array's header or with
     * whatever object the heap put just before the array.
     */
    private final ListEntry[] appendTops;
    private final int stackMask;
    /**
     * Entries that left their chain but are still linked (list or stacks). Its estimate decides a
     * purge; the batch (how far the estimate may trail) is the cache's choice.
     */
    private final StripedCounter deadEntries;

    /**
     * An empty list.
     *
     * @param deadEntriesBatch how far the dead-entry estimate may trail (see {@link StripedCounter})
     * @param lock the lock that guards the list: the cache's reclaim lock
     */
    ListLru(long deadEntriesBatch, ReentrantLock lock) {
        this.lock = lock;
        int stacks = StripedStatistics.stripeCount();
        appendTops = new ListEntry[(stacks + 1) * STRIDE];
        stackMask = stacks - 1;
        deadEntries = new StripedCounter(deadEntriesBatch);
    }

    /**
     * Appends a new entry (kernel: {@code list_add_tail(&entry->e_list, &cache->c_list)}), lock-free.
     * A CAS loop of two accesses and no allocation: nothing can leave it half done.
     */
    void append(ListEntry entry) {
        int slot = (StripedStatistics.stripeOfCurrentThread(stackMask) + 1) * STRIDE;
        for (;;) {
            ListEntry top = lvTop(slot);
            entry.spLruNext(top); // plain: published by the CAS below (volatile, so release)
            if (casTop(slot, top, entry)) {
                return;
            }
        }
    }

    private ListEntry lvTop(int slot) {
        return (ListEntry) TOP.getVolatile(appendTops, slot);
    }

    private boolean casTop(int slot, ListEntry expected, ListEntry updated) {
        return TOP.compareAndSet(appendTops, slot, expected, updated);
    }

    /**
     * Moves everything appended so far onto the list's tail. Lock held. The exchange is an acquire,
     * so the plain links the pushers stored before their CAS are visible to the walk.
     */
    void drainAppendStacks() {
        for (int slot = STRIDE; slot < appendTops.length; slot += STRIDE) {
            if (lvTop(slot) == null) {
                continue;
            }
            ListEntry newest = (ListEntry) TOP.getAndSet(appendTops, slot, null);
            ListEntry older = null;
            ListEntry current = newest;
            long drained = 0;
            while (current != null) {
                ListEntry below = current.lpLruNext();
                current.spLruNext(older);
                older = current;
                current = below;
                drained++;
            }
            // 'older' is now the oldest drained entry, linked oldest to newest up to 'newest'.
            if (tail == null) {
                head = older;
            } else {
                tail.spLruNext(older);
            }
            tail = newest;
            length += drained;
        }
    }

    /** Unlinks and returns the oldest entry, or {@code null}. Lock held. */
    ListEntry pollOldest() {
        ListEntry oldest = head;
        snapshotRevive = null;
        if (oldest != null) {
            if (oldest == snapshotCursor) {
                snapshotCursor = oldest.lpLruNext();
                if (snapshotCursor == null) {
                    snapshotRevive = oldest;
                }
            }
            head = oldest.lpLruNext();
            if (head == null) {
                tail = null;
            }
            oldest.spLruNext(null);
            length--;
        }
        return oldest;
    }

    /** Links an entry at the tail (kernel {@code list_move_tail}, after the poll). Lock held. */
    void addNewest(ListEntry entry) {
        if (entry == snapshotRevive) {
            snapshotCursor = entry;
            snapshotRevive = null;
        }
        entry.spLruNext(null);
        if (tail == null) {
            head = entry;
        } else {
            tail.spLruNext(entry);
        }
        tail = entry;
        length++;
    }

    /** Entries on the list, dead ones included. Lock held. */
    long length() {
        return length;
    }

    /** Counts entries that left their chain but stay linked until a pass or a purge drops them. */
    void addDeadEntries(long count) {
        deadEntries.add(count);
    }

    /** Forgets entries a pass dropped from the list. Lock held. */
    void forgetDeadEntries(long count) {
        if (count != 0) {
            deadEntries.add(-count);
        }
    }

    /** The number of dead entries still linked, as an estimate (see {@link StripedCounter}). */
    long deadEntriesEstimate() {
        return deadEntries.estimate();
    }

    /** Unlinks every dead entry (count 0) from the list. Lock held. Returns how many. */
    long purgeDead() {
        drainAppendStacks();
        long purged = 0;
        ListEntry previous = null;
        ListEntry current = head;
        while (current != null) {
            ListEntry next = current.lpLruNext();
            if (ListEntry.count(current.lvState()) == 0) {
                if (current == snapshotCursor) {
                    snapshotCursor = next;
                }
                if (previous == null) {
                    head = next;
                } else {
                    previous.spLruNext(next);
                }
                if (current == tail) {
                    tail = previous;
                }
                current.spLruNext(null);
                purged++;
            } else {
                previous = current;
            }
            current = next;
        }
        length -= purged;
        forgetDeadEntries(purged);
        return purged;
    }

    /** Drops everything (part of {@code mb_cache_destroy}). Lock held. */
    void clear() {
        for (int slot = STRIDE; slot < appendTops.length; slot += STRIDE) {
            TOP.getAndSet(appendTops, slot, null);
        }
        head = null;
        tail = null;
        length = 0;
        snapshotCursor = null;
        snapshotRevive = null;
        deadEntries.reset();
    }

    /**
     * Starts a snapshot walk at the head of the list: drains the append stacks (every entry created
     * before the walk is then on the list) and takes a new mark. Lock held; one walk at a time (the
     * cache's snapshot lock).
     */
    void startSnapshot() {
        drainAppendStacks();
        // 0 is the mark of an entry no walk copied yet: skipped when the id wraps (after 2^32 - 1
        // walks, an entry still carrying the mark of the walk that many walks ago would be skipped;
        // a cache would have to snapshot every millisecond for 50 days for that).
        snapshotId = snapshotId == -1 ? 1 : snapshotId + 1;
        snapshotCursor = head;
        snapshotRevive = null;
    }

    /** Ends a snapshot walk, finished or not: the passes stop steering a cursor. Lock held. */
    void endSnapshot() {
        snapshotCursor = null;
        snapshotRevive = null;
    }

    /**
     * Copies the next live entries the snapshot walk has not copied yet, looking at no more than
     * {@code maxVisits} entries of the list. Lock held.
     *
     * <p>Why a pair cached for the whole walk is copied exactly once, although the lock is let go
     * between chunks and reclaim passes reorder the list meanwhile: the list changes only at its head
     * (a pass polls entries, {@link #pollOldest}), at its tail (drains, {@link #addNewest}) and by
     * the purge unlinking dead entries. The invariant is "every live entry on the list that the walk
     * has not copied is at or after the cursor". It holds at the start (cursor = head, after the
     * drain). Entries are linked only at the tail, which is after the cursor while there is one; a
     * poll or a purge that unlinks the cursor moves it to the next entry first; a poll of the cursor
     * when it was the tail remembers it, and if the pass puts it back (second chance) it becomes
     * the cursor again. Entries a pass moves from before the cursor to the tail were copied already
     * and carry this walk's mark, so the walk skips them. An entry on the append stacks after the
     * start was created during the walk, and may be left out. The walk ends when the cursor runs
     * off the tail: every entry of the start that is still live was copied by then.
     *
     * @return how many pairs were copied into the arrays
     */
    int snapshotChunk(int[] keys, long[] values, byte[] flags, int from, int max, int maxVisits) {
        ListEntry current = snapshotCursor;
        int id = snapshotId;
        int copied = 0;
        for (int visits = 0; current != null && copied < max && visits < maxVisits; visits++) {
            int state = current.lvState();
            if (ListEntry.count(state) != 0 && current.lpSnapshotMark() != id) {
                current.spSnapshotMark(id);
                keys[from + copied] = current.key;
                values[from + copied] = current.value;
                flags[from + copied] = (byte) (((state & ListEntry.REUSABLE) != 0 ? 1 : 0)
                        | ((state & ListEntry.REFERENCED) != 0 ? 2 : 0));
                copied++;
            }
            current = current.lpLruNext();
        }
        snapshotCursor = current;
        return copied;
    }

    /** Whether the snapshot walk has run off the tail. Lock held. */
    boolean snapshotDone() {
        return snapshotCursor == null;
    }
}
