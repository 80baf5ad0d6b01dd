package org.mbcache.contract;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;

/**
 * Fault injection into a backend's {@code waitUnused} queues (its {@code unusedWaiters} field, or its table's, a
 * {@code HashedWaitQueues}), by reflection: every object is made to share the first queue, which gets
 * a lock whose next {@code lock()}, once armed, throws {@link OutOfMemoryError}, as a contended
 * lock's node allocation can. That is the one allocation a wake-up makes.
 */
public final class WaitQueueFaults {

    private final List<FailingLock> locks = new ArrayList<>();

    private WaitQueueFaults() {}

    /** A queue lock whose next {@code lock()} throws once armed. */
    private static final class FailingLock extends ReentrantLock {
        private static final long serialVersionUID = 1L;
        final AtomicBoolean armed = new AtomicBoolean();

        @Override
        public void lock() {
            if (armed.getAndSet(false)) {
                throw new OutOfMemoryError("injected: the wait queue lock's node allocation");
            }
            super.lock();
        }
    }

    /**
     * Puts a failing lock into each of the cache's wait queues, disarmed.
     *
     * @param cache a backend with an {@code unusedWaiters} field (or a table with one)
     * @return the faults, to arm and disarm
     * @throws ReflectiveOperationException if the backend has no such queues
     */
    public static WaitQueueFaults injectInto(DedupCache cache) throws ReflectiveOperationException {
        WaitQueueFaults faults = new WaitQueueFaults();
        Object waitQueues = waitQueuesOf(cache);
        Object[] queues = (Object[]) field(waitQueues, "queues");
        // One queue for every object: then a wake-up for any entry meets any waiter, and fails.
        Arrays.fill(queues, queues[0]);
        FailingLock lock = new FailingLock();
        setField(queues[0], "lock", lock);
        setField(queues[0], "changed", lock.newCondition());
        faults.locks.add(lock);
        return faults;
    }

    /** The backend's {@code unusedWaiters}: its own field, or its table's (the compact layout's). */
    private static Object waitQueuesOf(DedupCache cache) throws ReflectiveOperationException {
        try {
            return field(cache, "unusedWaiters");
        } catch (NoSuchFieldException notHere) {
            return field(field(cache, "table"), "unusedWaiters");
        }
    }

    /** The next wake-up that finds a waiter throws. */
    public void arm() {
        locks.forEach(lock -> lock.armed.set(true));
    }

    /** Wake-ups succeed again. */
    public void disarm() {
        locks.forEach(lock -> lock.armed.set(false));
    }

    private static Object field(Object target, String name) throws ReflectiveOperationException {
        Field field = target.getClass().getDeclaredField(name);
        field.setAccessible(true);
        return field.get(target);
    }

    private static void setField(Object target, String name, Object value) throws ReflectiveOperationException {
        Field field = target.getClass().getDeclaredField(name);
        field.setAccessible(true);
        field.set(target, value);
    }

    /**
     * Starts a daemon thread that waits in {@code waitUnused} for {@code entry} and sets
     * {@code returned} when the wait ends (an {@link IllegalStateException} from a close counts);
     * returns once it sleeps.
     *
     * @param cache the cache
     * @param entry an entry somebody else also holds
     * @param returned set when the wait ends, except by interruption
     * @return the waiting thread
     * @throws InterruptedException if interrupted while waiting for it to sleep
     */
    public static Thread waiterFor(DedupCache cache, CacheEntry entry, AtomicBoolean returned)
            throws InterruptedException {
        Thread waiter = new Thread(() -> {
            try {
                cache.waitUnused(entry);
            } catch (InterruptedException e) {
                return;
            } catch (IllegalStateException closed) {
                // closing wakes waiters with this: it counts as returning
            }
            returned.set(true);
        });
        waiter.setDaemon(true);
        waiter.start();
        untilAsleep(waiter);
        return waiter;
    }

    /**
     * Returns once {@code thread} is parked (waiters re-check on a timer, so it is then in
     * {@code TIMED_WAITING}, or {@code WAITING} on a lock).
     *
     * @param thread a started thread that is about to wait
     * @throws InterruptedException if interrupted while polling its state
     */
    public static void untilAsleep(Thread thread) throws InterruptedException {
        Thread.State state;
        while ((state = thread.getState()) != Thread.State.WAITING && state != Thread.State.TIMED_WAITING) {
            Thread.sleep(1);
        }
    }
}
