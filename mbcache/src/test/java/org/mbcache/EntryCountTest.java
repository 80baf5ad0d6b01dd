package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.mbcache.contract.ConcurrentRounds;

/**
 * The striped entry count: a snapshot that is the exact count at one moment, an estimate within its
 * slack, and decisions on the estimate only where the slack cannot change them.
 */
class EntryCountTest {

    @Test
    void aNewCountIsZero() {
        EntryCount count = new EntryCount(1 << 16);
        assertEquals(0, count.snapshot());
        assertEquals(0, count.estimate());
    }

    @Test
    void addsAndRemovalsAreExactOnceQuiet() {
        EntryCount count = new EntryCount(1 << 16);
        count.add(5);
        count.add(-2);
        count.add(0);
        assertEquals(3, count.snapshot());
    }

    @Test
    void concurrentAddsAndRemovalsAreExactOnceQuiet() throws Exception {
        EntryCount count = new EntryCount(1 << 16);
        ConcurrentRounds.together(
                () -> { for (int i = 0; i < 100_000; i++) count.add(1); },
                () -> { for (int i = 0; i < 30_000; i++) { count.add(2); count.add(-3); } });
        assertEquals(100_000 - 30_000, count.snapshot());
    }

    @Test
    void theBatchIsAPowerOfTwoUpTo64WithASlackWithinASixteenthOfTheBound() {
        for (long maxEntries : new long[] {1, 16, 1_000, 1 << 16, 1 << 20, Long.MAX_VALUE}) {
            EntryCount count = new EntryCount(maxEntries);
            long batch = count.batch();
            assertEquals(1, Long.bitCount(batch), "batch " + batch);
            assertTrue(batch <= 64, "batch " + batch);
            assertTrue(batch == 1 || count.slack() <= maxEntries / 16, maxEntries + ": slack " + count.slack());
        }
    }

    @Test
    void smallCachesHaveAnExactEstimate() {
        EntryCount count = new EntryCount(500);
        assertEquals(0, count.slack());
        for (int i = 0; i < 37; i++) {
            count.add(1);
        }
        count.add(-5);
        assertEquals(32, count.estimate());
    }

    @Test
    void theEstimateStaysWithinTheSlackEitherWayOnceQuiet() throws Exception {
        EntryCount count = new EntryCount(1L << 24);
        assertTrue(count.slack() > 0, "this test needs a batch above 1");
        ConcurrentRounds.together(
                () -> { for (int i = 0; i < 10_007; i++) count.add(1); },
                () -> { for (int i = 0; i < 3_001; i++) { count.add(3); count.add(-2); } },
                () -> { for (int i = 0; i < 999; i++) count.add(-1); });
        long exact = count.snapshot();
        assertEquals(10_007 + 3_001 - 999, exact);
        assertTrue(Math.abs(count.estimate() - exact) <= count.slack(),
                "estimate " + count.estimate() + ", count " + exact + ", slack " + count.slack());
    }

    @Test
    void theEstimateSeenByTheOnlyWriterIsExact() {
        EntryCount count = new EntryCount(1L << 24);
        assertTrue(count.batch() > 1, "this test needs a batch above 1");
        SplittableRandom random = new SplittableRandom(7);
        long exact = 0;
        for (int i = 0; i < 10_000; i++) {
            long delta = random.nextInt(7) - 3; // removals never outrun adds by more than this
            if (exact + delta < 0) {
                delta = -delta;
            }
            count.add(delta);
            exact += delta;
            assertEquals(exact, count.estimateSeenByThisThread(count.estimate()), "after " + (i + 1) + " adds");
        }
    }

    @Test
    void theEstimateDecidesOnlyWhereItsSlackCannotChangeTheAnswer() {
        EntryCount count = new EntryCount(1L << 24);
        long slack = count.slack();
        assertTrue(slack > 0, "this test needs a batch above 1");
        assertTrue(count.decides(1_000, 1_000 - slack), "surely at or above");
        assertFalse(count.decides(1_000, 1_000 - slack + 1), "could be either");
        assertFalse(count.decides(1_000, 1_000 + slack), "could be either");
        assertTrue(count.decides(1_000, 1_000 + slack + 1), "surely below");
        assertTrue(count.decides(1_000, Long.MAX_VALUE), "a saturated threshold is never reached");
    }

    /**
     * Entries created on one thread and removed on another, as a create and a deleteOrGet on two
     * threads do: every snapshot lies between zero and the entries handed over and not yet removed.
     * A sum read cell by cell, without the double collect, comes out below zero here (the remover's
     * cell read after the adder's) or above the bound.
     */
    @Test
    void everySnapshotIsACountTheEntriesReallyHad() {
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            EntryCount count = new EntryCount(1L << 24);
            int inFlight = 64;
            BlockingQueue<Long> handedOver = new ArrayBlockingQueue<>(inFlight);
            AtomicBoolean done = new AtomicBoolean();
            AtomicReference<String> wrong = new AtomicReference<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            ConcurrentRounds.together(
                    () -> { // creates: counted, then handed over
                        try {
                            while (!done.get()) {
                                count.add(1);
                                handedOver.put(1L);
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    () -> { // removals of entries another thread counted
                        try {
                            while (!done.get() || !handedOver.isEmpty()) {
                                if (handedOver.poll(1, TimeUnit.MILLISECONDS) != null) {
                                    count.add(-1);
                                }
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    () -> { // size()
                        while (System.nanoTime() < deadline && wrong.get() == null) {
                            long seen = count.snapshot();
                            // the queue's 64, plus one counted and not yet put, plus one taken and not yet counted
                            if (seen < 0 || seen > inFlight + 2) {
                                wrong.set("snapshot " + seen);
                            }
                        }
                        done.set(true);
                        handedOver.clear(); // wakes a creator blocked in put; the removals already counted stand
                    });
            assertEquals(null, wrong.get());
        });
    }

    /**
     * A reclaim pass counts its frees in the central word ({@link EntryCount#addExactly}) while
     * creates count in their cells, outside any diversion: a snapshot must still be a count the
     * entries really had. One thread creates and frees one entry over and over, so every real count
     * is 0 or 1; a snapshot that read the central word outside its double collect would see the
     * cells of a later moment with the central word of an earlier one, and report 2 or more.
     */
    @Test
    void snapshotsStayExactWhileFreesAreCountedCentrally() {
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            EntryCount count = new EntryCount(1L << 24);
            AtomicBoolean done = new AtomicBoolean();
            AtomicReference<String> wrong = new AtomicReference<>();
            ConcurrentRounds.together(
                    () -> {
                        while (!done.get()) {
                            count.add(1);
                            count.addExactly(-1);
                        }
                    },
                    () -> {
                        for (int i = 0; i < 200_000 && wrong.get() == null; i++) {
                            long seen = count.snapshot();
                            if (seen != 0 && seen != 1) {
                                wrong.set("snapshot " + seen);
                            }
                        }
                        done.set(true);
                    });
            assertEquals(null, wrong.get());
            assertEquals(0, count.snapshot());
        });
    }

    /**
     * Snapshots taken while writers never pause all finish, the diversion ends with the last of them,
     * and what the writers added to the central word while diverted is counted. (On two cores the
     * double collect mostly agrees even without the diversion, so this does not show the livelock the
     * diversion prevents on many cores; it fails if the diversion sticks or its word is not counted.)
     */
    @Test
    void snapshotsFinishWhileWritersNeverPause() {
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            EntryCount count = new EntryCount(1L << 24);
            AtomicBoolean done = new AtomicBoolean();
            AtomicLong net = new AtomicLong();
            Runnable writer = () -> {
                long mine = 0;
                while (!done.get()) {
                    count.add(2);
                    count.add(-1);
                    mine++;
                }
                net.addAndGet(mine);
            };
            ConcurrentRounds.together(writer, writer, () -> {
                for (int i = 0; i < 20_000; i++) {
                    count.snapshot();
                }
                done.set(true);
            });
            assertFalse(count.diverted(), "the writers are still diverted");
            assertEquals(net.get(), count.snapshot());
            assertTrue(Math.abs(count.estimate() - net.get()) <= count.slack(), "estimate " + count.estimate());
        });
    }
}
