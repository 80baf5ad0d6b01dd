package org.mbcache.internal;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * A small table of wait queues shared by many objects, the JVM analogue of the kernel's hashed
 * {@code wait_var_event}/{@code wake_up_var} table: a thread waits for a condition on some object
 * (an entry's reference count, say) on the queue the object's identity hash picks, and whoever changes
 * that condition calls {@link #wake(Object)} for the object.
 *
 * <p>Each queue is a {@link ReentrantLock} with one {@link Condition} and a count of the threads
 * waiting on it, so a {@link #wake(Object)} that finds nobody waiting costs one volatile read and
 * never takes the lock. Unrelated objects that hash to the same queue cost each other a spurious
 * wake-up at most: every waiter re-checks its own condition.
 *
 * <p><b>No lost wake-up.</b> The protocol is a Dekker handshake between two volatile variables, which
 * the Java memory model totally orders (synchronization order):
 * <ul>
 *   <li>the waiter, holding the queue's lock, increments the queue's waiter count (a volatile write),
 *       then evaluates its condition (which must read the changing state with at least one volatile
 *       read), and only if it is false awaits, which releases the lock atomically;</li>
 *   <li>the waker first changes the state (with a volatile write or atomic read-modify-write), then
 *       reads the waiter count (a volatile read); if it is not zero it takes the lock and signals.</li>
 * </ul>
 * Either the waker's read of the waiter count comes after the waiter's increment, so it signals, and
 * it can only take the lock once the waiter is awaiting (or has not yet locked, and will then see the
 * new state); or it comes before, and then the waiter's condition check comes after the state change
 * and sees it. Waiting never spins: threads park inside {@link Condition#awaitNanos}, and re-check
 * their condition every {@link #RECHECK_NANOS} even if nobody wakes them, in case a wake-up failed.
 *
 * <p>Not exported: a helper any backend of the module may use.
 */
public final class HashedWaitQueues {

    /** One queue: a lock, its condition, and how many threads wait on it. */
    private static final class Queue {
        final ReentrantLock lock = new ReentrantLock();
        final Condition changed = lock.newCondition();
        /** Written only under {@link #lock}; read without it by wakers (hence volatile). */
        volatile int waiters;
    }

    /**
     * The longest a waiter sleeps before it re-checks its condition by itself: 100 ms. The handshake
     * above loses no wake-up; this is for the wake-up that failed, when {@link #wake} itself threw
     * (the queue lock's node allocation, out of memory) after the state had changed. Then nobody
     * may ever change the state again (ext4's waiter waits for the last other holder's release),
     * and the waiter finds it changed on its next re-check instead of sleeping until its time-out.
     */
    static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final Queue[] queues;
    private final int mask;

    /**
     * Creates a table of {@code 2^queueBits} queues.
     *
     * @param queueBits log2 of the number of queues, in {@code [0, 16]}
     * @throws IllegalArgumentException if {@code queueBits} is out of range
     */
    public HashedWaitQueues(int queueBits) {
        if (queueBits < 0 || queueBits > 16) {
            throw new IllegalArgumentException("queueBits must be in [0, 16], was " + queueBits);
        }
        queues = new Queue[1 << queueBits];
        for (int i = 0; i < queues.length; i++) {
            queues[i] = new Queue();
        }
        mask = queues.length - 1;
    }

    private Queue queueFor(Object waitedOn) {
        int h = System.identityHashCode(waitedOn) * 0x61C88647; // spread: identity hashes are not uniform in the low bits
        return queues[(h ^ (h >>> 16)) & mask];
    }

    /**
     * Blocks until {@code done} is true, the time runs out, or the thread is interrupted.
     * {@code done} is evaluated once without the lock (the common case: already done), then with the
     * queue's lock held, after this waiter is counted, before any waiting and again after every
     * wake-up (spurious ones included); a waker's handshake relies on the locked evaluations only;
     * it must be cheap, must not block, and must read the state it waits for with a volatile (or
     * stronger) read.
     *
     * @param waitedOn the object whose state is waited for; wakers pass the same object to {@link #wake}
     * @param done the condition waited for
     * @param timeoutNanos the longest wait in nanoseconds; {@code Long.MAX_VALUE} waits without limit,
     *     zero or less (any negative value) does not wait
     * @return {@code true} if {@code done} became (or was) true; {@code false} if the time ran out
     * @throws InterruptedException if the thread is interrupted while it would have to wait
     */
    public boolean await(Object waitedOn, BooleanSupplier done, long timeoutNanos) throws InterruptedException {
        if (done.getAsBoolean()) {
            return true; // common case, no lock
        }
        if (timeoutNanos <= 0L) {
            // Not only a shortcut: the deadline arithmetic below wraps for timeouts near
            // Long.MIN_VALUE (TimeUnit.toNanos saturates there), and would then never expire.
            return false;
        }
        Queue queue = queueFor(waitedOn);
        queue.lock.lockInterruptibly();
        try {
            queue.waiters++; // volatile write, ordered before the condition's volatile read below
            try {
                long deadline = timeoutNanos == Long.MAX_VALUE ? 0L : System.nanoTime() + timeoutNanos;
                while (!done.getAsBoolean()) {
                    long slice = RECHECK_NANOS;
                    if (timeoutNanos != Long.MAX_VALUE) {
                        long remaining = deadline - System.nanoTime();
                        if (remaining <= 0L) {
                            return false;
                        }
                        slice = Math.min(slice, remaining);
                    }
                    queue.changed.awaitNanos(slice);
                }
                return true;
            } finally {
                queue.waiters--;
            }
        } finally {
            queue.lock.unlock();
        }
    }

    /**
     * Like {@link #await(Object, BooleanSupplier, long)} with a {@link TimeUnit}.
     *
     * @param waitedOn the object whose state is waited for
     * @param done the condition waited for
     * @param timeout the longest wait
     * @param unit the unit of {@code timeout}
     * @return {@code true} if {@code done} became (or was) true; {@code false} if the time ran out
     * @throws InterruptedException if the thread is interrupted while it would have to wait
     */
    public boolean await(Object waitedOn, BooleanSupplier done, long timeout, TimeUnit unit)
            throws InterruptedException {
        long nanos = unit.toNanos(timeout);
        return await(waitedOn, done, nanos == Long.MAX_VALUE ? Long.MAX_VALUE - 1 : nanos);
    }

    /**
     * Wakes the threads waiting on {@code waitedOn}'s queue, if there are any. Call it after the
     * volatile write (or atomic update) that may have made a waiter's condition true.
     *
     * @param waitedOn the object whose state changed
     */
    public void wake(Object waitedOn) {
        Queue queue = queueFor(waitedOn);
        if (queue.waiters != 0) { // volatile read, after the caller's state change
            signalAll(queue);
        }
    }

    /** Wakes every waiting thread on every queue (for example when the owner is closed). */
    public void wakeAll() {
        for (Queue queue : queues) {
            signalAll(queue);
        }
    }

    private static void signalAll(Queue queue) {
        queue.lock.lock();
        try {
            queue.changed.signalAll();
        } finally {
            queue.lock.unlock();
        }
    }
}
