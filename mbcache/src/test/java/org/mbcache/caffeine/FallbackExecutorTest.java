package org.mbcache.caffeine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the Caffeine backend's background work gets from an executor that fails: the one
 * fallback, shared by Caffeine's maintenance and the unpin drains. How the cache as a whole keeps
 * going is in {@link CaffeineDedupCacheTest}; the drains' takeover of a dropped task in
 * {@link UnpinStackTest}.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class FallbackExecutorTest {

    private final List<Runnable> handedOver = new ArrayList<>();
    private final AtomicInteger runs = new AtomicInteger();
    private final Runnable task = runs::incrementAndGet;

    private static Executor throwing(Throwable failure) {
        return task -> {
            if (failure instanceof RuntimeException) {
                throw (RuntimeException) failure;
            }
            throw (Error) failure;
        };
    }

    @Test
    void aTaskTheExecutorAcceptsRunsThereAndNotOnTheCallingThread() {
        new FallbackExecutor(handedOver::add).execute(task);
        assertEquals(0, runs.get(), "ran on the calling thread");
        assertEquals(1, handedOver.size());
        handedOver.get(0).run();
        assertEquals(1, runs.get());
    }

    @Test
    void aTaskTheExecutorRejectsRunsOnTheCallingThreadOnce() {
        new FallbackExecutor(throwing(new RejectedExecutionException("full"))).execute(task);
        assertEquals(1, runs.get());
    }

    @Test
    void aTaskTheExecutorThrowsAnErrorForRunsOnTheCallingThreadOnce() {
        new FallbackExecutor(throwing(new AssertionError("executor down"))).execute(task);
        assertEquals(1, runs.get());
    }

    @Test
    void whatATaskRunOnTheCallingThreadThrowsReachesTheCallerAfterOneRun() {
        OutOfMemoryError failure = new OutOfMemoryError("in the task");
        Runnable failing = () -> {
            runs.incrementAndGet();
            throw failure;
        };
        FallbackExecutor executor = new FallbackExecutor(throwing(new RejectedExecutionException("full")));
        assertSame(failure, assertThrows(OutOfMemoryError.class, () -> executor.execute(failing)));
        assertEquals(1, runs.get(), "the task was run again after it threw");
    }

    @Test
    void onceStoppedATaskIsNeitherHandedOverNorRun() {
        AtomicBoolean stopped = new AtomicBoolean();
        FallbackExecutor executor = new FallbackExecutor(handedOver::add, stopped::get, () -> {});
        stopped.set(true);
        executor.execute(task);
        assertTrue(handedOver.isEmpty());
        FallbackExecutor failing = new FallbackExecutor(throwing(new RejectedExecutionException("full")), stopped::get, () -> {});
        failing.execute(task);
        assertEquals(0, runs.get());
    }

    @Test
    void theHookRunsBeforeEveryTaskOnTheExecutor() {
        List<String> order = new ArrayList<>();
        FallbackExecutor executor = new FallbackExecutor(handedOver::add, () -> false, () -> order.add("hook"));
        executor.execute(() -> order.add("task"));
        handedOver.get(0).run();
        assertEquals(List.of("hook", "task"), order);
    }

    @Test
    void theHookRunsBeforeEveryTaskRunOnTheCallingThread() {
        List<String> order = new ArrayList<>();
        FallbackExecutor executor = new FallbackExecutor(
                throwing(new RejectedExecutionException("full")), () -> false, () -> order.add("hook"));
        executor.execute(() -> order.add("task"));
        assertEquals(List.of("hook", "task"), order);
    }
}
