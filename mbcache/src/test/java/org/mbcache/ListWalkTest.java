package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mbcache.internal.HashedWaitQueues;
import org.mbcache.internal.Lifecycle;

/**
 * The list layout's walks on their own ({@link ListWalk}), over a one-bucket {@link ListTable} and
 * an entry owner of no cache: the create's critical sections and the chain cap, the lookups
 * (optimistic, and under the bit when a writer holds it), and {@code deleteOrGet}'s claim.
 */
class ListWalkTest {

    private static final int CAP = 3;

    private final Lifecycle lifecycle = new Lifecycle();
    private final ListEntryOwner owner = new ListEntryOwner(lifecycle, new HotCellTable(), new HashedWaitQueues(1));
    private final ListTable table = new ListTable(0, 1L);
    private final ExecutorService other = Executors.newSingleThreadExecutor();

    /** Stops the thread {@link #underWriter} runs walks on. */
    @AfterEach
    void stopOtherThread() {
        other.shutdownNow();
    }

    /** A new entry of the pair, held by its creator (count 2), not yet hashed. */
    private ListEntry fresh(int key, long value) {
        return new ListEntry(owner, key, value, true);
    }

    /** The pair hashed by the mainline create and released by its creator: only the cache's reference left. */
    private ListEntry cached(int key, long value) {
        ListEntry entry = fresh(key, value);
        assertEquals(0, ListWalk.hashUnlessCached(table, 0, entry, CAP, lifecycle));
        entry.releaseReference();
        return entry;
    }

    /** The entry's reference count (cold entries: every reference is in the word). */
    private static int count(ListEntry entry) {
        return ListEntry.count(entry.lvState());
    }

    /** Whether bucket 0 holds a request for the pair, read under its bit. */
    private boolean requested(int key, long value) {
        table.lock(0);
        try {
            return table.hasRequest(0, key, value);
        } finally {
            table.unlock(0);
        }
    }

    /**
     * Runs {@code walk} on another thread while this one holds bucket 0's bit, so that the walk's
     * optimistic read meets a writer and the walk decides under the bit; {@code whileHeld} runs
     * before the bit is let go. Returns the walk's answer.
     */
    private <T> T underWriter(Callable<T> walk, Runnable whileHeld) throws Exception {
        Future<T> answer;
        table.lock(0);
        try {
            answer = other.submit(walk);
            Thread.sleep(100); // the walk reads the chain while the bit is held, and then spins on it
            whileHeld.run();
        } finally {
            table.unlock(0);
        }
        return answer.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aCreateBelowTheCapReportsNothingReclaimed() {
        cached(1, 10);
        assertEquals(0, ListWalk.hashUnlessCached(table, 0, fresh(2, 20), CAP, lifecycle));
        assertEquals(2, ListWalk.chainLength(table, 0));
    }

    @Test
    void aCreateAtTheCapReclaimsTheOldestUnheldEntryAndReportsTheLengthItFound() {
        ListEntry oldest = cached(1, 10);
        cached(2, 20);
        cached(3, 30);
        long outcome = ListWalk.hashUnlessCached(table, 0, fresh(4, 40), CAP, lifecycle);
        assertEquals(3L << 32 | 1, outcome);
        assertEquals(0, count(oldest));
        assertEquals(3, ListWalk.chainLength(table, 0));
    }

    @Test
    void theMainlineCreateRefusesACachedPairAndLeavesTheChainAlone() {
        ListEntry first = cached(1, 10);
        assertEquals(ListWalk.ALREADY_CACHED, ListWalk.hashUnlessCached(table, 0, fresh(1, 10), CAP, lifecycle));
        assertEquals(1, ListWalk.chainLength(table, 0));
        assertSame(first, ListWalk.get(table, 0, 1, 10));
    }

    @Test
    void aClosedCacheRefusesTheMainlineCreateAndHashesNothing() {
        lifecycle.beginClose();
        ListEntry entry = fresh(1, 10);
        assertThrows(IllegalStateException.class, () -> ListWalk.hashUnlessCached(table, 0, entry, CAP, lifecycle));
        assertEquals(0, ListWalk.chainLength(table, 0));
    }

    @Test
    void aFullChainRefusesTheRestoreAndKeepsItsEntries() {
        ListEntry[] entries = {cached(1, 10), cached(2, 20), cached(3, 30)};
        assertEquals(ListWalk.CHAIN_FULL, ListWalk.restoreUnlessCached(table, 0, fresh(4, 40), CAP, lifecycle));
        assertEquals(3, ListWalk.chainLength(table, 0));
        for (ListEntry entry : entries) {
            assertEquals(1, count(entry));
        }
        assertNull(ListWalk.get(table, 0, 4, 40));
    }

    @Test
    void aRestoreBelowTheCapHashesItsEntry() {
        ListEntry restored = fresh(1, 10);
        assertEquals(0, ListWalk.restoreUnlessCached(table, 0, restored, CAP, lifecycle));
        restored.releaseReference();
        assertSame(restored, ListWalk.get(table, 0, 1, 10));
    }

    @Test
    void aRestoreRefusesAPairThatAnotherCreateHasRequested() {
        assertTrue(ListWalk.requestPair(table, 0, 1, 10));
        assertEquals(ListWalk.ALREADY_CACHED, ListWalk.restoreUnlessCached(table, 0, fresh(1, 10), CAP, lifecycle));
        assertEquals(0, ListWalk.chainLength(table, 0));
    }

    @Test
    void aRequestedPairIsRefusedAsADuplicate() {
        assertTrue(ListWalk.requestPair(table, 0, 1, 10));
        assertFalse(ListWalk.requestPair(table, 0, 1, 10));
    }

    @Test
    void aCachedPairIsRefusedWithoutLeavingARequest() {
        cached(1, 10);
        assertFalse(ListWalk.requestPair(table, 0, 1, 10));
        assertFalse(requested(1, 10));
    }

    @Test
    void aPairHashedWhileTheDuplicateCheckWaitedForTheBitIsRefusedUnderIt() throws Exception {
        ListEntry twin = fresh(1, 10);
        boolean requestedToo = underWriter(() -> ListWalk.requestPair(table, 0, 1, 10), () -> {
            table.ensureRoom(0);
            table.addNewest(0, twin);
        });
        assertFalse(requestedToo);
        assertFalse(requested(1, 10));
    }

    @Test
    void hashingARequestedPairSwapsTheRequestForTheEntry() {
        assertTrue(ListWalk.requestPair(table, 0, 1, 10));
        ListEntry entry = fresh(1, 10);
        assertEquals(0, ListWalk.hashRequested(table, 0, entry, CAP, lifecycle));
        assertFalse(requested(1, 10));
        entry.releaseReference();
        assertSame(entry, ListWalk.get(table, 0, 1, 10));
    }

    @Test
    void aCreateWhoseRequestCloseDroppedIsTheClosedCachesExceptionAndHashesNothing() {
        assertThrows(IllegalStateException.class, () -> ListWalk.hashRequested(table, 0, fresh(1, 10), CAP, lifecycle));
        assertEquals(0, ListWalk.chainLength(table, 0));
    }

    @Test
    void findAnswersTheNewestReusableEntryReferenced() {
        cached(1, 10);
        ListEntry newer = cached(1, 11);
        cached(1, 12).setFlag(ListEntry.REUSABLE, false);
        assertSame(newer, ListWalk.find(table, 0, 1, null));
        assertEquals(2, count(newer));
    }

    @Test
    void findContinuesBelowTheEntryItWasGiven() {
        ListEntry older = cached(1, 10);
        ListEntry newer = cached(1, 11);
        assertSame(older, ListWalk.find(table, 0, 1, newer));
        assertNull(ListWalk.find(table, 0, 1, older));
    }

    @Test
    void findUnderTheBitContinuesBelowTheEntryItWasGiven() throws Exception {
        ListEntry older = cached(1, 10);
        ListEntry newer = cached(1, 11);
        assertSame(older, underWriter(() -> ListWalk.find(table, 0, 1, newer), () -> {}));
        assertEquals(2, count(older));
    }

    @Test
    void findUnderTheBitStartsFromTheNewestWhenTheGivenEntryLeftTheChain() throws Exception {
        cached(1, 10);
        ListEntry gone = cached(1, 11);
        ListEntry newest = cached(1, 12);
        assertSame(ListTable.DELETED, ListWalk.deleteOrAcquire(table, 0, 1, 11, lifecycle));
        assertSame(newest, underWriter(() -> ListWalk.find(table, 0, 1, gone), () -> {}));
    }

    @Test
    void findUnderTheBitSeesAnEntryTheWriterHashed() throws Exception {
        ListEntry hashed = fresh(1, 10);
        ListEntry found = underWriter(() -> ListWalk.find(table, 0, 1, null), () -> {
            table.ensureRoom(0);
            table.addNewest(0, hashed);
        });
        assertSame(hashed, found);
        assertEquals(3, count(hashed)); // the cache, the creator, the lookup
    }

    @Test
    void getAnswersTheExactPairReferenced() {
        cached(1, 10);
        ListEntry other = cached(1, 11);
        assertSame(other, ListWalk.get(table, 0, 1, 11));
        assertEquals(2, count(other));
        assertNull(ListWalk.get(table, 0, 1, 12));
    }

    @Test
    void getUnderTheBitAnswersTheExactPairReferenced() throws Exception {
        cached(1, 10);
        ListEntry other = cached(1, 11);
        assertSame(other, underWriter(() -> ListWalk.get(table, 0, 1, 11), () -> {}));
        assertEquals(2, count(other));
    }

    @Test
    void getUnderTheBitMissesAPairTheWriterRemoved() throws Exception {
        ListEntry entry = cached(1, 10);
        ListEntry found = underWriter(() -> ListWalk.get(table, 0, 1, 10), () -> {
            assertTrue(entry.tryClaim());
            table.removeAt(0, 0);
        });
        assertNull(found);
    }

    @Test
    void anUnheldPairIsDeletedAndLeavesItsChain() {
        ListEntry entry = cached(1, 10);
        assertSame(ListTable.DELETED, ListWalk.deleteOrAcquire(table, 0, 1, 10, lifecycle));
        assertEquals(0, count(entry));
        assertEquals(0, ListWalk.chainLength(table, 0));
    }

    @Test
    void aHeldPairIsHandedOverReferencedAndStaysInItsChain() {
        ListEntry entry = cached(1, 10);
        assertTrue(entry.tryAcquire());
        assertSame(entry, ListWalk.deleteOrAcquire(table, 0, 1, 10, lifecycle));
        assertEquals(3, count(entry));
        assertEquals(1, ListWalk.chainLength(table, 0));
    }

    @Test
    void deleteOrAcquireOfAnAbsentPairIsAMiss() {
        cached(1, 10);
        assertNull(ListWalk.deleteOrAcquire(table, 0, 1, 11, lifecycle));
        assertEquals(1, ListWalk.chainLength(table, 0));
    }

    @Test
    void deleteOrAcquireOfAnAbsentPairInAClosedCacheIsTheClosedCachesException() {
        lifecycle.beginClose();
        assertThrows(IllegalStateException.class, () -> ListWalk.deleteOrAcquire(table, 0, 1, 10, lifecycle));
    }
}
