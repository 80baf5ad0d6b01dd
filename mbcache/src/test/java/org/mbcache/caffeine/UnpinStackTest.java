package org.mbcache.caffeine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mbcache.caffeine.CaffeineDedupCache.Entry;

/**
 * The lazy-unpin stack on its own: when a drain is due, what it unpins, and how it survives an
 * executor that throws or drops tasks and an unpin that throws. Entries are real entries of an
 * otherwise unused cache; the unpin is recorded instead of done.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class UnpinStackTest {

    private static final long BATCH = 4;

    private final CaffeineDedupCache owner = CaffeineDedupCache.create(16);
    private final List<Entry> unpinned = new ArrayList<>();
    private long nextValue;

    @AfterEach
    void closeOwner() {
        owner.close();
    }

    /** A stack for a cache of {@code size} entries with bound {@code maxEntries}. */
    private UnpinStack stack(long maxEntries, long size, Executor executor) {
        return stack(maxEntries, size, executor, unpinned::add);
    }

    private static UnpinStack stack(long maxEntries, long size, Executor executor, Consumer<Entry> unpin) {
        return new UnpinStack(maxEntries, BATCH, () -> size, new FallbackExecutor(executor), unpin);
    }

    /** A live entry whose UNPIN_QUEUED flag is set, as a release leaves it before the push. */
    private Entry queuedEntry() {
        Entry entry = new Entry(owner, 1, nextValue++, true);
        assertTrue(entry.markUnpinQueued());
        return entry;
    }

    private List<Entry> push(UnpinStack stack, int entries) {
        List<Entry> pushed = new ArrayList<>();
        for (int i = 0; i < entries; i++) {
            Entry entry = queuedEntry();
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
        List<Entry> pushed = push(stack, (int) BATCH);
        assertEquals(List.of(pushed.get(1), pushed.get(0)), unpinned, "the oldest, newest first");
        assertEquals(BATCH / 2, stack.backlog());
    }

    @Test
    void atOrBelowTheBoundADrainOnlyUnlinksDeadEntries() {
        UnpinStack stack = stack(100, 1, Runnable::run);
        Entry live = queuedEntry();
        stack.push(live);
        List<Entry> dead = new ArrayList<>();
        for (int i = 0; i < BATCH - 1; i++) {
            Entry entry = queuedEntry();
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
        List<Entry> pushed = push(stack, 3);
        stack.drainAllNow();
        assertEquals(3, unpinned.size());
        assertEquals(0, stack.backlog());
        for (Entry entry : pushed) {
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
        List<Entry> done = new ArrayList<>();
        Entry[] failing = new Entry[1];
        UnpinStack stack = stack(1, 10, task -> {}, entry -> {
            if (entry == failing[0]) {
                throw new OutOfMemoryError("in the compute");
            }
            done.add(entry);
        });
        List<Entry> pushed = push(stack, 3);
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
        List<Entry> done = new ArrayList<>();
        Entry[] failing = new Entry[1];
        UnpinStack stack = stack(1, 10, task -> {
            throw new RejectedExecutionException("full");
        }, entry -> {
            if (entry == failing[0]) {
                failing[0] = null; // fails once
                throw new OutOfMemoryError("in the compute");
            }
            done.add(entry);
        });
        List<Entry> pushed = push(stack, (int) BATCH - 1);
        failing[0] = pushed.get(0); // the oldest: a drain that keeps half a batch unpins it
        Entry last = queuedEntry();
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
}
