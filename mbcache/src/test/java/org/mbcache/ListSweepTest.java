package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mbcache.internal.HashedWaitQueues;
import org.mbcache.internal.Lifecycle;

/**
 * The list layout's reclaim step on its own ({@link ListSweep}), over a real {@link ListLru} and a
 * one-bucket {@link ListTable}, with the reclaim lock held as a pass holds it: the pass's extent, a
 * free, a second chance, a held entry kept, a dead entry dropped, and the creates a pass overlaps.
 */
class ListSweepTest {

    private final Lifecycle lifecycle = new Lifecycle();
    private final ListEntryOwner owner = new ListEntryOwner(lifecycle, new HotCellTable(), new HashedWaitQueues(1));
    private final ListTable table = new ListTable(0, 1L);
    private final ListLru lru = new ListLru(1, new ReentrantLock());
    private final ListSweep sweep = new ListSweep(lru, table);

    /** Holds the reclaim lock (the LRU list's), as a pass does. */
    @BeforeEach
    void holdTheReclaimLock() {
        lru.lock.lock();
    }

    /** Lets the reclaim lock go. */
    @AfterEach
    void letTheReclaimLockGo() {
        lru.lock.unlock();
    }

    /** A pair created as a create does: hashed, appended, and released by its creator (count 1). */
    private ListEntry cached(int key, long value) {
        ListEntry entry = new ListEntry(owner, key, value, true);
        assertEquals(0, ListWalk.hashUnlessCached(table, 0, entry, Integer.MAX_VALUE, lifecycle));
        lru.append(entry);
        entry.releaseReference();
        return entry;
    }

    /** The entry's reference count (cold entries: every reference is in the word). */
    private static int count(ListEntry entry) {
        return ListEntry.count(entry.lvState());
    }

    /** One pass that takes one step; what the step did. */
    private int onePassOfOneStep() {
        sweep.beginPass();
        int outcome = sweep.step();
        sweep.endPass();
        return outcome;
    }

    /** Asserts that {@code moved} stayed in its chain and went to the list's tail, behind {@code other}. */
    private void assertMovedBehind(ListEntry other, ListEntry moved) {
        assertEquals(2, ListWalk.chainLength(table, 0));
        assertSame(other, lru.pollOldest());
        assertSame(moved, lru.pollOldest());
    }

    @Test
    void aPassExtendsOverTheEntriesAppendedBeforeIt() {
        cached(1, 10);
        cached(2, 20);
        cached(3, 30);
        assertEquals(3, sweep.beginPass());
        sweep.endPass();
    }

    @Test
    void anUnheldUnreferencedEntryIsFreedAndLeavesItsChain() {
        ListEntry entry = cached(1, 10);
        assertEquals(ReclaimBooks.Sweep.FREED, onePassOfOneStep());
        assertEquals(0, count(entry));
        assertEquals(0, ListWalk.chainLength(table, 0));
        assertEquals(0, lru.length());
    }

    @Test
    void aReferencedEntryLosesItsFlagAndMovesToTheTail() {
        ListEntry referenced = cached(1, 10);
        ListEntry other = cached(2, 20);
        referenced.setFlag(ListEntry.REFERENCED, true);
        assertEquals(ReclaimBooks.Sweep.SECOND_CHANCE, onePassOfOneStep());
        assertFalse(referenced.hasFlag(ListEntry.REFERENCED));
        assertEquals(1, count(referenced));
        assertMovedBehind(other, referenced);
    }

    @Test
    void aHeldEntryIsKeptAndMovesToTheTail() {
        ListEntry held = cached(1, 10);
        ListEntry other = cached(2, 20);
        assertTrue(held.tryAcquire());
        assertEquals(ReclaimBooks.Sweep.KEPT, onePassOfOneStep());
        assertEquals(2, count(held));
        assertMovedBehind(other, held);
    }

    @Test
    void aHeldReferencedEntryLosesItsFlagToo() {
        ListEntry held = cached(1, 10);
        assertTrue(held.tryAcquire());
        held.setFlag(ListEntry.REFERENCED, true);
        assertEquals(ReclaimBooks.Sweep.SECOND_CHANCE, onePassOfOneStep());
        assertFalse(held.hasFlag(ListEntry.REFERENCED));
        assertEquals(2, count(held));
    }

    @Test
    void aDeadEntryIsDroppedAsEmptyAndForgottenAtTheEndOfThePass() {
        cached(1, 10);
        assertSame(ListTable.DELETED, ListWalk.deleteOrAcquire(table, 0, 1, 10, lifecycle));
        lru.addDeadEntries(1);
        sweep.beginPass();
        assertEquals(ReclaimBooks.Sweep.EMPTY, sweep.step());
        assertEquals(0, lru.length());
        assertEquals(1, lru.deadEntriesEstimate());
        sweep.endPass();
        assertEquals(0, lru.deadEntriesEstimate());
    }

    @Test
    void anEmptyListEndsThePass() {
        assertEquals(0, sweep.beginPass());
        assertEquals(ReclaimBooks.Sweep.END, sweep.step());
        sweep.endPass();
    }

    @Test
    void entriesCreatedDuringAPassWaitOnTheirStackBehindIt() {
        cached(1, 10);
        sweep.beginPass();
        ListEntry later = cached(2, 20);
        assertEquals(ReclaimBooks.Sweep.FREED, sweep.step());
        assertEquals(ReclaimBooks.Sweep.END, sweep.step());
        sweep.endPass();
        assertEquals(1, count(later));
        assertEquals(1, sweep.beginPass());
        sweep.endPass();
    }
}
