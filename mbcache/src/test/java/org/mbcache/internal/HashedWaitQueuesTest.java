package org.mbcache.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class HashedWaitQueuesTest {

    private final HashedWaitQueues queues = new HashedWaitQueues(0); // one queue: every object shares it

    /** What a waiting thread runs: an {@code await} call. */
    @FunctionalInterface
    private interface Wait {
        boolean await() throws InterruptedException;
    }

    /** Runs {@code wait} on a thread of the common pool; its result, or its interruption as an error. */
    private static CompletableFuture<Boolean> waiting(Wait wait) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return wait.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void queueBitsOutOfRangeAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> new HashedWaitQueues(-1));
        assertThrows(IllegalArgumentException.class, () -> new HashedWaitQueues(17));
    }

    @Test
    void awaitOfAConditionAlreadyTrueReturnsAtOnceEvenWhenInterrupted() throws Exception {
        Thread.currentThread().interrupt();
        try {
            assertTrue(queues.await(this, () -> true, Long.MAX_VALUE));
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void awaitReturnsFalseWhenTheTimeRunsOut() throws Exception {
        assertFalse(queues.await(this, () -> false, 20, TimeUnit.MILLISECONDS));
        assertFalse(queues.await(this, () -> false, 0L));
    }

    @Test
    void wakeAfterTheConditionChangedWakesTheWaiter() throws Exception {
        AtomicBoolean done = new AtomicBoolean();
        Object waitedOn = new Object();
        CompletableFuture<Boolean> waiter = waiting(() -> queues.await(waitedOn, done::get, Long.MAX_VALUE));
        Thread.sleep(20);
        done.set(true);
        queues.wake(waitedOn);
        assertTrue(waiter.get(5, TimeUnit.SECONDS));
    }

    @Test
    void aWaiterFindsItsConditionTrueEvenIfTheWakeUpNeverCame() throws Exception {
        AtomicBoolean done = new AtomicBoolean();
        Object waitedOn = new Object();
        CompletableFuture<Boolean> waiter = waiting(() -> queues.await(waitedOn, done::get, Long.MAX_VALUE));
        Thread.sleep(20);
        done.set(true); // and no wake(): as when wake() itself failed
        assertTrue(waiter.get(5, TimeUnit.SECONDS));
    }

    @Test
    void aWakeForAnotherObjectOnTheSameQueueDoesNotEndTheWait() throws Exception {
        Object mine = new Object();
        Object other = new Object();
        CompletableFuture<Boolean> waiter = waiting(() -> queues.await(mine, () -> false, 200, TimeUnit.MILLISECONDS));
        Thread.sleep(20);
        queues.wake(other);
        assertFalse(waiter.get(5, TimeUnit.SECONDS), "a spurious wake-up must re-check the condition");
    }

    @Test
    void wakeAllWakesEveryWaiterWhoseConditionHolds() throws Exception {
        AtomicBoolean closed = new AtomicBoolean();
        CompletableFuture<?>[] waiters = new CompletableFuture<?>[3];
        for (int i = 0; i < waiters.length; i++) {
            Object waitedOn = new Object();
            waiters[i] = waiting(() -> queues.await(waitedOn, closed::get, Long.MAX_VALUE));
        }
        Thread.sleep(20);
        closed.set(true);
        queues.wakeAll();
        CompletableFuture.allOf(waiters).get(5, TimeUnit.SECONDS);
    }

    @Test
    void aWaitingThreadIsInterruptible() throws Exception {
        Thread waiter = new Thread(() -> {
            try {
                queues.await(this, () -> false, Long.MAX_VALUE);
            } catch (InterruptedException expected) {
                return;
            }
            throw new AssertionError("returned without interrupt");
        });
        waiter.setDaemon(true);
        waiter.start();
        Thread.sleep(20);
        waiter.interrupt();
        waiter.join(5000);
        assertFalse(waiter.isAlive());
    }
}
