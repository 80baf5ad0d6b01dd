package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link HotReferences} alone, on a fake {@link HotReferences.Host}: a word array and a
 * {@link HotCellTable}, with a layout of its own (count in the low 16 bits, then the frozen, hot
 * and waiters flags, and an occupant's identity in the high bits, as a compact slot has), and hooks
 * that let a test act inside an operation (after a cell lookup, before a CAS), standing for another
 * thread at that moment. The invariant checked throughout is the class comment's: callers'
 * references = (count - 1) + the sum of the cells, every cell at least 0, and the word never left
 * frozen.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HotReferencesTest {

    private static final long COUNT_MASK = 0xFFFF;
    private static final long FROZEN = 1L << 16;
    private static final long HOT = 1L << 17;
    private static final long WAITERS = 1L << 18;
    private static final long IDENTITY = 0xFFFFL << 32;
    /** A flag of the layout's own that the protocol leaves alone, as a reclaim's "referenced" is. */
    private static final long REFERENCED = 1L << 19;
    private static final HotReferences REFS = new HotReferences(COUNT_MASK, FROZEN, HOT, WAITERS, IDENTITY);

    /** The word of a cold occupant {@code identity} with {@code count} references (the cache's among them). */
    private static long word(long identity, long count) {
        return identity << 32 | count;
    }

    /**
     * Words in an array, cells in a {@link HotCellTable} under the slot and the word's identity (as
     * a compact table keeps them). A hook queued in {@link #afterCellLookup} runs once, after a
     * lookup found cells and before the caller gets them; one in {@link #beforeCas}, before a CAS.
     */
    private static final class FakeHost implements HotReferences.Host {
        private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);
        final long[] words;
        final HotCellTable table = new HotCellTable();
        final Deque<Runnable> afterCellLookup = new ArrayDeque<>();
        final Deque<Runnable> beforeCas = new ArrayDeque<>();

        FakeHost(int slots) {
            words = new long[slots];
        }

        void set(long at, long word) {
            WORDS.setVolatile(words, (int) at, word);
        }

        @Override
        public long lvWord(long at) {
            return (long) WORDS.getVolatile(words, (int) at);
        }

        @Override
        public boolean casWord(long at, long expected, long updated) {
            Runnable hook = beforeCas.poll();
            if (hook != null) {
                hook.run();
            }
            return WORDS.compareAndSet(words, (int) at, expected, updated);
        }

        @Override
        public long[] hotCells(long at, long word) {
            long[] cells = table.cells((int) at, null, word & IDENTITY, at);
            if (cells != null) {
                Runnable hook = afterCellLookup.poll();
                if (hook != null) {
                    hook.run();
                }
            }
            return cells;
        }

        @Override
        public boolean publishHotCells(long at, long word, long[] cells) {
            return table.publish((int) at, null, word & IDENTITY, at, cells);
        }

        @Override
        public void retireHotCells(long at, long[] cells) {
            table.retire(cells);
        }

        @Override
        public boolean hotBudgetSpent() {
            return table.full();
        }

        /** The cells of the occupant of {@code at} now, without running hooks. */
        long[] cellsNow(long at) {
            return table.cells((int) at, null, lvWord(at) & IDENTITY, at);
        }

        /** The callers' references of the occupant of {@code at}: count - 1 + the cells. */
        long callers(long at) {
            long w = lvWord(at);
            long[] cells = cellsNow(at);
            long sum = 0;
            if (cells != null) {
                for (int i = HotReferences.CELL_STRIDE; i < cells.length; i += HotReferences.CELL_STRIDE) {
                    assertTrue(cells[i] >= 0, "a cell below zero");
                    sum += cells[i];
                }
            }
            assertEquals(0, w & FROZEN, "the word was left frozen");
            return (w & COUNT_MASK) - 1 + sum;
        }
    }

    private final FakeHost host = new FakeHost(2 * HotReferences.MAX_HOT_ENTRIES);

    /** Puts a cold occupant with {@code count} references in slot {@code at} and switches it hot, adding none. */
    private long hot(long at, long identity, long count) {
        host.set(at, word(identity, count));
        assertTrue(REFS.switchToHot(host, at, host.lvWord(at), 0));
        return host.lvWord(at);
    }

    /** A cold release as a layout does it: a CAS loop on the word, going hot when it reads the bit. */
    private static int coldOrHotRelease(FakeHost host, long at) {
        for (;;) {
            long w = host.lvWord(at);
            if ((w & HOT) != 0) {
                return REFS.release(host, at, w);
            }
            if ((w & COUNT_MASK) <= 1) {
                return HotReferences.REFUSED;
            }
            if (host.casWord(at, w, w - 1)) {
                return HotReferences.RELEASED;
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Switching
    // ------------------------------------------------------------------------------------------

    @Test
    void aSwitchAddsTheHotBitAndTheSwitchersReferencesInOneStepAndPublishesCells() {
        long cold = word(7, 2);
        host.set(0, cold);

        assertTrue(REFS.switchToHot(host, 0, cold, 1));

        assertEquals(cold + 1 | HOT, host.lvWord(0));
        assertNotNull(host.cellsNow(0));
        assertEquals(1, host.table.size());
        assertEquals(2, host.callers(0));
    }

    @Test
    void aSwitchWithTheBudgetSpentAllocatesNothingAndChangesNothing() {
        for (int at = 0; at < HotReferences.MAX_HOT_ENTRIES; at++) {
            hot(at, 7, 2);
        }
        long cold = word(7, 2);
        int at = HotReferences.MAX_HOT_ENTRIES;
        host.set(at, cold);
        int calls = 20_000;
        for (int i = 0; i < calls; i++) { // warm up, so the measured loop runs compiled code
            REFS.switchToHot(host, at, cold, 1);
        }

        long before = AllocatedBytes.byCurrentThread();
        boolean switched = false;
        for (int i = 0; i < calls; i++) {
            switched |= REFS.switchToHot(host, at, cold, 1);
        }
        long bytes = AllocatedBytes.byCurrentThread() - before;

        assertFalse(switched);
        assertEquals(cold, host.lvWord(at));
        // Under a byte a switch: cells are over a kilobyte each; what remains is the reflective
        // counter call's own few hundred bytes.
        assertTrue(bytes < calls, bytes + " bytes allocated by " + calls + " switches the budget refuses");
    }

    @Test
    void aSwitchOfAWordThatIsHotAlreadyChangesNothing() {
        long hot = hot(0, 7, 2);

        assertFalse(REFS.switchToHot(host, 0, hot, 1));
        assertFalse(REFS.switchToHot(host, 0, word(7, 2), 1), "a stale cold word, but the cells are there");

        assertEquals(hot, host.lvWord(0));
        assertEquals(1, host.table.size());
    }

    @Test
    void aSwitchThatFindsTheOccupantDeadRetiresTheCellsItPublished() {
        long seen = word(7, 2);
        host.set(0, word(7, 0)); // killed after the switching thread read its word

        assertFalse(REFS.switchToHot(host, 0, seen, 1));

        assertEquals(word(7, 0), host.lvWord(0));
        assertEquals(0, host.table.size());
    }

    @Test
    void aSwitchThatFindsAnotherOccupantRetiresTheCellsItPublished() {
        long seen = word(7, 2);
        host.set(0, word(8, 2)); // the slot was claimed and reused after the read

        assertFalse(REFS.switchToHot(host, 0, seen, 1));

        assertEquals(word(8, 2), host.lvWord(0));
        assertEquals(0, host.table.size());
        assertNull(host.cellsNow(0));
    }

    @Test
    void aSwitchThatLosesToAnotherThreadsSwitchRetiresItsOwnCells() {
        long seen = word(7, 2);
        host.set(0, seen);
        // Between this thread's publication and its CAS, another switch: a word with the hot bit
        // (its cells published by the winner are stood for by this word alone).
        host.beforeCas.add(() -> host.set(0, seen + 1 | HOT));

        assertFalse(REFS.switchToHot(host, 0, seen, 1));

        assertEquals(seen + 1 | HOT, host.lvWord(0));
        assertEquals(0, host.table.size());
    }

    @Test
    void noMoreThanMaxHotEntriesAreHotAtOnceAndAClaimGivesItsPlaceBack() {
        for (int at = 0; at < HotReferences.MAX_HOT_ENTRIES; at++) {
            hot(at, at, 1);
        }
        long over = HotReferences.MAX_HOT_ENTRIES;
        long cold = word(over, 2);
        host.set(over, cold);

        assertFalse(REFS.switchToHot(host, over, cold, 1));
        assertEquals(cold, host.lvWord(over), "over the budget the entry stays cold");

        assertTrue(REFS.tryClaim(host, 0, host.lvWord(0), 0));
        assertTrue(REFS.switchToHot(host, over, cold, 1));
        assertEquals(HotReferences.MAX_HOT_ENTRIES, host.table.size());
    }

    // ------------------------------------------------------------------------------------------
    // Acquire and release
    // ------------------------------------------------------------------------------------------

    @Test
    void aHotAcquireAddsAUnitToACellAndLeavesTheWordAlone() {
        long hot = hot(0, 7, 1);

        assertTrue(REFS.tryAcquire(host, 0, hot));

        assertEquals(hot, host.lvWord(0));
        assertEquals(1, host.callers(0));
    }

    @Test
    void aHotReleaseTakesTheUnitBackFromTheCell() {
        long hot = hot(0, 7, 1);
        REFS.tryAcquire(host, 0, hot);

        assertEquals(HotReferences.RELEASED, REFS.release(host, 0, hot));

        assertEquals(hot, host.lvWord(0));
        assertEquals(0, host.callers(0));
    }

    @Test
    void aReleaseOfAReferenceTakenBeforeTheSwitchComesOutOfTheCount() {
        long hot = hot(0, 7, 3); // the cache and two callers

        assertEquals(HotReferences.RELEASED, REFS.release(host, 0, hot));

        assertEquals(hot - 1, host.lvWord(0));
        assertEquals(1, host.callers(0));
    }

    @Test
    void aReferenceTakenOnOneThreadCanBeReleasedOnAnother() throws Exception {
        long hot = hot(0, 7, 1);
        try (OtherThread other = new OtherThread()) {
            assertTrue(other.call(() -> REFS.tryAcquire(host, 0, hot)));
        }

        assertEquals(HotReferences.RELEASED, REFS.release(host, 0, hot));

        assertEquals(hot, host.lvWord(0));
        assertEquals(0, host.callers(0));
    }

    @Test
    void anOverReleaseIsRefusedAndChangesNothing() {
        long hot = hot(0, 7, 1); // the cache's reference only

        assertEquals(HotReferences.REFUSED, REFS.release(host, 0, hot));

        assertEquals(hot, host.lvWord(0), "not frozen, count unchanged");
        assertEquals(0, host.callers(0));
    }

    @Test
    void aReleaseOnADeadOccupantIsRefused() {
        long hot = hot(0, 7, 2);
        host.set(0, hot & ~COUNT_MASK); // killed (close)

        assertEquals(HotReferences.REFUSED, REFS.release(host, 0, hot));
    }

    @Test
    void anAcquireOnADeadOccupantFailsAndLeavesNoUnit() {
        long hot = hot(0, 7, 1);
        host.set(0, hot & ~COUNT_MASK);

        assertFalse(REFS.tryAcquire(host, 0, hot));
        assertFalse(REFS.tryAcquire(host, 0, hot & ~COUNT_MASK));
    }

    // ------------------------------------------------------------------------------------------
    // Claims
    // ------------------------------------------------------------------------------------------

    @Test
    void aClaimOfAnUnusedHotOccupantTakesTheCountToZeroAndRetiresTheCells() {
        long hot = hot(0, 7, 1);

        assertTrue(REFS.tryClaim(host, 0, hot, 0));

        assertEquals(hot & ~COUNT_MASK, host.lvWord(0), "count 0; flags and identity kept, not frozen");
        assertEquals(0, host.table.size());
        assertFalse(REFS.tryAcquire(host, 0, hot), "a hit on the claimed occupant fails");
    }

    @Test
    void aClaimFailsWhileACellHoldsAUnit() {
        long hot = hot(0, 7, 1);
        REFS.tryAcquire(host, 0, hot);

        assertFalse(REFS.tryClaim(host, 0, hot, 0));

        assertEquals(hot, host.lvWord(0));
        assertEquals(1, host.callers(0));
    }

    @Test
    void aClaimFailsWhileTheCountHoldsACallersReference() {
        long hot = hot(0, 7, 2);

        assertFalse(REFS.tryClaim(host, 0, hot, 0));
        assertEquals(hot, host.lvWord(0));
    }

    @Test
    void aClaimDecidesOnTheCellsSummedWhileFrozen() {
        long hot = hot(0, 7, 1);
        // A hit lands after the claim's unfrozen look found every cell empty, before it freezes.
        host.beforeCas.add(() -> assertTrue(REFS.tryAcquire(host, 0, hot)));

        assertFalse(REFS.tryClaim(host, 0, hot, 0));

        assertEquals(hot, host.lvWord(0), "thawed, count unchanged");
        assertEquals(1, host.callers(0));
        assertEquals(1, host.table.size());
    }

    @Test
    void aClaimRefusesAWordThatShowsARefusedFlagWhenItFreezes() {
        long hot = hot(0, 7, 1);
        // A holder's touch lands after the claim's look, before it freezes (a reclaim's "referenced").
        host.beforeCas.add(() -> host.set(0, host.lvWord(0) | REFERENCED));

        assertFalse(REFS.tryClaim(host, 0, hot, REFERENCED));

        assertEquals(hot | REFERENCED, host.lvWord(0), "thawed, count and flag kept");
        assertEquals(1, host.table.size());
    }

    @Test
    void aClaimRefusesAWordFlaggedWhileFrozenBeforeItsCas() {
        long hot = hot(0, 7, 1);
        host.beforeCas.add(() -> { }); // the freeze
        host.beforeCas.add(() -> host.set(0, host.lvWord(0) | REFERENCED)); // a touch while frozen

        assertFalse(REFS.tryClaim(host, 0, hot, REFERENCED));

        assertEquals(hot | REFERENCED, host.lvWord(0), "thawed, count and flag kept");
        assertEquals(1, host.table.size());
    }

    @Test
    void aClaimNotToldToRefuseAFlagClaimsAWordThatShowsIt() {
        long hot = hot(0, 7, 1);
        host.set(0, hot | REFERENCED);

        assertTrue(REFS.tryClaim(host, 0, hot | REFERENCED, 0));

        assertEquals((hot | REFERENCED) & ~COUNT_MASK, host.lvWord(0));
    }

    @Test
    void aHitThatFoundTheCellsOfAnOccupantClaimedAndReplacedMeanwhileFailsAndTakesItsUnitBack() {
        long hot = hot(0, 7, 1);
        long[] oldCells = host.cellsNow(0);
        // After the hit found the cells, before it adds its unit: the occupant is claimed and a new
        // one takes the slot, cold.
        host.afterCellLookup.add(() -> {
            assertTrue(REFS.tryClaim(host, 0, hot, 0));
            host.set(0, word(8, 1));
        });

        assertFalse(REFS.tryAcquire(host, 0, hot));

        long sum = 0;
        for (int i = HotReferences.CELL_STRIDE; i < oldCells.length; i += HotReferences.CELL_STRIDE) {
            sum += oldCells[i];
        }
        assertEquals(0, sum, "the unit was taken back");
        assertEquals(word(8, 1), host.lvWord(0));
        assertNull(host.cellsNow(0), "the new occupant has no cells");
    }

    @Test
    void heldByAnyCallerCountsTheCountAndTheCells() {
        long hot = hot(0, 7, 1);
        assertFalse(REFS.heldByAnyCaller(host, 0, hot));

        REFS.tryAcquire(host, 0, hot);
        assertTrue(REFS.heldByAnyCaller(host, 0, hot));

        long two = hot(1, 8, 2);
        assertTrue(REFS.heldByAnyCaller(host, 1, two));
        assertFalse(REFS.heldByAnyCaller(host, 1, two & ~COUNT_MASK), "dead");
    }

    // ------------------------------------------------------------------------------------------
    // waitUnused
    // ------------------------------------------------------------------------------------------

    @Test
    void aWaiterThatHoldsTheOnlyReferenceDoesNotWaitAndSetsNoFlag() {
        long hot = hot(0, 7, 1);
        REFS.tryAcquire(host, 0, hot); // the waiter's own reference

        assertFalse(REFS.markWaitingUnlessUnused(host, 0, hot));

        assertEquals(hot, host.lvWord(0));
    }

    @Test
    void aWaiterWithOneOtherCallerWaitsAndThatCallersReleaseWakesIt() {
        long hot = hot(0, 7, 2); // the cache and the waiter, from before the switch
        REFS.tryAcquire(host, 0, hot); // another caller

        assertTrue(REFS.markWaitingUnlessUnused(host, 0, hot));
        assertEquals(hot | WAITERS, host.lvWord(0), "the flag set, the word thawed");

        assertEquals(HotReferences.RELEASED_WAKE, REFS.release(host, 0, host.lvWord(0)));
        assertEquals(1, host.callers(0));
    }

    @Test
    void aReleaseThatLeavesAnotherCallerBesideTheWaiterDoesNotWakeIt() {
        long hot = hot(0, 7, 2); // the cache and the waiter, from before the switch
        REFS.tryAcquire(host, 0, hot); // another caller
        REFS.tryAcquire(host, 0, hot); // and one more
        assertTrue(REFS.markWaitingUnlessUnused(host, 0, hot));
        long marked = host.lvWord(0);

        assertEquals(HotReferences.RELEASED, REFS.release(host, 0, marked), "two callers left: no wake-up");
        assertEquals(HotReferences.RELEASED_WAKE, REFS.release(host, 0, marked), "the waiter's alone");
    }

    @Test
    void aWaiterOnADeadOccupantDoesNotWait() {
        long hot = hot(0, 7, 2);
        host.set(0, hot & ~COUNT_MASK);

        assertFalse(REFS.markWaitingUnlessUnused(host, 0, hot));
    }

    // ------------------------------------------------------------------------------------------
    // Retiring
    // ------------------------------------------------------------------------------------------

    @Test
    void retireAfterAKillDropsTheCellsAndTheirPlace() {
        long hot = hot(0, 7, 2);
        host.set(0, hot & ~COUNT_MASK); // a kill (close) zeroes the count

        REFS.retire(host, 0, hot);

        assertNull(host.cellsNow(0));
        assertEquals(0, host.table.size());
        REFS.retire(host, 0, hot); // twice: nothing to drop
        assertEquals(0, host.table.size());
    }

    // ------------------------------------------------------------------------------------------
    // A switch racing a release
    // ------------------------------------------------------------------------------------------

    @Test
    void aColdReleaseWhoseWordWasSwitchedMeanwhileGoesHotAndLosesNothing() {
        host.set(0, word(7, 3)); // the cache and two callers
        long read = host.lvWord(0); // the releasing thread's read, cold
        assertTrue(REFS.switchToHot(host, 0, read, 1)); // another thread's hit switches it

        assertFalse(host.casWord(0, read, read - 1), "the cold CAS fails on the switched word");
        assertEquals(HotReferences.RELEASED, coldOrHotRelease(host, 0));

        assertEquals(2, host.callers(0), "two callers: the one left, and the switching hit");
    }

    /**
     * Round after round, one thread switches a cold word (adding its hit's reference) while another
     * releases a reference with the cold protocol (going hot when it reads the bit): whichever comes
     * first, every reference is counted once.
     */
    @Test
    void aSwitchRacingAReleaseOnAnotherThreadLosesNoReference() throws Exception {
        int rounds = 2_000;
        CyclicBarrier start = new CyclicBarrier(2);
        CyclicBarrier done = new CyclicBarrier(2);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread releaser = new Thread(() -> {
            try {
                for (int i = 0; i < rounds; i++) {
                    start.await(30, TimeUnit.SECONDS);
                    if (coldOrHotRelease(host, 0) != HotReferences.RELEASED) {
                        throw new AssertionError("refused in round " + i);
                    }
                    done.await(30, TimeUnit.SECONDS);
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        releaser.start();
        try {
            for (int i = 0; i < rounds; i++) {
                host.set(0, word(i & 0xFFFF, 3)); // the cache and two callers, cold
                start.await(30, TimeUnit.SECONDS);
                long w = host.lvWord(0);
                boolean switched = (w & HOT) == 0 && REFS.switchToHot(host, 0, w, 1);
                done.await(30, TimeUnit.SECONDS);
                long expected = switched ? 2 : 1; // one caller released; the switching hit's if it switched
                assertEquals(expected, host.callers(0), "round " + i);
                REFS.retire(host, 0, host.lvWord(0));
            }
        } finally {
            releaser.interrupt();
            releaser.join(TimeUnit.SECONDS.toMillis(30));
        }
        assertNull(failure.get());
    }
}
