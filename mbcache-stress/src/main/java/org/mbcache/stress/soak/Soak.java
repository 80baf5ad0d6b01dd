package org.mbcache.stress.soak;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;
import org.mbcache.testing.Backend;

/**
 * The soak run: many threads doing ext4's operations on one small cache for a long time, with faults
 * injected, and the invariants that prove nothing was lost checked whenever the load pauses.
 *
 * <h2>Phases</h2>
 * <ul>
 *   <li>{@link Phase#STEADY}: the load, with reclaim running on a reliable executor and threads
 *       interrupted while they wait in {@code waitUnused};</li>
 *   <li>{@link Phase#DROPPING_EXECUTOR}: the same, on an executor that silently drops half the
 *       background tasks;</li>
 *   <li>{@link Phase#THROWING_EXECUTOR}: the same, on an executor that throws from {@code execute} for
 *       half of them (a {@code RejectedExecutionException}, an {@code IllegalStateException} or an
 *       {@code OutOfMemoryError}); no cache call may let that escape;</li>
 *   <li>{@link Phase#CLOSE_MID_LOAD}: round after round, a fresh cache under the same load is closed
 *       at a random moment, threads waiting in {@code waitUnused} included (each thread holds one
 *       entry across the close, so deleters of its pair wait until {@code close()} wakes them).</li>
 * </ul>
 *
 * <h2>Checks</h2>
 * While it runs, each worker checks that every entry it is handed answers the question asked, that an
 * entry it holds is still the one cached for its pair, that {@code size()} after its create stays within
 * twice the bound plus the creates in flight on the other threads (the contract, section 4), that only {@link IllegalStateException} comes out
 * of a cache being closed and that every call started after {@code close()} returned throws it, that
 * {@code close()} ends every {@code waitUnused} in progress well before its time-out, and that nothing
 * else is ever thrown. At each checkpoint (about ten per phase) the coordinator pauses the
 * load at a barrier (a worker that does not arrive in {@value Load#STUCK_MILLIS} ms is stuck: its stack
 * is reported), holds the executor still, and then, with nothing moving:
 * <ol>
 *   <li>every worker gave back every reference it was handed;</li>
 *   <li>{@code size()} equals the live entries, counted by a {@code get} of every pair the soak can
 *       create (a count repeated until {@code size()} reads the same before and after it, since the
 *       Caffeine backend may still evict inline);</li>
 *   <li>every live pair it picks (half of them; all at the end) is deletable: {@code deleteOrGet}
 *       answers {@code null}, as nobody holds it, and the pair is gone afterwards; {@code size()} again
 *       equals the live entries, and is 0 at the end.</li>
 * </ol>
 * Every wait is bounded and every thread is joined with a time-out, so a stuck thread is a reported
 * failure, never a hung build.
 */
public final class Soak {

    /** The parts of a soak run. */
    public enum Phase {
        /** Load with reclaim on a reliable executor, and interrupts. */
        STEADY,
        /** Load on an executor that drops tasks. */
        DROPPING_EXECUTOR,
        /** Load on an executor that throws. */
        THROWING_EXECUTOR,
        /** Fresh caches closed in the middle of the load. */
        CLOSE_MID_LOAD
    }

    /** How long one steady-phase {@code waitUnused} waits: short, so that two deleters of one pair take turns. */
    private static final long STEADY_WAIT_MILLIS = 5;

    /**
     * How long one close-phase {@code waitUnused} waits: long, so that nothing but {@code close()} ends
     * a wait on an entry held across the close (a round closes its cache within about 100 ms), and half
     * the {@value Load#STUCK_MILLIS} ms the coordinator waits for the workers to end, so that a waiter
     * {@code close()} did not wake runs out its wait, and reports it, before the round gives up on it.
     */
    static final long CLOSE_WAIT_MILLIS = 10_000;

    /** Checkpoints per steady phase. */
    private static final int CHECKPOINTS = 10;

    private Soak() {
    }

    /** Builds the caches a soak phase runs on. */
    @FunctionalInterface
    public interface CacheFactory {
        /**
         * A new, empty cache in the soak's shape.
         *
         * @param config the shape (bucket bits and bound)
         * @param executor where the cache must run its background work
         * @return the cache, which the soak closes
         */
        DedupCache open(SoakConfig config, Executor executor);
    }

    /**
     * Runs one phase of the soak on one backend.
     *
     * @param backend the implementation under test
     * @param phase what to run
     * @param millis how long to run the load, in milliseconds
     * @param config the shape of the load
     * @return the figures and failures
     * @throws InterruptedException if the calling thread is interrupted
     */
    public static Tally run(Backend backend, Phase phase, long millis, SoakConfig config) throws InterruptedException {
        return run(backend.name(), (c, executor) -> backend.open(c.bucketBits(), c.maxEntries(), executor),
                phase, millis, config);
    }

    /**
     * Runs one phase of the soak on the caches a factory builds (a backend, or a deliberately broken
     * cache that shows the soak's checks can fail).
     *
     * @param name what the caches are, for thread names
     * @param factory builds each cache of the phase
     * @param phase what to run
     * @param millis how long to run the load, in milliseconds
     * @param config the shape of the load
     * @return the figures and failures
     * @throws InterruptedException if the calling thread is interrupted
     */
    public static Tally run(String name, CacheFactory factory, Phase phase, long millis, SoakConfig config)
            throws InterruptedException {
        return run(name, factory, phase, millis, config, CLOSE_WAIT_MILLIS);
    }

    /**
     * {@link #run(String, CacheFactory, Phase, long, SoakConfig)} with another bound on the close
     * phase's waits: a test shows with a short one that a cache whose {@code close()} leaves a waiter
     * asleep fails the wake-up check, without waiting {@link #CLOSE_WAIT_MILLIS} for it.
     */
    static Tally run(String name, CacheFactory factory, Phase phase, long millis, SoakConfig config,
            long closeWaitMillis) throws InterruptedException {
        Tally tally = new Tally();
        // Caffeine logs every exception its executor throws, with the stack: thousands of lines for
        // faults the soak injects on purpose and counts itself.
        Logger caffeineLog = Logger.getLogger("com.github.benmanes.caffeine.cache.BoundedLocalCache");
        Level logLevel = caffeineLog.getLevel();
        caffeineLog.setLevel(Level.OFF);
        try {
            switch (phase) {
                case STEADY -> steady(name, factory, FaultyExecutor.Mode.RELIABLE, millis, config, tally);
                case DROPPING_EXECUTOR -> steady(name, factory, FaultyExecutor.Mode.DROPPING, millis, config, tally);
                case THROWING_EXECUTOR -> steady(name, factory, FaultyExecutor.Mode.THROWING, millis, config, tally);
                case CLOSE_MID_LOAD -> closeMidLoad(name, factory, millis, config, closeWaitMillis, tally);
            }
        } finally {
            caffeineLog.setLevel(logLevel);
        }
        return tally;
    }

    private static void steady(String name, CacheFactory factory, FaultyExecutor.Mode mode, long millis,
            SoakConfig config, Tally tally) throws InterruptedException {
        FaultyExecutor executor = new FaultyExecutor("soak-executor-" + name + "-" + mode, mode, tally);
        DedupCache cache = factory.open(config, executor);
        Load load = new Load(name + "-" + mode, cache, tally, config, STEADY_WAIT_MILLIS, true);
        SplittableRandom random = new SplittableRandom(config.seed());
        load.start();
        long start = System.nanoTime();
        long end = start + TimeUnit.MILLISECONDS.toNanos(millis);
        long every = Math.max(1, (end - start) / CHECKPOINTS);
        int checkpoints = 0;
        for (long next = start + every; ; next += every) {
            sleepUntil(Math.min(next, end), load);
            boolean last = System.nanoTime() - end >= 0 || load.stop;
            load.pause = true;
            if (!await(load)) {
                break;
            }
            if (executor.hold(Load.STUCK_MILLIS)) {
                checkpoint(load, random, last);
                tally.set("checkpoints", ++checkpoints);
            } else {
                tally.failed("background-task-ends", "a background task ran for " + Load.STUCK_MILLIS + " ms");
                load.stop = true;
                last = true;
            }
            executor.resume();
            load.finished = last;
            load.pause = false;
            if (!await(load) || last) {
                break;
            }
        }
        joinAll(load);
        if (mode != FaultyExecutor.Mode.RELIABLE && !executor.offeredAgainAfterFault()) {
            driveToTheSynchronousThreshold(cache, executor, load.maxEntries, tally);
        }
        closeBounded(cache, tally);
        executor.shutdown();
        if (mode != FaultyExecutor.Mode.RELIABLE) {
            if (executor.offeredAgainAfterFault()) {
                tally.passed("reclaim-rescheduled-after-fault");
            } else {
                tally.failed("reclaim-rescheduled-after-fault", "once the executor "
                        + (mode == FaultyExecutor.Mode.DROPPING ? "dropped" : "threw on")
                        + " a task, the cache never offered it another: background reclaim is off for good");
            }
        }
    }

    /**
     * A cache offers a dropped background pass again only once it reaches its synchronous threshold
     * after the pass went stale (the contract, section 4). The load need not get
     * there after its last fault: a fault late in the phase, or a phase whose deletes and shrinks
     * kept the cache small, leaves nothing to observe, and the check would fail for want of a
     * chance. So, when the load ended without an offer since the first fault, this gives the cache
     * its chance: it waits out the stale period, then creates new pairs on this thread until the
     * cache offers a task or has had four times its bound of creates.
     */
    private static void driveToTheSynchronousThreshold(DedupCache cache, FaultyExecutor executor, long maxEntries,
            Tally tally) throws InterruptedException {
        tally.count("driven-to-the-synchronous-threshold");
        Thread.sleep(STALE_PASS_MILLIS);
        try {
            for (long i = 0; i < 4 * maxEntries + 64 && !executor.offeredAgainAfterFault(); i++) {
                cache.create(DRIVE_KEY_BASE + (int) i, i, true);
            }
        } catch (RuntimeException escaped) {
            // An injected executor fault that escaped a create is a failure the load's checks count;
            // the verdict below still says whether the cache offered the task again.
        }
    }

    /** Longer than the kernel port's stale period for a pending background pass (1 s). */
    private static final long STALE_PASS_MILLIS = 1_200;
    /** Keys of the pairs {@link #driveToTheSynchronousThreshold} creates, far from the load's keys. */
    private static final int DRIVE_KEY_BASE = 0x5EED_0000;

    /** The checks with the load paused and the executor held: see the class comment. */
    private static void checkpoint(Load load, SplittableRandom random, boolean last) {
        Tally tally = load.tally;
        for (Worker w : load.workers) {
            if (w.heldUncertain) {
                // An escaped executor fault (already a failure) left this worker's count unknown.
                tally.count("references-unknown-after-escaped-fault");
                w.held = 0;
                w.heldUncertain = false;
            } else if (w.held == 0) {
                tally.passed("references-released");
            } else {
                tally.failed("references-released", w.thread.getName() + " still holds " + w.held + " references");
            }
        }
        List<long[]> live = countLive(load);
        int deleted = 0;
        for (long[] pair : live) {
            if (!last && random.nextBoolean()) {
                continue;
            }
            int key = (int) pair[0];
            CacheEntry entry = load.cache.deleteOrGet(key, pair[1]);
            if (entry == null) {
                tally.passed("pair-deletable");
                deleted++;
            } else {
                tally.failed("pair-deletable", "deleteOrGet(" + key + ", " + pair[1]
                        + ") with the load paused handed back " + entry + ": a reference was never given back");
                load.cache.release(entry);
            }
            CacheEntry again = load.cache.get(key, pair[1]);
            if (again == null) {
                tally.passed("deleted-pair-gone");
            } else {
                tally.failed("deleted-pair-gone", "get found " + again + " after it was deleted");
                load.cache.release(again);
            }
        }
        tally.set("live-at-last-checkpoint", live.size());
        List<long[]> left = countLive(load);
        if (left.size() > live.size() - deleted) {
            tally.failed("size-equals-live", left.size() + " pairs live after deleting " + deleted + " of " + live.size());
        }
        if (last) {
            long size = load.cache.size();
            if (size == 0) {
                tally.passed("empty-after-deleting-all");
            } else {
                tally.failed("empty-after-deleting-all", "size() is " + size + " after every live pair was deleted");
            }
        }
    }

    /**
     * The live pairs, found by a {@code get} of every pair the soak can create, and a check that
     * {@code size()} counts exactly those. Nothing creates meanwhile, but the Caffeine backend may evict
     * inline during a lookup: the count is repeated until {@code size()} reads the same before and after.
     */
    private static List<long[]> countLive(Load load) {
        Tally tally = load.tally;
        List<long[]> live = new ArrayList<>();
        for (int attempt = 0; attempt < 20; attempt++) {
            live.clear();
            long before = load.cache.size();
            for (int k = 0; k < load.keys.length; k++) {
                for (int j = 0; j < load.valuesPerKey; j++) {
                    long value = load.value(k, j);
                    CacheEntry entry = load.cache.get(load.keys[k], value);
                    if (entry != null) {
                        if (entry.key() != load.keys[k] || entry.value() != value) {
                            tally.failed("lookup-answers-question", "get(" + load.keys[k] + ", " + value + ") answered " + entry);
                        }
                        live.add(new long[] {load.keys[k], value});
                        load.cache.release(entry);
                    }
                }
            }
            long after = load.cache.size();
            if (before == after) {
                if (after == live.size()) {
                    tally.passed("size-equals-live");
                } else {
                    tally.failed("size-equals-live", "size() is " + after + " with the load quiet, but "
                            + live.size() + " pairs are cached");
                }
                return live;
            }
            tally.max("size-count-retries", attempt + 1);
        }
        tally.failed("size-equals-live", "size() kept changing with the load quiet");
        return live;
    }

    private static void closeMidLoad(String name, CacheFactory factory, long millis, SoakConfig config,
            long waitMillis, Tally tally) throws InterruptedException {
        FaultyExecutor executor = new FaultyExecutor("soak-executor-" + name + "-close", FaultyExecutor.Mode.RELIABLE, tally);
        SplittableRandom random = new SplittableRandom(config.seed());
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        for (int round = 0; System.nanoTime() - end < 0; round++) {
            DedupCache cache = factory.open(config, executor);
            SoakConfig roundConfig = new SoakConfig(config.threads(), config.seed() + round, config.keys(),
                    config.valuesPerKey(), config.bucketBits(), config.maxEntries());
            Load load = new Load(name + "-close-" + round, cache, tally, roundConfig, waitMillis, false);
            load.start();
            Thread.sleep(5 + random.nextInt(100));
            load.closeStarted = true;
            tally.fault("close-mid-load");
            if (!closeBounded(cache, tally)) {
                load.stop = true;
                break;
            }
            load.closeDone = true;
            Thread.sleep(20);
            load.stop = true;
            if (!joinAll(load)) {
                break;
            }
            try {
                cache.size();
                tally.failed("call-after-close-throws", "size() answered on a closed cache");
            } catch (IllegalStateException expected) {
                tally.passed("call-after-close-throws");
            }
            try {
                cache.close();
                tally.passed("close-idempotent");
            } catch (Throwable t) {
                tally.failed("close-idempotent", "a second close() threw " + Traces.of(t));
            }
            tally.set("close-rounds", round + 1);
        }
        executor.shutdown();
    }

    /**
     * Closes the cache on a thread of its own and waits for it a bounded time, so that a close blocked
     * forever (by a pass that never ends, say) is a reported failure, not a hung run.
     *
     * @return whether {@code close()} returned in time without throwing
     */
    private static boolean closeBounded(DedupCache cache, Tally tally) throws InterruptedException {
        Throwable[] thrown = new Throwable[1];
        Thread closer = new Thread(() -> {
            try {
                cache.close();
            } catch (Throwable t) {
                thrown[0] = t;
            }
        }, "soak-close");
        closer.setDaemon(true);
        closer.start();
        closer.join(Load.STUCK_MILLIS);
        if (closer.isAlive()) {
            tally.failed("close-completes", "close() did not return within " + Load.STUCK_MILLIS + " ms:"
                    + Traces.of(closer));
            return false;
        }
        if (thrown[0] != null) {
            tally.failed("close-completes", "close() threw " + Traces.of(thrown[0]));
            return false;
        }
        tally.passed("close-completes");
        return true;
    }

    private static void sleepUntil(long deadline, Load load) throws InterruptedException {
        while (!load.stop) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            Thread.sleep(Math.min(10, TimeUnit.NANOSECONDS.toMillis(left) + 1));
        }
    }

    /** The coordinator's side of a checkpoint barrier; {@code false} (and a failure) if a worker is stuck. */
    private static boolean await(Load load) throws InterruptedException {
        try {
            load.barrier.await(Load.STUCK_MILLIS, TimeUnit.MILLISECONDS);
            load.tally.passed("no-thread-stuck");
            return true;
        } catch (BrokenBarrierException | TimeoutException e) {
            load.tally.failed("no-thread-stuck", "the load did not pause within " + Load.STUCK_MILLIS + " ms:" + stacks(load));
            load.stop = true;
            return false;
        }
    }

    /** Joins every worker with a time-out; {@code false} (and a failure) if one is stuck. */
    private static boolean joinAll(Load load) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Load.STUCK_MILLIS);
        for (Worker w : load.workers) {
            w.thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        }
        for (Worker w : load.workers) {
            if (w.thread.isAlive()) {
                load.tally.failed("no-thread-stuck", "a worker did not end within " + Load.STUCK_MILLIS + " ms:" + stacks(load));
                return false;
            }
        }
        load.tally.passed("no-thread-stuck");
        return true;
    }

    private static String stacks(Load load) {
        StringBuilder sb = new StringBuilder();
        for (Worker w : load.workers) {
            if (w.thread.isAlive()) {
                sb.append(Traces.of(w.thread));
            }
        }
        return sb.toString();
    }
}
