package org.mbcache.caffeine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The lazy-unpin stack on its own: when a drain is due, what it unpins, how it survives an
 * executor that throws or drops tasks and an unpin that throws, and that pushes racing drains of
 * every kind lose and duplicate no entry. Entries are real entries of an otherwise unused cache;
 * the unpin is recorded instead of done.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class UnpinStackTest {

    private static final long BATCH = 4;

    private final CaffeineDedupCache owner = CaffeineDedupCache.create(16);
    private final List<PinnedEntry> unpinned = new ArrayList<>();
    private long nextValue;

    @AfterEach
    void closeOwner() {
        owner.close();
    }

    /** A stack for a cache of {@code size} entries with bound {@code maxEntries}. */
    private UnpinStack stack(long maxEntries, long size, Executor executor) {
        return stack(maxEntries, size, executor, unpinned::add);
    }

    private static UnpinStack stack(long maxEntries, long size, Executor executor, Consumer<PinnedEntry> unpin) {
        return new UnpinStack(maxEntries, BATCH, () -> size, new FallbackExecutor(executor), unpin);
    }

    /** A live entry whose UNPIN_QUEUED flag is set, as a release leaves it before the push. */
    private PinnedEntry queuedEntry() {
        PinnedEntry entry = new PinnedEntry(owner, 1, nextValue++, true);
        assertTrue(entry.markUnpinQueued());
        return entry;
    }

    private List<PinnedEntry> push(UnpinStack stack, int entries) {
        List<PinnedEntry> pushed = new ArrayList<>();
        for (int i = 0; i < entries; i++) {
            PinnedEntry entry = queuedEntry();
            stack.push(entry);
            pushed.add(entry);
        }
        return pushed;
    }

    @Test
    void pushesBelowABatchHandNothingToTheExecutor() {
        AtomicInteger offered = new AtomicInteger();
        UnpinStack stack = stack(1, 10, task -> offered.incrementAndGet());
        push(stack, (int) BATCH - 1);
        assertEquals(0, offered.get());
        assertEquals(BATCH - 1, stack.backlog());
    }

    @Test
    void aDueDrainIsHandedToTheExecutorOnceWhileItIsPending() {
        List<Runnable> offered = new ArrayList<>();
        UnpinStack stack = stack(1, 10, offered::add);
        push(stack, (int) (3 * BATCH));
        assertEquals(1, offered.size());
    }

    @Test
    void overTheBoundADrainUnpinsAllButTheNewestHalfBatch() {
        UnpinStack stack = stack(1, 10, Runnable::run);
        List<PinnedEntry> pushed = push(stack, (int) BATCH);
        assertEquals(List.of(pushed.get(1), pushed.get(0)), unpinned, "the oldest, newest first");
        assertEquals(BATCH / 2, stack.backlog());
    }

    @Test
    void atOrBelowTheBoundADrainOnlyUnlinksDeadEntries() {
        UnpinStack stack = stack(100, 1, Runnable::run);
        PinnedEntry live = queuedEntry();
        stack.push(live);
        List<PinnedEntry> dead = new ArrayList<>();
        for (int i = 0; i < BATCH - 1; i++) {
            PinnedEntry entry = queuedEntry();
            assertTrue(entry.killIfUnheld());
            dead.add(entry);
        }
        dead.forEach(stack::push);
        assertFalse(unpinned.contains(live), "a live entry was unpinned at the bound");
        assertTrue(unpinned.containsAll(dead.subList(0, dead.size() - 1)), "dead entries below the head stay queued");
        assertEquals(2, stack.backlog(), "the head and the live entry stay");
    }

    @Test
    void drainAllNowUnpinsEveryQueuedEntryAndClearsItsFlag() {
        UnpinStack stack = stack(1, 10, task -> {});
        List<PinnedEntry> pushed = push(stack, 3);
        stack.drainAllNow();
        assertEquals(3, unpinned.size());
        assertEquals(0, stack.backlog());
        for (PinnedEntry entry : pushed) {
            assertTrue(entry.markUnpinQueued(), "UNPIN_QUEUED left set: a later release could not queue it");
        }
    }

    @Test
    void anExecutorThatThrowsAnErrorGetsTheDrainRunOnThePushingThread() {
        UnpinStack stack = stack(1, 10, task -> {
            throw new Error("executor down");
        });
        push(stack, (int) BATCH);
        assertEquals(BATCH / 2, unpinned.size());
        push(stack, (int) BATCH);
        assertTrue(unpinned.size() > BATCH / 2, "the failed hand-over left a drain pending for good");
    }

    @Test
    void aDrainTheExecutorDroppedIsTakenOverByAPusherAndTheNextGoesToTheExecutorAgain() {
        AtomicInteger offered = new AtomicInteger();
        Executor droppingTheFirst = task -> {
            if (offered.incrementAndGet() > 1) {
                task.run();
            }
        };
        UnpinStack stack = stack(1, 10, droppingTheFirst);
        push(stack, (int) (4 * BATCH));
        assertEquals(1, offered.get());
        assertEquals(BATCH / 2, stack.backlog(), "the pusher at four batches did not drain");
        push(stack, (int) (BATCH / 2));
        assertEquals(2, offered.get(), "the next drain did not go to the executor");
        assertEquals(BATCH / 2, stack.backlog());
    }

    @Test
    void anUnpinThatThrowsLeavesItsEntryQueuedAndTheOthersAreStillUnpinned() {
        List<PinnedEntry> done = new ArrayList<>();
        PinnedEntry[] failing = new PinnedEntry[1];
        UnpinStack stack = stack(1, 10, task -> {}, entry -> {
            if (entry == failing[0]) {
                throw new OutOfMemoryError("in the compute");
            }
            done.add(entry);
        });
        List<PinnedEntry> pushed = push(stack, 3);
        failing[0] = pushed.get(1);
        OutOfMemoryError thrown = assertThrows(OutOfMemoryError.class, stack::drainAllNow);
        assertEquals("in the compute", thrown.getMessage());
        assertEquals(List.of(pushed.get(2), pushed.get(0)), done);
        assertEquals(1, stack.backlog());
        assertFalse(failing[0].markUnpinQueued(), "the failed entry is queued again");
        failing[0] = null;
        stack.drainAllNow();
        assertSame(pushed.get(1), done.get(2));
    }

    @Test
    void anUnpinFailureInADrainTheExecutorRefusedReachesThePusherAndTheNextDrainRetriesTheEntry() {
        List<PinnedEntry> done = new ArrayList<>();
        PinnedEntry[] failing = new PinnedEntry[1];
        UnpinStack stack = stack(1, 10, task -> {
            throw new RejectedExecutionException("full");
        }, entry -> {
            if (entry == failing[0]) {
                failing[0] = null; // fails once
                throw new OutOfMemoryError("in the compute");
            }
            done.add(entry);
        });
        List<PinnedEntry> pushed = push(stack, (int) BATCH - 1);
        failing[0] = pushed.get(0); // the oldest: a drain that keeps half a batch unpins it
        PinnedEntry last = queuedEntry();
        assertThrows(OutOfMemoryError.class, () -> stack.push(last), "the pusher ran the drain");
        assertFalse(done.contains(pushed.get(0)));
        push(stack, (int) BATCH);
        assertTrue(done.contains(pushed.get(0)), "the entry whose unpin failed was never retried");
        assertEquals(1, done.stream().filter(entry -> entry == pushed.get(0)).count());
    }

    @Test
    void clearForgetsEveryQueuedEntry() {
        UnpinStack stack = stack(1, 10, task -> {});
        push(stack, 3);
        stack.clear();
        stack.drainAllNow();
        assertTrue(unpinned.isEmpty());
    }

    // ---------------------------------------------------------------------------------------------
    // Concurrency: pushes racing drains. Every test keeps a ledger of how often each entry was
    // pushed (a release that set UNPIN_QUEUED) and how often it was handed to the unpin (unlinked
    // by a drain), finishes with a drainAllNow on the quiet stack, and asserts the two are equal
    // for every entry, the backlog is 0 and no entry is left flagged as queued: a lost entry shows
    // as pushed > unpinned (and a flag still set, so no release could ever queue it again), or,
    // once enough of the pool is lost, as pushers that cannot finish their pushes and time out; a
    // duplicated one as unpinned > pushed or a negative backlog; an entry linked twice as a cycle
    // that hangs a drain until the timeout. The ledger, not the interleaving, is what is asserted.
    // ---------------------------------------------------------------------------------------------

    /** Entries the racing pushers share: each is pushed again whenever a drain has unlinked it. */
    private static final int POOL = 256;
    private static final int PUSHERS = 3;
    /**
     * Pushes each pusher makes: far more than the pool holds, so the pushers can only finish if
     * drains keep unlinking entries (a pusher skips an entry that is queued already).
     */
    private static final int PUSHES_PER_PUSHER = 20_000;
    private static final long RACE_SECONDS = 10;

    /** The pool and its ledger. */
    private final class Ledger {
        final PinnedEntry[] pool = new PinnedEntry[POOL];
        final AtomicIntegerArray timesPushed = new AtomicIntegerArray(POOL);
        final AtomicIntegerArray timesUnpinned = new AtomicIntegerArray(POOL);

        Ledger() {
            for (int i = 0; i < POOL; i++) {
                pool[i] = new PinnedEntry(owner, 1, i, true);
            }
        }

        /** The unpin a stack under test is given: counts the entry. */
        void unpin(PinnedEntry entry) {
            timesUnpinned.incrementAndGet((int) entry.value);
        }

        /**
         * One pusher's part: walks the pool (each pusher in its own order) and, like a release,
         * queues every entry that is not queued already, until it has made its pushes.
         */
        Runnable pusher(UnpinStack stack, int pusher) {
            return () -> {
                int pushes = 0;
                for (int i = 0; pushes < PUSHES_PER_PUSHER && !Thread.currentThread().isInterrupted(); i++) {
                    PinnedEntry entry = pool[Math.floorMod(pusher * 17 + i * (2 * pusher + 1), POOL)];
                    if (entry.markUnpinQueued()) {
                        timesPushed.incrementAndGet((int) entry.value);
                        stack.push(entry);
                        pushes++;
                    }
                }
            };
        }

        /** Drains what is left on the quiet stack, then checks every entry's push against its unpin. */
        void assertEveryPushUnpinnedExactlyOnce(UnpinStack stack) {
            stack.drainAllNow();
            assertEquals(0, stack.backlog(), "backlog after the final drain");
            long pushes = 0;
            for (int i = 0; i < POOL; i++) {
                assertEquals(timesPushed.get(i), timesUnpinned.get(i), "entry " + i + ": pushed, then unpinned");
                assertTrue(pool[i].markUnpinQueued(), "entry " + i + " is off the stack but still flagged as queued");
                pushes += timesPushed.get(i);
            }
            assertEquals((long) PUSHERS * PUSHES_PER_PUSHER, pushes);
        }
    }

    /**
     * Starts the threads together, waits for them up to {@link #RACE_SECONDS}, and rethrows the first
     * failure of any of them; a thread still running then is a failure (a cycle in the stack hangs a
     * drain, a lost pool starves the pushers), and is interrupted, which ends the parts' loops.
     */
    private static void race(List<Runnable> parts) throws InterruptedException {
        CountDownLatch start = new CountDownLatch(1);
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (Runnable part : parts) {
            Thread thread = new Thread(() -> {
                try {
                    start.await();
                    part.run();
                } catch (Throwable t) {
                    failures.add(t);
                }
            });
            thread.setDaemon(true);
            thread.start();
            threads.add(thread);
        }
        start.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(RACE_SECONDS);
        for (Thread thread : threads) {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (thread.isAlive()) {
                threads.forEach(Thread::interrupt);
                fail("a racing thread is still running after " + RACE_SECONDS + " s: " + thread.getName());
            }
        }
        if (!failures.isEmpty()) {
            AssertionError failed = new AssertionError("a racing thread failed", failures.peek());
            failures.stream().skip(1).forEach(failed::addSuppressed);
            throw failed;
        }
    }

    /** The pushers' parts, each counting {@code done} down when it ends; more parts may be added. */
    private static List<Runnable> pushersCountingDown(Ledger ledger, UnpinStack stack, CountDownLatch done) {
        List<Runnable> parts = new ArrayList<>();
        for (Runnable pusher : pushersAnd(ledger, stack)) {
            parts.add(() -> {
                try {
                    pusher.run();
                } finally {
                    done.countDown();
                }
            });
        }
        return parts;
    }

    /** The pushers' parts and, after them, the given others. */
    private static List<Runnable> pushersAnd(Ledger ledger, UnpinStack stack, Runnable... others) {
        List<Runnable> parts = new ArrayList<>();
        for (int pusher = 0; pusher < PUSHERS; pusher++) {
            parts.add(ledger.pusher(stack, pusher));
        }
        parts.addAll(List.of(others));
        return parts;
    }

    /**
     * Over the bound, so every drain keeps the newest half batch and unlinks below it, rewriting
     * links while pushers CAS new entries on top. A drain that took the head off with a plain store,
     * or lost a link it rewrote, would lose the entries pushed meanwhile (pushed > unpinned); one
     * that handed an entry over and left it linked would unpin it twice (unpinned > pushed).
     */
    @Test
    void pushesRacingBackgroundDrainsAreEachUnpinnedExactlyOnce() throws InterruptedException {
        Ledger ledger = new Ledger();
        ExecutorService drainThread = Executors.newSingleThreadExecutor();
        UnpinStack stack = new UnpinStack(1, BATCH, () -> 10, new FallbackExecutor(drainThread), ledger::unpin);
        try {
            race(pushersAnd(ledger, stack));
        } finally {
            drainThread.shutdown(); // the drains handed over already still run
            assertTrue(drainThread.awaitTermination(RACE_SECONDS, TimeUnit.SECONDS), "a drain hangs");
        }
        ledger.assertEveryPushUnpinnedExactlyOnce(stack);
    }

    /**
     * Below the bound with room to spare, so no push schedules a drain, while another thread takes
     * the whole stack again and again, as the synchronous pass does. A take that read the head and
     * then cleared it in two steps instead of one exchange would drop every entry pushed between the
     * two (pushed > unpinned, or, as the pool runs out of entries that can be queued, pushers that
     * time out: what this test did when it was tried against such a take).
     */
    @Test
    void pushesRacingWholeStackDrainsAreEachUnpinnedExactlyOnce() throws InterruptedException {
        Ledger ledger = new Ledger();
        UnpinStack stack = new UnpinStack(1 << 20, BATCH, () -> 1 << 20, new FallbackExecutor(task -> {
            throw new AssertionError("no push may schedule a drain here");
        }), ledger::unpin);
        CountDownLatch pushersDone = new CountDownLatch(PUSHERS);
        List<Runnable> parts = pushersCountingDown(ledger, stack, pushersDone);
        parts.add(() -> {
            while (pushersDone.getCount() > 0 && !Thread.currentThread().isInterrupted()) {
                stack.drainAllNow();
            }
        });
        race(parts);
        ledger.assertEveryPushUnpinnedExactlyOnce(stack);
    }

    /**
     * The executor keeps every drain it is handed and runs it late, on a thread of its own, each
     * only after a pusher has taken over a drain pending since that hand-over: so a takeover always
     * happens (a pusher at four batches with a drain pending and no drain running takes the lock)
     * and every late run races the pushers and their further takeovers. Both are drains under one
     * lock; without it, the two would walk the same links at once, and an entry unlinked by both
     * would be unpinned twice (unpinned > pushed) or cut off by the other's rewrite of its
     * predecessor's link (pushed > unpinned).
     */
    @Test
    void aLateRunOfADroppedDrainRacingPushersTakeoversUnpinsEachEntryExactlyOnce() throws InterruptedException {
        Ledger ledger = new Ledger();
        Thread[] lateRunner = new Thread[1];
        AtomicInteger takeoverUnpins = new AtomicInteger();
        AtomicInteger lateRuns = new AtomicInteger();
        // each drain handed over, with the count of takeover unpins at that moment
        Queue<Map.Entry<Runnable, Integer>> handedOver = new ConcurrentLinkedQueue<>();
        Executor late = task -> handedOver.add(Map.entry(task, takeoverUnpins.get()));
        UnpinStack stack = new UnpinStack(1, BATCH, () -> 10, new FallbackExecutor(late), entry -> {
            ledger.unpin(entry);
            if (Thread.currentThread() != lateRunner[0]) {
                takeoverUnpins.incrementAndGet(); // no task runs on a pusher: a takeover
            }
        });
        CountDownLatch pushersDone = new CountDownLatch(PUSHERS);
        List<Runnable> parts = pushersCountingDown(ledger, stack, pushersDone);
        parts.add(() -> {
            lateRunner[0] = Thread.currentThread();
            while (!Thread.currentThread().isInterrupted()) {
                Map.Entry<Runnable, Integer> drain = handedOver.poll();
                if (drain == null) {
                    if (pushersDone.getCount() == 0 && handedOver.isEmpty()) {
                        return;
                    }
                    Thread.yield();
                    continue;
                }
                while (takeoverUnpins.get() == drain.getValue() && pushersDone.getCount() > 0) {
                    Thread.yield(); // late: until a pusher has taken this drain over
                }
                drain.getKey().run();
                lateRuns.incrementAndGet();
            }
        });
        race(parts);
        assertTrue(takeoverUnpins.get() > 0, "no pusher took a pending drain over");
        assertTrue(lateRuns.get() > 0, "no late drain ran");
        ledger.assertEveryPushUnpinnedExactlyOnce(stack);
    }
}
