package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link BackgroundReclaim} alone, the hand-over protocol of its class comment step by step: no
 * cache, a real {@link EntryCount} the test drives, a fake {@link BackgroundReclaim.Reclaimer} that
 * records each pass and frees what the test says (and runs a hook inside a pass, standing for
 * another thread acting at that moment), a closed check that can run a hook too (it is read right
 * after each count read of a pass, so a hook there acts between that read and what the pass does
 * with it), and a scripted {@link Executor} that queues, stalls, drops, throws, runs in place or
 * hands a task over twice. The count changes only by {@link EntryCount#addExactly}, so its estimate
 * is exact and every decision is made on the count the test set. No assertion depends on timing:
 * staleness is set to "always" or "never" through the constructor.
 *
 * <p>Each guard of the protocol, and the test that fails when the guard is broken (checked by
 * breaking each one in the source):
 * <ul>
 *   <li>{@code schedule}'s CAS from null (an unconditional set instead):
 *       {@link #concurrentCreatesAtTheBoundHandOneTaskOver} (a race: it never fails on the protocol
 *       as it is, and catches the broken one within its rounds);</li>
 *   <li>{@code schedule}'s null check before allocating:
 *       {@link #aCreateAtTheBoundWhileAPassIsPendingAllocatesNothing};</li>
 *   <li>"only the pending task does a pass" ({@code pendingPass != pass} at the start of a run):
 *       {@link #aStalledTaskThatRunsLateAfterItWasReplacedDoesNothing} (a task run twice in a row,
 *       {@link #aTaskRunTwiceDoesOnePass}, is stopped by either this or the next guard);</li>
 *   <li>the {@code started} CAS that picks one run:
 *       {@link #aSecondRunOfATaskWhileItsFirstRunIsInItsPassDoesNothing};</li>
 *   <li>the stale-pass replacement ({@code resubmitStale}):
 *       {@link #aDroppedTaskIsHandedOverAgainAtTwiceTheBound}; its age check:
 *       {@link #aFreshPendingPassIsNotReplacedAtTwiceTheBound}; its CAS from the pending task it read:
 *       none (an unconditional set differs only when the field changes between that read and the
 *       write, with no call out in between to stand for the other thread, and even then it hands
 *       over one more task that does nothing);</li>
 *   <li>the continuation's CAS from the task itself:
 *       {@link #aPassReplacedWhileItRanHandsNoContinuationOver};</li>
 *   <li>the clearing CAS from the task itself (when the work ends):
 *       {@link #aPassReplacedWhileItRanDoesNotEndItsReplacementsWork};</li>
 *   <li>the {@code finally} that clears the field: {@link #aPassThatThrowsEndsTheWork} (and four more);
 *       that it clears by CAS: {@link #aPassReplacedWhileItRanHandsNoContinuationOver},
 *       {@link #aPassReplacedWhileItRanDoesNotEndItsReplacementsWork};</li>
 *   <li>the re-read after clearing:
 *       {@link #aCreateThatFoundThePassPendingGetsItsPassFromTheReReadAfterTheWorkEnded};</li>
 *   <li>the re-read's CAS from null:
 *       {@link #theReReadDoesNotDoubleAPassACreateHandedOverAfterTheClear};</li>
 *   <li>going on only while the pass frees something: {@link #aPassThatFreesNothingEndsTheWorkEvenAboveTheBound};</li>
 *   <li>going on only while the count is at the bound: {@link #aPassContinuesUntilTheCountIsBelowTheBound};</li>
 *   <li>the closed checks: {@link #aTaskRunAfterTheCacheClosedScansNothingAndEndsTheWork},
 *       {@link #aPassDuringWhichTheCacheClosesDoesNotGoOn};</li>
 *   <li>the in-place check ({@code continuingOn}): {@link #anInPlaceExecutorRunsAtMostTwoPassesOnOneThread};
 *       that the mark is cleared by CAS: {@link #aThreadsMarkIsNotClearedByTheHandOverOfAnotherThread};</li>
 *   <li>a create whose executor throws runs the pass itself:
 *       {@link #anExecutorThatThrowsGetsThePassRunOnTheCreatingThread}; a rejected continuation clears
 *       the field: {@link #aContinuationTheExecutorRejectsIsNotRunAndTheNextCreateSchedulesAgain}.</li>
 * </ul>
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BackgroundReclaimProtocolTest {

    /** The bound: creates at or above it schedule a background pass. */
    private static final long BOUND = 64;
    /** What a background pass scans: the bound over the kernel's divisor. */
    private static final long BATCH = BOUND / BackgroundReclaim.SHRINK_DIVISOR;
    /** Staleness ages: every pending pass is stale, or none is. */
    private static final long ALWAYS_STALE = -1;
    private static final long NEVER_STALE = Long.MAX_VALUE;
    /** How long a test thread waits for another before it calls the test hung. */
    private static final long HANG_SECONDS = 30;

    private final EntryCount count = new EntryCount(BOUND);
    private final FakeReclaimer reclaimer = new FakeReclaimer();
    /** Whether the fake cache is closed. */
    private volatile boolean closed;
    /** Hooks run by the closed check, one per call, in order; an empty one runs nothing. */
    private final Deque<Runnable> onClosedCheck = new ArrayDeque<>();

    // ------------------------------------------------------------------------------------------
    // Fakes
    // ------------------------------------------------------------------------------------------

    /** One call of the reclaimer. */
    private record Call(long nrToScan, ReclaimPassEvent.Kind kind, long floor, Thread thread, boolean skipped) {}

    /**
     * A reclaim pass over the fake count: records the call, runs the next hook (if any) inside the
     * pass, then frees {@code nrToScan} (or what there is), or nothing when told, or throws; a pass
     * with a floor above the count is skipped, as a layout's is.
     */
    private final class FakeReclaimer implements BackgroundReclaim.Reclaimer {
        final List<Call> calls = new ArrayList<>();
        final Deque<Runnable> during = new ArrayDeque<>();
        volatile boolean freeNothing;
        volatile RuntimeException failure;

        @Override
        public long reclaim(long nrToScan, ReclaimPassEvent.Kind kind, long floor) {
            if (floor != NO_FLOOR && count.snapshot() < floor) {
                record(new Call(nrToScan, kind, floor, Thread.currentThread(), true));
                return 0;
            }
            record(new Call(nrToScan, kind, floor, Thread.currentThread(), false));
            Runnable hook;
            synchronized (this) {
                hook = during.poll();
            }
            if (hook != null) {
                hook.run();
            }
            if (failure != null) {
                throw failure;
            }
            long freed = freeNothing ? 0 : Math.min(nrToScan, count.snapshot());
            count.addExactly(-freed);
            return freed;
        }

        private synchronized void record(Call call) {
            calls.add(call);
        }

        /** The passes of {@code kind} that ran (not skipped on their floor). */
        synchronized long passes(ReclaimPassEvent.Kind kind) {
            return calls.stream().filter(c -> c.kind() == kind && !c.skipped()).count();
        }

        long backgroundPasses() {
            return passes(ReclaimPassEvent.Kind.BACKGROUND);
        }
    }

    /** What the scripted executor does with one task. */
    private enum Mode {
        /** Keeps it in its queue (the test runs it, or stalls it and runs it late). */
        QUEUE,
        /** Forgets it. */
        DROP,
        /** Throws from {@code execute}, keeping nothing. */
        THROW,
        /** Runs it inside {@code execute}, on the calling thread. */
        RUN_IN_PLACE,
        /** Runs it inside {@code execute}, then throws. */
        RUN_IN_PLACE_THEN_THROW,
        /** Queues it, then throws. */
        QUEUE_THEN_THROW,
        /** Queues it twice. */
        QUEUE_TWICE
    }

    /**
     * An executor that does with each task what its script says ({@link #script}, one mode per
     * call, then {@link #otherwise}), recording every task it was given and how deep in-place runs
     * nested. Single-threaded: tests drive it from one thread.
     */
    private static final class ScriptedExecutor implements Executor {
        final List<Runnable> received = new ArrayList<>();
        final Deque<Runnable> queue = new ArrayDeque<>();
        final Deque<Mode> script = new ArrayDeque<>();
        Mode otherwise;
        int depth;
        int deepest;

        ScriptedExecutor(Mode otherwise, Mode... first) {
            this.otherwise = otherwise;
            script.addAll(List.of(first));
        }

        @Override
        public void execute(Runnable task) {
            received.add(task);
            Mode mode = script.isEmpty() ? otherwise : script.poll();
            switch (mode) {
                case QUEUE -> queue.add(task);
                case DROP -> { }
                case THROW -> throw new RejectedExecutionException("scripted");
                case RUN_IN_PLACE -> runInPlace(task);
                case RUN_IN_PLACE_THEN_THROW -> {
                    runInPlace(task);
                    throw new RejectedExecutionException("scripted, after running it");
                }
                case QUEUE_THEN_THROW -> {
                    queue.add(task);
                    throw new RejectedExecutionException("scripted, after queueing it");
                }
                case QUEUE_TWICE -> {
                    queue.add(task);
                    queue.add(task);
                }
                default -> throw new AssertionError(mode);
            }
        }

        private void runInPlace(Runnable task) {
            depth++;
            deepest = Math.max(deepest, depth);
            try {
                task.run();
            } finally {
                depth--;
            }
        }

        /** Runs the queued tasks, including those they queue, until none is left. */
        void drain() {
            Runnable task;
            while ((task = queue.poll()) != null) {
                task.run();
            }
        }
    }

    private BackgroundReclaim reclaim(Executor executor) {
        return reclaim(executor, NEVER_STALE);
    }

    private BackgroundReclaim reclaim(Executor executor, long stalePassNanos) {
        return new BackgroundReclaim(executor, count, BOUND, BackgroundReclaimProtocolTest.class.getName(), reclaimer,
                () -> {
                    Runnable hook;
                    synchronized (onClosedCheck) {
                        hook = onClosedCheck.poll();
                    }
                    if (hook != null) {
                        hook.run();
                    }
                    return closed;
                }, stalePassNanos);
    }

    /** Sets the count to {@code n} (exactly: the estimate follows). */
    private void setCount(long n) {
        count.addExactly(n - count.snapshot());
    }

    /** Hooks for the closed checks, in order: the one before the pass, then one per count read. */
    private void onClosedChecks(Runnable... hooks) {
        onClosedCheck.addAll(List.of(hooks));
    }

    private static final Runnable NOTHING = () -> { };

    // ------------------------------------------------------------------------------------------
    // The create's triggers
    // ------------------------------------------------------------------------------------------

    @Test
    void aCreateBelowTheBoundHandsNothingOverAndRunsNoPass() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND - 1);

        reclaim.beforeCreate();

        assertTrue(executor.received.isEmpty());
        assertFalse(reclaim.pending());
        assertTrue(reclaimer.calls.isEmpty());
    }

    @Test
    void aCreateAtTheBoundHandsOnePassOverAndRunsNoneItself() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND);

        reclaim.beforeCreate();

        assertEquals(1, executor.received.size());
        assertTrue(reclaim.pending());
        assertTrue(reclaimer.calls.isEmpty(), "the pass runs on the executor, not in the create");
    }

    @Test
    void aCreateWhileAPassIsPendingHandsNothingOver() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND);
        reclaim.beforeCreate();

        setCount(BOUND + 10);
        reclaim.beforeCreate();

        assertEquals(1, executor.received.size());
    }

    @Test
    void aCreateAtTheBoundWhileAPassIsPendingAllocatesNothing() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.DROP);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND);
        reclaim.beforeCreate();
        int calls = 20_000;
        for (int i = 0; i < calls; i++) { // warm up, so the measured loop runs compiled code
            reclaim.beforeCreate();
        }

        long before = AllocatedBytes.byCurrentThread();
        for (int i = 0; i < calls; i++) {
            reclaim.beforeCreate();
        }
        long bytes = AllocatedBytes.byCurrentThread() - before;

        // Under a byte per call: a task allocated per call (and dropped by the failing CAS) is 24
        // bytes or more; what remains is the reflective counter call's own few hundred bytes.
        assertTrue(bytes < calls, bytes + " bytes for " + calls + " creates with a pass pending");
        assertEquals(1, executor.received.size());
    }

    @Test
    void aCreateAtTwiceTheBoundAlsoRunsOneSynchronousPassOfTheKernelsBatchWithTwiceTheBoundAsFloor() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(2 * BOUND);

        reclaim.beforeCreate();

        assertEquals(1, executor.received.size(), "the background pass is handed over first");
        assertEquals(List.of(new Call(BackgroundReclaim.SYNC_SHRINK_BATCH, ReclaimPassEvent.Kind.SYNCHRONOUS,
                2 * BOUND, Thread.currentThread(), false)), reclaimer.calls);
    }

    // ------------------------------------------------------------------------------------------
    // A pass, and the passes that go on
    // ------------------------------------------------------------------------------------------

    @Test
    void aPassScansOneBatchOfTheBoundOverTheKernelsDivisorAsABackgroundPass() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND);
        reclaim.beforeCreate();

        executor.queue.remove().run();

        assertEquals(List.of(new Call(BATCH, ReclaimPassEvent.Kind.BACKGROUND, BackgroundReclaim.Reclaimer.NO_FLOOR,
                Thread.currentThread(), false)), reclaimer.calls);
    }

    @Test
    void aPassContinuesUntilTheCountIsBelowTheBound() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND + 36);
        reclaim.beforeCreate();

        executor.drain();

        assertEquals(BOUND - BATCH, count.snapshot(), "one batch below the bound, and no further");
        assertEquals(40 / BATCH, reclaimer.backgroundPasses());
        assertFalse(reclaim.pending());
    }

    @Test
    void eachContinuationIsATaskOfItsOwnHandedOverBehindWhatIsQueued() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND + 36);
        reclaim.beforeCreate();
        Runnable first = executor.queue.remove();
        Runnable other = () -> { };
        executor.queue.add(other);

        first.run();

        assertEquals(1, reclaimer.backgroundPasses(), "one pass per task: no loop inside it");
        assertEquals(2, executor.queue.size());
        assertSame(other, executor.queue.peekFirst());
        assertTrue(reclaim.pending());
    }

    @Test
    void aPassThatLeavesTheCountBelowTheBoundEndsTheWorkAndTheNextCreateAtTheBoundSchedulesAgain() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND);
        reclaim.beforeCreate();

        executor.queue.remove().run();

        assertFalse(reclaim.pending());
        assertTrue(executor.queue.isEmpty());
        setCount(BOUND);
        reclaim.beforeCreate();
        assertEquals(2, executor.received.size());
    }

    @Test
    void aPassThatFreesNothingEndsTheWorkEvenAboveTheBound() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND + 36);
        reclaim.beforeCreate();
        reclaimer.freeNothing = true;

        executor.queue.remove().run();

        assertFalse(reclaim.pending());
        assertTrue(executor.queue.isEmpty());
        reclaim.beforeCreate();
        assertEquals(2, executor.received.size(), "a later create at the bound schedules again");
    }

    @Test
    void aTaskRunAfterTheCacheClosedScansNothingAndEndsTheWork() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND + 36);
        reclaim.beforeCreate();
        closed = true;

        executor.queue.remove().run();

        assertTrue(reclaimer.calls.isEmpty());
        assertFalse(reclaim.pending());
        assertTrue(executor.queue.isEmpty());
    }

    @Test
    void aPassDuringWhichTheCacheClosesDoesNotGoOn() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND + 36);
        reclaim.beforeCreate();
        reclaimer.during.add(() -> closed = true);

        executor.queue.remove().run();

        assertEquals(1, reclaimer.backgroundPasses());
        assertFalse(reclaim.pending());
        assertTrue(executor.queue.isEmpty());
    }

    @Test
    void aPassThatThrowsEndsTheWork() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND + 36);
        reclaim.beforeCreate();
        IllegalStateException failure = new IllegalStateException("scripted");
        reclaimer.failure = failure;

        assertSame(failure, assertThrows(IllegalStateException.class, () -> executor.queue.remove().run()));

        assertFalse(reclaim.pending());
        reclaimer.failure = null;
        reclaim.beforeCreate();
        assertEquals(2, executor.received.size(), "the next create at the bound schedules again");
    }

    // ------------------------------------------------------------------------------------------
    // Which task does the pass
    // ------------------------------------------------------------------------------------------

    @Test
    void aTaskRunTwiceDoesOnePass() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE, Mode.QUEUE_TWICE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND);
        reclaim.beforeCreate();

        executor.drain();

        assertEquals(1, reclaimer.backgroundPasses());
        assertFalse(reclaim.pending());
    }

    @Test
    void aSecondRunOfATaskWhileItsFirstRunIsInItsPassDoesNothing() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND);
        reclaim.beforeCreate();
        Runnable task = executor.queue.remove();
        // Another run of the same task (an executor that runs it twice at once) while the first is
        // inside its pass, where the task is still the pending one.
        reclaimer.during.add(task);

        task.run();

        assertEquals(1, reclaimer.backgroundPasses());
    }

    @Test
    void aStalledTaskThatRunsLateAfterItWasReplacedDoesNothing() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor, ALWAYS_STALE);
        setCount(BOUND);
        reclaim.beforeCreate();
        Runnable stalled = executor.queue.remove();
        setCount(2 * BOUND);
        reclaim.beforeCreate(); // replaces the stalled task (and runs its synchronous pass)
        Runnable replacement = executor.queue.remove();

        stalled.run();

        assertEquals(0, reclaimer.backgroundPasses());
        assertTrue(reclaim.pending(), "the replacement is still pending");
        replacement.run();
        assertEquals(1, reclaimer.backgroundPasses());
    }

    @Test
    void aDroppedTaskIsHandedOverAgainAtTwiceTheBound() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE, Mode.DROP);
        BackgroundReclaim reclaim = reclaim(executor, ALWAYS_STALE);
        setCount(BOUND);
        reclaim.beforeCreate();
        setCount(2 * BOUND - 1);
        reclaim.beforeCreate();
        assertEquals(1, executor.received.size(), "below twice the bound the pending task is waited for");

        setCount(2 * BOUND);
        reclaim.beforeCreate();

        assertEquals(2, executor.received.size());
        executor.queue.remove().run();
        assertEquals(1, reclaimer.backgroundPasses(), "the new task is the pending one");
    }

    @Test
    void aFreshPendingPassIsNotReplacedAtTwiceTheBound() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor, NEVER_STALE);
        setCount(BOUND);
        reclaim.beforeCreate();

        setCount(2 * BOUND);
        reclaim.beforeCreate();

        assertEquals(1, executor.received.size());
    }

    @Test
    void aPassReplacedWhileItRanHandsNoContinuationOver() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor, ALWAYS_STALE);
        setCount(BOUND);
        reclaim.beforeCreate();
        Runnable first = executor.queue.remove();
        // While the first pass runs, a create at twice the bound replaces it (its synchronous pass
        // frees 64), and the count stays far above the bound after the first pass's batch.
        reclaimer.during.add(() -> {
            setCount(4 * BOUND);
            reclaim.beforeCreate();
        });

        first.run();

        assertEquals(2, executor.received.size(), "only the replacement was handed over");
        assertTrue(reclaim.pending());
        executor.queue.remove().run();
        assertEquals(2, reclaimer.backgroundPasses(), "the replacement is the pending task, and does its pass");
    }

    @Test
    void aPassReplacedWhileItRanDoesNotEndItsReplacementsWork() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor, ALWAYS_STALE);
        setCount(BOUND);
        reclaim.beforeCreate();
        Runnable first = executor.queue.remove();
        // The replacing create's synchronous pass takes the count to the bound, the first pass's
        // batch below it: the first pass would end the work, which is no longer its own.
        reclaimer.during.add(() -> {
            setCount(2 * BOUND);
            reclaim.beforeCreate();
        });

        first.run();

        assertEquals(BOUND - BATCH, count.snapshot());
        assertTrue(reclaim.pending());
        executor.queue.remove().run();
        assertEquals(2, reclaimer.backgroundPasses(), "the replacement is the pending task, and does its pass");
    }

    // ------------------------------------------------------------------------------------------
    // The end of the work, and creates that race it
    // ------------------------------------------------------------------------------------------

    @Test
    void aCreateThatFoundThePassPendingGetsItsPassFromTheReReadAfterTheWorkEnded() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND);
        reclaim.beforeCreate();
        // Before the pass: nothing. After the pass's count read (one batch below the bound):
        // entries take the count back to the bound, and a create there finds the pass pending and
        // schedules nothing.
        onClosedChecks(NOTHING, () -> {
            setCount(BOUND);
            reclaim.beforeCreate();
        });

        executor.queue.remove().run();

        assertEquals(2, executor.received.size());
        assertTrue(reclaim.pending());
    }

    @Test
    void theReReadDoesNotDoubleAPassACreateHandedOverAfterTheClear() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND);
        reclaim.beforeCreate();
        // After the pass's first count read, entries take the count back to the bound; after the
        // re-read (the field cleared), a create at the bound hands a pass over itself.
        onClosedChecks(NOTHING, () -> setCount(BOUND), reclaim::beforeCreate);

        executor.queue.remove().run();

        assertEquals(2, executor.received.size(), "the create's task, and no second one from the pass");
        assertTrue(reclaim.pending());
        executor.queue.remove().run();
        assertEquals(2, reclaimer.backgroundPasses(), "the create's task is the pending one");
    }

    // ------------------------------------------------------------------------------------------
    // Executors that run tasks in place
    // ------------------------------------------------------------------------------------------

    @Test
    void anInPlaceExecutorRunsAtMostTwoPassesOnOneThread() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.RUN_IN_PLACE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND + 36);

        reclaim.beforeCreate();

        assertEquals(2, reclaimer.backgroundPasses());
        assertEquals(2, executor.deepest);
        assertFalse(reclaim.pending());
        reclaim.beforeCreate();
        assertEquals(4, reclaimer.backgroundPasses(), "the next create at the bound starts over");
    }

    @Test
    void aThreadsMarkIsNotClearedByTheHandOverOfAnotherThread() throws Exception {
        CountDownLatch secondThreadInItsHandOver = new CountDownLatch(1);
        CountDownLatch firstPassReturned = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicInteger executes = new AtomicInteger();
        Thread[] second = new Thread[1];
        // 1st task (the create's): queued, run below by this thread. 2nd (this thread's
        // continuation): run on a second thread, and execute returns once that thread is inside
        // its own hand-over of the 3rd. 3rd: run in place on the second thread, after this
        // thread's hand-over has returned. Later ones: in place.
        Deque<Runnable> queued = new ArrayDeque<>();
        Executor executor = task -> {
            switch (executes.incrementAndGet()) {
                case 1 -> queued.add(task);
                case 2 -> {
                    second[0] = new Thread(() -> {
                        try {
                            task.run();
                        } catch (Throwable t) {
                            failure.set(t);
                        }
                    });
                    second[0].start();
                    await(secondThreadInItsHandOver);
                }
                case 3 -> {
                    secondThreadInItsHandOver.countDown();
                    await(firstPassReturned);
                    task.run();
                }
                default -> task.run();
            }
        };
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(4 * BOUND);
        reclaim.beforeCreate();

        queued.remove().run();
        firstPassReturned.countDown();
        second[0].join(TimeUnit.SECONDS.toMillis(HANG_SECONDS));

        assertFalse(second[0].isAlive(), "the second thread hung");
        assertNull(failure.get());
        assertEquals(3, reclaimer.backgroundPasses(),
                "the second thread's in-place pass sees its own mark and does not go on");
        assertFalse(reclaim.pending());
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(HANG_SECONDS, TimeUnit.SECONDS)) {
                throw new AssertionError("hung");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Executors that throw
    // ------------------------------------------------------------------------------------------

    @Test
    void anExecutorThatThrowsGetsThePassRunOnTheCreatingThread() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.THROW);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND);

        reclaim.beforeCreate();

        assertEquals(List.of(new Call(BATCH, ReclaimPassEvent.Kind.BACKGROUND, BackgroundReclaim.Reclaimer.NO_FLOOR,
                Thread.currentThread(), false)), reclaimer.calls);
        assertFalse(reclaim.pending());
    }

    @Test
    void withAThrowingExecutorACreateRunsOnePassAndNoMoreHoweverFarAboveTheBound() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.THROW);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(2 * BOUND - 1);

        reclaim.beforeCreate();

        assertEquals(1, reclaimer.backgroundPasses());
        assertFalse(reclaim.pending());
    }

    @Test
    void aContinuationTheExecutorRejectsIsNotRunAndTheNextCreateSchedulesAgain() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.THROW, Mode.QUEUE);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND + 36);
        reclaim.beforeCreate();

        executor.queue.remove().run();

        assertEquals(1, reclaimer.backgroundPasses());
        assertFalse(reclaim.pending());
        reclaim.beforeCreate();
        assertEquals(2, reclaimer.backgroundPasses(), "the next create ran one pass itself (the executor threw again)");
    }

    @Test
    void aTaskTheExecutorRanBeforeThrowingIsNotRunAgainByTheCreatingThread() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE, Mode.RUN_IN_PLACE_THEN_THROW);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND);

        reclaim.beforeCreate();

        assertEquals(1, reclaimer.backgroundPasses());
        assertFalse(reclaim.pending());
    }

    @Test
    void aTaskTheExecutorQueuedBeforeThrowingDoesNothingWhenItRunsLater() {
        ScriptedExecutor executor = new ScriptedExecutor(Mode.QUEUE, Mode.QUEUE_THEN_THROW);
        BackgroundReclaim reclaim = reclaim(executor);
        setCount(BOUND);
        reclaim.beforeCreate();
        assertEquals(1, reclaimer.backgroundPasses(), "the creating thread ran it");

        executor.queue.remove().run();

        assertEquals(1, reclaimer.backgroundPasses());
        assertFalse(reclaim.pending());
    }

    // ------------------------------------------------------------------------------------------
    // Concurrent creates
    // ------------------------------------------------------------------------------------------

    /**
     * Two threads at the bound with nothing pending, started together round after round (one or
     * the other waits a little before its create, a different time each round, so that the two
     * sweep across each other's hand-over): in every round exactly one of them hands a task over.
     * A race: it can fail only on a protocol that lets both through, and how soon it catches one
     * depends on the machine.
     */
    @Test
    void concurrentCreatesAtTheBoundHandOneTaskOver() throws Exception {
        int rounds = 200_000;
        AtomicInteger handedOver = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<BackgroundReclaim> current = new AtomicReference<>();
        AtomicInteger started = new AtomicInteger();
        AtomicInteger finished = new AtomicInteger();
        setCount(BOUND);
        Thread other = new Thread(() -> {
            try {
                for (int round = 1; round <= rounds; round++) {
                    spinUntil(started, round);
                    delay(-offset(round));
                    current.get().beforeCreate();
                    finished.set(round);
                }
            } catch (Throwable t) {
                failure.set(t);
                finished.set(Integer.MAX_VALUE);
            }
        });
        other.start();
        try {
            for (int round = 1; round <= rounds && failure.get() == null; round++) {
                handedOver.set(0);
                current.set(reclaim(task -> handedOver.incrementAndGet()));
                started.set(round);
                delay(offset(round));
                current.get().beforeCreate();
                spinUntil(finished, round);
                assertEquals(1, handedOver.get(), "round " + round);
            }
        } finally {
            other.interrupt();
            other.join(TimeUnit.SECONDS.toMillis(HANG_SECONDS));
        }
        assertNull(failure.get());
    }

    /**
     * How far the thread that starts a round is ahead of the other, in clock reads, in round
     * {@code round}: from 16 behind to 15 ahead, so that the rounds sweep the two hand-overs across
     * each other in steps of about one clock read (tens of nanoseconds, the width of the window).
     */
    private static int offset(int round) {
        return (round & 31) - 16;
    }

    /** Waits {@code reads} clock reads (none if not positive): a delay that no compiler removes. */
    private static void delay(int reads) {
        for (int i = 0; i < reads; i++) {
            System.nanoTime();
        }
    }

    /** Waits until {@code value} is at least {@code target}: spins, then yields (a loaded machine). */
    private static void spinUntil(AtomicInteger value, int target) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_SECONDS);
        for (int spins = 0; value.get() < target; spins++) {
            if (spins < 1_000) {
                Thread.onSpinWait();
            } else if (System.nanoTime() < deadline) {
                Thread.yield();
            } else {
                throw new AssertionError("hung");
            }
        }
    }
}
