package org.mbcache.stress.soak;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The executor a soak cache runs its background reclaim (or Caffeine's maintenance) on: one daemon
 * thread that can inject the faults a real executor has, and that the soak can hold still while it
 * checks the cache.
 *
 * <p>Faults ({@link Mode}): a {@link Mode#DROPPING} executor accepts half the tasks and silently never
 * runs them (a pool shut down under the cache, a lost queue); a {@link Mode#THROWING} executor throws from
 * {@code execute} for half the tasks, cycling through a {@link RejectedExecutionException}, an
 * {@link IllegalStateException} and an {@link OutOfMemoryError}, all three of which real executors throw.
 * The thrown objects are instances of this class's own subclasses, so the soak can tell an injected
 * fault that escaped into a cache call from a fault of the cache itself ({@link #isInjected}).
 *
 * <p>Implementation notes: one monitor guards the queue and the flags; the worker thread runs a task
 * outside it. {@link #hold(long)} stops the worker from starting tasks and waits for the running one to end,
 * so that the soak's checks see a cache nobody else is changing; the tasks queued meanwhile run after
 * {@link #resume()}. A task that throws is a failure of the cache (background reclaim must not throw)
 * and is counted in the tally.
 */
final class FaultyExecutor implements Executor {

    /** What {@link #execute} does with a task. */
    enum Mode {
        /** Runs every task. */
        RELIABLE,
        /** Silently drops every other task (chosen at random): accepted, never run. */
        DROPPING,
        /** Throws from {@code execute} for every other task (chosen at random). */
        THROWING
    }

    /** An injected {@link RejectedExecutionException}. */
    static final class InjectedRejection extends RejectedExecutionException {
        private static final long serialVersionUID = 1L;

        InjectedRejection() {
            super("injected fault: executor rejected the task");
        }
    }

    /** An injected {@link IllegalStateException} (a pool in a bad state). */
    static final class InjectedIllegalState extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        InjectedIllegalState() {
            super("injected fault: executor threw IllegalStateException");
        }
    }

    /** An injected {@link OutOfMemoryError} (the executor could not allocate its queue node or thread). */
    static final class InjectedOutOfMemory extends OutOfMemoryError {
        private static final long serialVersionUID = 1L;

        InjectedOutOfMemory() {
            super("injected fault: executor ran out of memory");
        }
    }

    private final Mode mode;
    private final Tally tally;
    private final Thread worker;
    private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
    private boolean held;
    private boolean running;
    private boolean shutdown;
    private long throwCycle;
    /** Faults injected so far, and tasks offered since the first one; written under the monitor. */
    private long faultsInjected;
    private long offeredAfterFault;

    /**
     * Starts the executor's thread.
     *
     * @param name the thread's name
     * @param mode the fault to inject
     * @param tally where injected faults and failing tasks are counted
     */
    FaultyExecutor(String name, Mode mode, Tally tally) {
        this.mode = mode;
        this.tally = tally;
        this.worker = new Thread(this::work, name);
        worker.setDaemon(true);
        worker.start();
    }

    /** Whether {@code t} is one of the faults this class injects. */
    static boolean isInjected(Throwable t) {
        return t instanceof InjectedRejection || t instanceof InjectedIllegalState || t instanceof InjectedOutOfMemory;
    }

    @Override
    public void execute(Runnable task) {
        if (task == null) {
            throw new NullPointerException("task");
        }
        synchronized (this) {
            if (faultsInjected > 0) {
                offeredAfterFault++;
            }
        }
        if (mode != Mode.RELIABLE && ThreadLocalRandom.current().nextBoolean()) {
            synchronized (this) {
                faultsInjected++;
            }
            if (mode == Mode.DROPPING) {
                tally.fault("executor-drop");
                return;
            }
            tally.fault("executor-throw");
            throwNextFault();
        }
        synchronized (this) {
            queue.add(task);
            notifyAll();
        }
        tally.operation("background-task");
    }

    /** Throws the next of the three injected faults, in turn. */
    private synchronized void throwNextFault() {
        switch ((int) (throwCycle++ % 3)) {
            case 0 -> throw new InjectedRejection();
            case 1 -> throw new InjectedIllegalState();
            default -> throw new InjectedOutOfMemory();
        }
    }

    /**
     * Whether the cache came back to the executor after a fault: {@code true} if no fault was injected,
     * or if a task was offered after the first one. A cache that never asks again has switched its
     * background reclaim off for good.
     */
    synchronized boolean offeredAgainAfterFault() {
        return faultsInjected == 0 || offeredAfterFault > 0;
    }

    /**
     * Stops starting tasks and waits until none runs.
     *
     * @param timeoutMillis the longest wait
     * @return {@code true} if no task runs now; {@code false} if the running one did not end in time
     * @throws InterruptedException if the calling thread is interrupted
     */
    synchronized boolean hold(long timeoutMillis) throws InterruptedException {
        held = true;
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (running) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                return false;
            }
            wait(left);
        }
        return true;
    }

    /** Lets the worker start tasks again, the ones queued while held first. */
    synchronized void resume() {
        held = false;
        notifyAll();
    }

    /** Ends the worker thread; queued tasks are dropped. */
    synchronized void shutdown() {
        shutdown = true;
        notifyAll();
    }

    private void work() {
        while (true) {
            Runnable task;
            synchronized (this) {
                while (!shutdown && (held || queue.isEmpty())) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (shutdown) {
                    return;
                }
                task = queue.poll();
                running = true;
            }
            try {
                task.run();
            } catch (Throwable t) {
                tally.failed("background-task-completes", "a background task threw " + t);
            } finally {
                synchronized (this) {
                    running = false;
                    notifyAll();
                }
            }
        }
    }
}
