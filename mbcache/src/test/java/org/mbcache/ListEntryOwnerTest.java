package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.mbcache.internal.HashedWaitQueues;
import org.mbcache.internal.Lifecycle;

/**
 * One list-layout cache's side of its entries on its own ({@link ListEntryOwner}), with a real
 * {@link Lifecycle}: the release of a caller's reference and the waiters' bit, the cache's
 * {@code release} of a closed cache, the over-release's message, and the hot-mode vote.
 */
class ListEntryOwnerTest {

    private final Lifecycle lifecycle = new Lifecycle();
    private final HotCellTable hotCells = new HotCellTable();
    private final ListEntryOwner owner = new ListEntryOwner(lifecycle, hotCells, new HashedWaitQueues(1));

    /** An entry of this owner with the cache's reference and {@code callers} callers'. */
    private ListEntry held(int key, int callers) {
        ListEntry entry = new ListEntry(owner, key, 10, true); // the cache and the creator
        for (int i = 1; i < callers; i++) {
            assertTrue(entry.tryAcquire());
        }
        if (callers == 0) {
            entry.releaseReference();
        }
        return entry;
    }

    /** The entry's reference count (cold entries: every reference is in the word). */
    private static int count(ListEntry entry) {
        return ListEntry.count(entry.lvState());
    }

    /** An entry of {@code callers} callers and a waiter's bit, after the owner released one of them. */
    private ListEntry releasedWhileWaitedFor(int callers) {
        ListEntry entry = held(1, callers);
        assertTrue(entry.markWaitingUnlessUnused());
        owner.releaseReference(entry);
        assertEquals(callers, count(entry));
        return entry;
    }

    @Test
    void aReleaseThatLeavesAWaitedForEntryUnusedClearsTheWaitersBit() {
        assertFalse(releasedWhileWaitedFor(2).hasFlag(ListEntry.WAITERS));
    }

    @Test
    void aReleaseThatLeavesTheEntryStillInUseKeepsTheWaitersBit() {
        assertTrue(releasedWhileWaitedFor(3).hasFlag(ListEntry.WAITERS));
    }

    @Test
    void theCachesReleaseDropsOneCallersReference() {
        ListEntry entry = held(1, 2);
        owner.release(entry);
        assertEquals(2, count(entry));
    }

    @Test
    void theCachesReleaseOfAClosedCacheIsRefusedAndKeepsTheReference() {
        ListEntry entry = held(1, 1);
        lifecycle.beginClose();
        assertThrows(IllegalStateException.class, () -> owner.release(entry));
        assertEquals(2, count(entry));
    }

    @Test
    void anOverReleaseNamesTheMisuseWhileTheCacheIsOpen() {
        ListEntry entry = held(1, 0);
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> owner.releaseReference(entry));
        String message = refused.getMessage();
        assertTrue(message.startsWith("entry released more often than it was handed out"), message);
        assertEquals(1, count(entry));
    }

    @Test
    void anOverReleaseAfterCloseSaysTheCacheIsClosed() {
        ListEntry entry = held(1, 0);
        lifecycle.beginClose();
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> owner.releaseReference(entry));
        assertEquals(Lifecycle.CLOSED_MESSAGE, refused.getMessage());
    }

    @Test
    void anEntryThatEveryFailureHitsIsVotedHotAfterTheSwitchVotes() {
        ListEntry contended = held(1, 1);
        int votes = 1;
        while (!owner.noteContention(contended)) {
            votes++;
            assertTrue(votes <= HotReferences.HOT_SWITCH_VOTES, "no switch after " + votes + " failures");
        }
        assertEquals(HotReferences.HOT_SWITCH_VOTES, votes);
    }

    @Test
    void entriesThatMeetByChanceInOneSlotCancelEachOtherOut() {
        int otherKey = 2;
        while (ContentionVote.slotOf(otherKey) != ContentionVote.slotOf(1)) {
            otherKey++;
        }
        ListEntry one = held(1, 1);
        ListEntry other = held(otherKey, 1);
        for (int i = 0; i < 10 * HotReferences.HOT_SWITCH_VOTES; i++) {
            assertFalse(owner.noteContention(one));
            assertFalse(owner.noteContention(other));
        }
    }

    @Test
    void theEntriesHotCellsAreTheCachesTable() {
        assertSame(hotCells, owner.hotCells());
    }
}
