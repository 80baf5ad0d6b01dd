package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.mbcache.contract.ConcurrentRounds;

/** The LRU list and its append stacks, on their own. */
class ListLruTest {

    private final ListLru lru = new ListLru(1, new java.util.concurrent.locks.ReentrantLock());

    private static ListEntry entry(long value) {
        return new ListEntry(null, 0, value, true);
    }

    private List<ListEntry> drainAll() {
        lru.lock.lock();
        try {
            lru.drainAppendStacks();
            List<ListEntry> all = new ArrayList<>();
            ListEntry oldest;
            while ((oldest = lru.pollOldest()) != null) {
                all.add(oldest);
            }
            return all;
        } finally {
            lru.lock.unlock();
        }
    }

    @Test
    void oneThreadsAppendsComeOutInCreationOrder() {
        List<ListEntry> appended = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            ListEntry entry = entry(i);
            appended.add(entry);
            lru.append(entry);
        }
        assertEquals(appended, drainAll());
    }

    @Test
    void anEntryMovedToTheTailComesOutLast() {
        ListEntry first = entry(1);
        ListEntry second = entry(2);
        lru.append(first);
        lru.append(second);
        lru.lock.lock();
        try {
            lru.drainAppendStacks();
            lru.addNewest(lru.pollOldest());
            assertSame(second, lru.pollOldest());
            assertSame(first, lru.pollOldest());
            assertNull(lru.pollOldest());
            assertEquals(0, lru.length());
        } finally {
            lru.lock.unlock();
        }
    }

    @Test
    void concurrentAppendsAreAllDrainedOnce() throws Exception {
        int perThread = 20_000;
        Set<ListEntry> drained = new HashSet<>();
        ConcurrentRounds.together(
                () -> { for (int i = 0; i < perThread; i++) lru.append(entry(i)); },
                () -> { for (int i = 0; i < perThread; i++) lru.append(entry(-i)); },
                () -> { for (int i = 0; i < 100; i++) drained.addAll(drainAll()); });
        drained.addAll(drainAll());
        assertEquals(2 * perThread, drained.size());
    }

    @Test
    void aPurgeUnlinksDeadEntriesOnly() {
        ListEntry live = entry(1);
        ListEntry dead = entry(2);
        lru.append(live);
        lru.append(dead);
        dead.kill();
        lru.addDeadEntries(1);
        lru.lock.lock();
        try {
            assertEquals(1, lru.purgeDead());
            assertEquals(1, lru.length());
        } finally {
            lru.lock.unlock();
        }
        assertEquals(0, lru.deadEntriesEstimate());
        assertEquals(List.of(live), drainAll());
    }
}
