package org.mbcache.contract;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs a race many times, bounded in time: each round, one thread runs a setup step, then all racing
 * threads are released together by a barrier, run their part, meet again, and one thread runs the
 * round's check. The first failure (an assertion, an exception, a barrier that timed out because a
 * thread hangs) ends the run and is rethrown on the calling thread, so a race that goes wrong is a
 * failed assertion and never a hung build. Shared by every backend's contract tests.
 */
public final class ConcurrentRounds {

    /** One racing thread's part of a round. */
    @FunctionalInterface
    interface Part {
        void run(int thread, int round) throws Exception;
    }

    /** A step run by one thread between rounds. */
    @FunctionalInterface
    interface Step {
        void run(int round) throws Exception;
    }

    /** How long a barrier waits for the other threads before the run is declared hung. */
    private static final long BARRIER_SECONDS = 10;

    private ConcurrentRounds() {}

    /**
     * Runs {@code rounds} rounds of {@code threads} racing parts.
     *
     * @param threads the number of racing threads (2 suits a 2-core machine)
     * @param rounds the number of rounds
     * @param setup run before each round, by one thread, while the others wait
     * @param part each thread's part of the race
     * @param check run after each round, by one thread, once every part returned
     */
    static void run(int threads, int rounds, Step setup, Part part, Step check) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicInteger round = new AtomicInteger();
        CyclicBarrier start = new CyclicBarrier(threads, () -> barrierAction(setup, round.get(), failure));
        CyclicBarrier end = new CyclicBarrier(threads, () -> {
            barrierAction(check, round.get(), failure);
            round.incrementAndGet();
        });
        List<Thread> racers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            Thread racer = new Thread(() -> {
                try {
                    for (int r = 0; r < rounds && failure.get() == null; r++) {
                        start.await(BARRIER_SECONDS, TimeUnit.SECONDS);
                        part.run(thread, r);
                        end.await(BARRIER_SECONDS, TimeUnit.SECONDS);
                    }
                } catch (BrokenBarrierException e) {
                    failure.compareAndSet(null, e); // a more telling failure of another thread wins if first
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    start.reset(); // release the others: they fail with BrokenBarrierException
                    end.reset();
                }
            }, "racer-" + t);
            racer.setDaemon(true);
            racers.add(racer);
            racer.start();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BARRIER_SECONDS * 3);
        for (Thread racer : racers) {
            racer.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (racer.isAlive()) {
                racers.forEach(Thread::interrupt);
                throw new AssertionError(racer.getName() + " still running: hung race\n" + stackOf(racer));
            }
        }
        rethrow(failure.get());
    }

    /** One round of {@code threads} parts with no setup and no check. */
    static void together(int threads, Part part) throws Exception {
        run(threads, 1, r -> {}, part, r -> {});
    }

    /**
     * Runs each task once on its own thread, all released together, with the same hang detection
     * and failure reporting as {@link #run}. For backend-specific tests outside this package.
     */
    public static void together(Runnable... tasks) throws Exception {
        together(tasks.length, (thread, round) -> tasks[thread].run());
    }

    private static void barrierAction(Step step, int round, AtomicReference<Throwable> failure) {
        try {
            step.run(round);
        } catch (Throwable e) {
            failure.compareAndSet(null, e);
            throw new IllegalStateException("barrier action failed", e); // breaks the barrier
        }
    }

    private static void rethrow(Throwable failure) throws Exception {
        if (failure == null) {
            return;
        }
        if (failure instanceof Error) {
            throw (Error) failure;
        }
        throw (Exception) failure;
    }

    private static String stackOf(Thread thread) {
        StringBuilder sb = new StringBuilder();
        for (StackTraceElement element : thread.getStackTrace()) {
            sb.append("\tat ").append(element).append('\n');
        }
        return sb.toString();
    }
}
