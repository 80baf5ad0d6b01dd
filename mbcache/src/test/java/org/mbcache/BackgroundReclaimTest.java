package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.mbcache.MbCacheReclaimTest.ManualExecutor;
import org.mbcache.contract.ConcurrentRounds;
import org.mbcache.testing.Backend;

/**
 * The background reclaim finishes its job: passes of {@code maxEntries / 16} go on, each one a task
 * of its own on the executor, until the count is below {@code maxEntries}; they stop when a pass
 * frees nothing, and never pile up on a creating thread when the executor throws or runs tasks in
 * place. Run against both layouts of the kernel port, which share the protocol
 * ({@link BackgroundReclaim}); the counts are exact because new entries are unreferenced, so each
 * pass frees exactly its batch in either layout.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@ParameterizedClass(name = "{0}")
@EnumSource(value = Backend.class, names = {"MBCACHE_REQUEST_LIST", "COMPACT"})
class BackgroundReclaimTest {

    private static final int BATCH = 64 / BackgroundReclaim.SHRINK_DIVISOR;

    /** The layout under test. */
    @Parameter
    Backend backend;

    /** A cache of 16 buckets and a fixed seed, kept out of memory-pressure reclaim. */
    private DedupCache cache(long maxEntries, Executor executor) {
        return cache(4, maxEntries, executor);
    }

    private DedupCache cache(int bucketBits, long maxEntries, Executor executor) {
        return switch (backend) {
            case MBCACHE_REQUEST_LIST -> MbCache.builder().bucketBits(bucketBits).maxEntries(maxEntries).hashSeed(42)
                    .executor(executor).memoryPressureReclaim(false).build();
            case COMPACT -> CompactMbCache.builder().bucketBits(bucketBits).maxEntries(maxEntries).hashSeed(42)
                    .executor(executor).memoryPressureReclaim(false).build();
            default -> throw new IllegalArgumentException("not a kernel-port layout: " + backend);
        };
    }

    /** Whether a background pass is pending or running. */
    private static boolean passPending(DedupCache cache) {
        return cache instanceof MbCache mbCache ? mbCache.backgroundReclaimPending()
                : ((CompactMbCache) cache).backgroundReclaimPending();
    }

    private static void createRange(DedupCache cache, int from, int to) {
        for (int i = from; i < to; i++) {
            assertTrue(cache.create(i, i, true));
        }
    }

    @Test
    void aPassThatLeavesTheCountAtTheBoundQueuesTheNextPassAsATaskOfItsOwn() {
        ManualExecutor executor = new ManualExecutor();
        try (DedupCache cache = cache(64, executor)) {
            createRange(cache, 0, 100);
            executor.tasks.remove().run();

            assertEquals(100 - BATCH, cache.size(), "the pass freed one batch");
            assertEquals(1, executor.tasks.size(), "the next pass is queued, not run inside this one");
            assertTrue(passPending(cache));
        }
    }

    @Test
    void thePassesGoOnUntilTheCountIsBelowMaxEntriesAndThenEndTheWork() {
        ManualExecutor executor = new ManualExecutor();
        try (DedupCache cache = cache(64, executor)) {
            createRange(cache, 0, 100);
            executor.runAll();

            assertEquals(60, cache.size(), "100 less ten batches of 4: the first count below 64");
            assertEquals(10, cache.stats().backgroundReclaimPasses());
            assertFalse(passPending(cache));
            cache.create(1_000, 1_000, true);
            assertTrue(executor.tasks.isEmpty(), "below the bound, a create schedules nothing");
        }
    }

    @Test
    void aPassThatFreesNothingDoesNotQueueAnotherAndALaterCreateSchedulesAgain() {
        ManualExecutor executor = new ManualExecutor();
        try (DedupCache cache = cache(64, executor)) {
            createRange(cache, 0, 100);
            List<CacheEntry> held = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                held.add(cache.get(i, i));
            }
            int tasksRun = 0;
            Runnable task;
            while ((task = executor.tasks.poll()) != null && tasksRun < 1_000) {
                task.run();
                tasksRun++;
            }

            assertEquals(1, tasksRun, "every entry is held: the first pass frees nothing and ends the work");
            assertEquals(100, cache.size());
            assertFalse(passPending(cache));
            held.forEach(cache::release);
            cache.create(1_000, 1_000, true);
            assertEquals(1, executor.tasks.size(), "the create above the bound scheduled a new pass");
        }
    }

    @Test
    void aClosedCacheEndsTheWorkWithoutQueueingAnotherPass() {
        ManualExecutor executor = new ManualExecutor();
        DedupCache cache = cache(64, executor);
        createRange(cache, 0, 100);
        cache.close();
        executor.tasks.remove().run();

        assertTrue(executor.tasks.isEmpty(), "a continuation was queued");
        assertFalse(passPending(cache));
    }

    /**
     * An executor that throws makes the creating thread run the pass (as before passes went on);
     * the pass's continuation, handed to the same executor, fails too and is not run on the
     * creating thread: one pass per create, however far above the bound the count is.
     */
    @Test
    void withAThrowingExecutorACreateRunsOnePassAndNoMore() {
        AtomicInteger offered = new AtomicInteger();
        ManualExecutor queued = new ManualExecutor();
        boolean[] throwing = {false};
        try (DedupCache cache = cache(64, task -> {
            if (throwing[0]) {
                offered.incrementAndGet();
                throw new RejectedExecutionException("always");
            }
            queued.execute(task);
        })) {
            createRange(cache, 0, 100); // one pass queued: the count goes on to 100
            throwing[0] = true;
            queued.tasks.remove().run(); // its continuation is refused: the work ends
            assertEquals(1, offered.get());
            assertFalse(passPending(cache));

            cache.create(1_000, 1_000, true);

            assertEquals(2, cache.stats().backgroundReclaimPasses(), "passes: the queued one, then the create's");
            assertEquals(3, offered.get(), "the create's pass and its continuation were offered once each");
            assertEquals(101 - 2 * BATCH, cache.size());
            assertFalse(passPending(cache), "the failed continuation left no pass pending");
        }
    }

    /**
     * An executor that runs a task inside {@code execute} (a caller-runs policy) would run each
     * continuation inside the previous pass: a pass that finds itself inside its own thread's
     * hand-over does not go on, so a create runs two passes at most.
     */
    @Test
    void withACallerRunsExecutorAPassRunsAtMostOneContinuationInPlace() {
        boolean[] inPlace = {false};
        ManualExecutor queued = new ManualExecutor();
        try (DedupCache cache = cache(64, task -> {
            if (inPlace[0]) {
                task.run();
            } else {
                queued.execute(task);
            }
        })) {
            createRange(cache, 0, 100);
            inPlace[0] = true;
            queued.tasks.remove().run();

            assertEquals(2, cache.stats().backgroundReclaimPasses());
            assertEquals(100 - 2 * BATCH, cache.size());
            assertFalse(passPending(cache));
        }
    }

    /**
     * An executor stuck for over a second (other work, a long pause): a create at twice the bound
     * hands the pending pass over again. When the executor catches up and runs both tasks, the one
     * handed over first is no longer the pending pass and does nothing, so one chain of passes takes
     * the count below the bound, and no pass runs below it.
     */
    @Test
    void aPassHandedOverAgainLeavesTheOriginalTaskANoOp() throws Exception {
        ManualExecutor executor = new ManualExecutor();
        int maxEntries = 1_600;
        int batch = maxEntries / BackgroundReclaim.SHRINK_DIVISOR;
        try (DedupCache cache = cache(6, maxEntries, executor)) {
            int next = 0;
            while (executor.tasks.isEmpty()) {
                cache.create(next, next, true);
                next++;
            }
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(BackgroundReclaim.STALE_PASS_NANOS) + 100);
            while (executor.tasks.size() < 2) {
                cache.create(next, next, true); // at twice the bound: the stale pass is handed over again
                next++;
            }

            drainCheckingTheFloor(cache, executor, maxEntries - batch);

            assertTrue(cache.size() < maxEntries, "size " + cache.size());
            assertFalse(passPending(cache));
        }
    }

    /**
     * An executor that runs every task twice: the second run of a pass finds it handed over (or the
     * work ended) and does nothing, so the passes and the count are those of a single run.
     */
    @Test
    void anExecutorThatRunsEveryTaskTwiceRunsEachPassOnce() {
        ManualExecutor executor = new ManualExecutor();
        try (DedupCache cache = cache(64, task -> {
            executor.execute(task);
            executor.execute(task);
        })) {
            createRange(cache, 0, 100);

            drainCheckingTheFloor(cache, executor, 64 - BATCH);

            assertEquals(60, cache.size(), "100 less ten batches of 4: the first count below 64");
            assertEquals(10, cache.stats().backgroundReclaimPasses());
            assertFalse(passPending(cache));
        }
    }

    /**
     * Executors that run a pass more than once at the same time as creates go on: every task twice
     * on a pool, or the task on a pool and then a throw (so the creating thread runs it too). Once
     * the creates stop and the work settles, the count is at most a batch below the bound, and a
     * creator's synchronous pass (64) that ran beside the last background pass: no pass ran a batch
     * twice, which would take it two batches below.
     */
    @Test
    void executorsThatRunAPassTwiceConcurrentlyNeverTakeTheCountFarBelowTheBound() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Executor twice = task -> {
                pool.execute(task);
                pool.execute(task);
            };
            Executor queuedThenThrowing = task -> {
                pool.execute(task);
                throw new RejectedExecutionException("queued all the same");
            };
            for (Executor executor : List.of(twice, queuedThenThrowing)) {
                int maxEntries = 1_600;
                try (DedupCache cache = cache(6, maxEntries, executor)) {
                    ConcurrentRounds.together(() -> createRange(cache, 0, 60_000),
                            () -> createRange(cache, 1 << 24, (1 << 24) + 60_000));
                    awaitSettled(cache, 2L * maxEntries);
                    Thread.sleep(200); // copies of passes still queued on the pool run meanwhile
                    long size = cache.size();
                    assertTrue(size >= maxEntries - maxEntries / BackgroundReclaim.SHRINK_DIVISOR - BackgroundReclaim.SYNC_SHRINK_BATCH,
                            "size " + size + ", " + cache.stats());
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Runs the queued tasks one at a time until none is left, checking after each that background
     * passes alone never took the count below {@code floor}.
     */
    private static void drainCheckingTheFloor(DedupCache cache, ManualExecutor executor, long floor) {
        int tasksRun = 0;
        Runnable task;
        while ((task = executor.tasks.poll()) != null) {
            task.run();
            tasksRun++;
            assertTrue(cache.size() >= floor, "after task " + tasksRun + ": size " + cache.size()
                    + " is below " + floor + "; still queued " + executor.tasks.size());
            assertTrue(tasksRun < 10_000, "the passes do not end");
        }
    }

    /**
     * A writer the executor keeps up with: each burst of 128 new creates starts once the previous
     * burst's background work has ended. The passes then take the count to the bound between
     * bursts, so it never nears twice the bound, and no create reclaims synchronously. (With one
     * pass per create that found the count at the bound, each burst would leave 64 more entries,
     * and the 17th burst would reach twice the bound.)
     */
    @Test
    void aWriterTheExecutorKeepsUpWithNeverRunsASynchronousPass() throws Exception {
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try (DedupCache cache = cache(6, 1024, executor)) {
            int next = 0;
            for (int burst = 0; burst < 40; burst++) {
                for (int i = 0; i < 128; i++, next++) {
                    cache.create(next, next, true);
                }
                awaitSettled(cache, 1024);
            }

            assertEquals(0, cache.stats().synchronousReclaimPasses());
            assertTrue(cache.stats().backgroundReclaimPasses() > 40, "passes: " + cache.stats().backgroundReclaimPasses());
        } finally {
            executor.shutdownNow();
        }
    }

    /**
     * Bursts of 128 new creates with 5 ms gaps, on a real single-thread executor: shortly after the
     * last burst the count is back at the bound at most (the create that finds one entry less adds
     * it) and no pass is pending (the deadline is generous
     * for a loaded machine; the passes take well under a millisecond).
     */
    @Test
    void afterBurstsOnASingleThreadExecutorTheCountSettlesBelowTheBound() throws Exception {
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try (DedupCache cache = cache(6, 1024, executor)) {
            int next = 0;
            for (int burst = 0; burst < 60; burst++) {
                for (int i = 0; i < 128; i++, next++) {
                    cache.create(next, next, true);
                }
                Thread.sleep(5);
            }

            awaitSettled(cache, 1024);
            assertTrue(cache.size() <= 1024, "size " + cache.size());
        } finally {
            executor.shutdownNow();
        }
    }

    /**
     * A create at twice the bound decides on a synchronous pass, and before that pass holds the
     * reclaim lock the background passes take the count below the bound: the synchronous pass then
     * has nothing to do and frees nothing, and the cache keeps what the background passes left it
     * (a pass of 64 on top would have emptied this cache of 64). Made deterministic by an executor
     * that drops every task until the pending pass is stale, and then, asked by the creating thread
     * to take the pass handed over again, runs the whole chain before it returns.
     */
    @Test
    void aSynchronousPassOvertakenByTheBackgroundPassesFreesNothing() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        AtomicBoolean dropping = new AtomicBoolean(true);
        AtomicReference<DedupCache> built = new AtomicReference<>();
        Thread creator = Thread.currentThread();
        Executor executor = task -> {
            if (dropping.get()) {
                return; // accepted and never run: the pass goes stale
            }
            pool.execute(task);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (Thread.currentThread() == creator && passPending(built.get())) {
                assertTrue(System.nanoTime() < deadline, "the background passes do not end");
                Thread.onSpinWait();
            }
        };
        try (DedupCache cache = cache(64, executor)) {
            built.set(cache);
            createRange(cache, 0, 128);
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(BackgroundReclaim.STALE_PASS_NANOS) + 100);
            dropping.set(false);

            assertTrue(cache.create(128, 128, true)); // at twice the bound: hand-over, then the synchronous pass

            assertEquals(64 - BATCH + 1, cache.size(), "the background passes' 60, and the new entry");
            assertEquals(0, cache.stats().synchronousReclaimPasses());
            assertEquals(17, cache.stats().backgroundReclaimPasses(), "128 down to 60 in batches of 4");
        } finally {
            pool.shutdownNow();
        }
    }

    /** Waits, up to a generous deadline, until no pass is pending and the count is at most {@code bound}. */
    private static void awaitSettled(DedupCache cache, long bound) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (passPending(cache) || cache.size() > bound) {
            assertTrue(System.nanoTime() < deadline,
                    "not settled: size " + cache.size() + ", pending " + passPending(cache));
            Thread.sleep(1);
        }
    }
}
