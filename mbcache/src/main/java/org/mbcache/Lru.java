package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.ReentrantLock;
import org.mbcache.MbCache.Entry;
import org.mbcache.internal.StripedStatistics;

/**
 * The LRU list of all entries in creation order (kernel {@code c_list}), with its lock
 * ({@code c_list_lock}) and the lock-free append stacks that keep creates off that lock.
 *
 * <p><b>Append stacks.</b> The kernel appends under the list lock; taken by every create, that lock
 * made creates 15 times slower at two threads in this project's measurements. Here a create pushes
 * its entry onto one of several Treiber stacks, linked through {@code lruNext}, newest on top; the
 * creating thread's id picks the stack, so creates on different cores seldom write the same line.
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
final class Lru {
    private static final VarHandle TOP = MethodHandles.arrayElementVarHandle(Entry[].class);
    /** Stack tops 32 references (128 bytes with compressed oops) apart, each on its own lines. */
    private static final int STRIDE = 32;

    /** Guards the list fields below; held by reclaim passes, purges and close. */
    final ReentrantLock lock = new ReentrantLock();
    private Entry head;
    private Entry tail;
    /** Entries on the list, dead ones included. Lock held. */
    private long length;

    /**
     * The tops of the append stacks: stack {@code i} at {@code (i + 1) * STRIDE}. The first
     * {@code STRIDE} slots stay empty, so that no top shares a line with the array's header or with
     * whatever object the heap put just before the array.
     */
    private final Entry[] appendTops;
    private final int stackMask;
    /**
     * Entries that left their chain but are still linked (list or stacks). Its estimate decides a
     * purge; the batch (how far the estimate may trail) is the cache's choice.
     */
    private final StripedCounter deadEntries;

    Lru(long deadEntriesBatch) {
        int stacks = StripedStatistics.stripeCount();
        appendTops = new Entry[(stacks + 1) * STRIDE];
        stackMask = stacks - 1;
        deadEntries = new StripedCounter(deadEntriesBatch);
    }

    /**
     * Appends a new entry (kernel: {@code list_add_tail(&entry->e_list, &cache->c_list)}), lock-free.
     * A CAS loop of two accesses and no allocation: nothing can leave it half done.
     */
    void append(Entry entry) {
        int slot = (StripedStatistics.stripeOfCurrentThread(stackMask) + 1) * STRIDE;
        for (;;) {
            Entry top = lvTop(slot);
            entry.spLruNext(top); // plain: published by the CAS below (volatile, so release)
            if (casTop(slot, top, entry)) {
                return;
            }
        }
    }

    private Entry lvTop(int slot) {
        return (Entry) TOP.getVolatile(appendTops, slot);
    }

    private boolean casTop(int slot, Entry expected, Entry updated) {
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
            Entry newest = (Entry) TOP.getAndSet(appendTops, slot, null);
            Entry older = null;
            Entry current = newest;
            long drained = 0;
            while (current != null) {
                Entry below = current.lpLruNext();
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
    Entry pollOldest() {
        Entry oldest = head;
        if (oldest != null) {
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
    void addNewest(Entry entry) {
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
        Entry previous = null;
        Entry current = head;
        while (current != null) {
            Entry next = current.lpLruNext();
            if (Entry.count(current.lvState()) == 0) {
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
        deadEntries.reset();
    }
}
