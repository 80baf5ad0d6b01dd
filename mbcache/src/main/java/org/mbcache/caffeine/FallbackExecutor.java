package org.mbcache.caffeine;

import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;

/**
 * The executor of a {@link CaffeineDedupCache}'s background work, Caffeine's maintenance and the
 * {@link UnpinStack}'s drains: the one place that decides what happens when the executor the user
 * configured fails. Both kinds of work go through the one instance the cache builds, so the policy
 * below holds for both and is written once.
 */
final class FallbackExecutor implements Executor {

    /*
     * Design notes.
     *
     * An executor can fail a task in two ways, and they are handled in two places.
     *
     * It throws from execute: a RejectedExecutionException (saturated, shut down), or anything at
     * all, an Error included, as Caffeine treats its own executor. Then the task runs here, on the
     * calling thread, once: background work is never switched off by a failing executor, it only
     * moves to the callers. Whatever the task itself throws when run here reaches the caller, as
     * with Caffeine's own fallback: this class never runs a task twice. The failure is logged after
     * the task ran, a warning the first time and DEBUG after, as the kernel port does.
     *
     * It accepts the task and never runs it (a queue that drops work, shutdownNow). Nothing here
     * can tell that from a task that is merely late, so the owner of each kind of work recovers by
     * doing it itself once it is overdue: the UnpinStack's pusher takes over a drain pending at four
     * batches, and the cache's synchronous pass runs Caffeine's cleanUp, which also resets
     * Caffeine's drain status, at 2 * maxEntries.
     *
     * Once stopped (the cache closed), tasks are neither handed over nor run. A task handed over
     * before may still run later: the work checks for itself.
     */

    private static final System.Logger LOGGER = System.getLogger(CaffeineDedupCache.class.getName());

    private final Executor executor;
    private final BooleanSupplier stopped;
    /** Whether an executor failure was logged as a warning already (racy: at worst two warnings). */
    private boolean failureLogged;
    /** Runs first in every task, wherever it runs: the cache's count of background passes. */
    private final Runnable beforeEachTask;

    /**
     * @param executor the executor the user configured
     * @param stopped whether tasks are no longer wanted (checked before each hand-over)
     * @param beforeEachTask runs at the start of every task, on the executor or here
     */
    FallbackExecutor(Executor executor, BooleanSupplier stopped, Runnable beforeEachTask) {
        this.executor = Objects.requireNonNull(executor, "executor");
        this.stopped = Objects.requireNonNull(stopped, "stopped");
        this.beforeEachTask = Objects.requireNonNull(beforeEachTask, "beforeEachTask");
    }

    /**
     * The fallback alone: never stopped, nothing run before a task.
     *
     * @param executor the executor to fall back from
     */
    FallbackExecutor(Executor executor) {
        this(executor, () -> false, () -> {});
    }

    /**
     * Hands the task to the executor, or runs it on this thread if the executor throws anything;
     * does nothing once stopped. Never throws what the executor throws; throws what the task throws
     * when it runs on this thread.
     *
     * @param task the work
     */
    @Override
    public void execute(Runnable task) {
        if (stopped.getAsBoolean()) {
            return;
        }
        Runnable counted = () -> {
            beforeEachTask.run();
            task.run();
        };
        try {
            executor.execute(counted);
        } catch (Throwable refused) { // anything, as Caffeine does: the work is done here instead
            counted.run();
            // Logged after the task ran, so that a log call that fails (out of memory) cannot cost
            // the work; the first failure as a warning with its stack, repeats (a broken executor
            // fails every time) at DEBUG, as the kernel port logs its reclaim executor's.
            System.Logger.Level level = failureLogged ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING;
            failureLogged = true;
            LOGGER.log(level, "mbcache: the executor failed; ran the cache's background task on the calling thread",
                    refused);
        }
    }
}
