package org.mbcache;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One other thread for a test, so that a reference can be taken on one thread and given back on
 * another (the hot-mode tests: {@link HotModeTest}, {@link CompactHotSlotTest},
 * {@link MbCacheHotEntryTest}). A call waits up to 10 seconds for the task; an
 * {@link IllegalStateException} the task throws there (a refused release) is thrown here.
 */
final class OtherThread implements AutoCloseable {

    /** A task that returns nothing and may throw. */
    @FunctionalInterface
    interface Task {
        void run() throws Exception;
    }

    private final ExecutorService thread = Executors.newSingleThreadExecutor();

    /** Runs the task on the other thread; its result. */
    <T> T call(Callable<T> task) throws InterruptedException, ExecutionException, TimeoutException {
        try {
            return thread.submit(task).get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IllegalStateException refused) {
                throw refused;
            }
            throw e;
        }
    }

    /** Runs the task on the other thread. */
    void run(Task task) throws InterruptedException, ExecutionException, TimeoutException {
        call(() -> {
            task.run();
            return null;
        });
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
