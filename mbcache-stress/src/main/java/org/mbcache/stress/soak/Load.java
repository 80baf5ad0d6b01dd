package org.mbcache.stress.soak;

import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.mbcache.DedupCache;

/**
 * What the soak's threads share: the cache, the key space, the tally, and the flags by which the
 * coordinator pauses, stops and closes the load.
 *
 * <p>The key space is small enough to collide constantly: {@link #keys} keys (all in a handful of
 * buckets) with {@link #valuesPerKey} values each, so that every operation meets the others on the same
 * chains and the same pairs, and the cache's bound is far below the number of pairs, so that reclaim
 * runs all the time. Every pair the soak can ever create is known in advance ({@link #value}), so a
 * quiet cache can be counted by looking each one up.
 *
 * <p>Flags are volatile: a worker polls them between operations; the barrier orders everything else.
 */
final class Load {

    /** How long the coordinator waits for the workers at a barrier, or for one to end, before it calls them stuck. */
    static final long STUCK_MILLIS = 20_000;

    final String name;
    final DedupCache cache;
    final Tally tally;
    final int[] keys;
    final int valuesPerKey;
    final long maxEntries;
    /**
     * The bound of one {@code waitUnused}: short under steady load; in the close phase long (close must
     * wake it) and shorter than {@link #STUCK_MILLIS}, so that a waiter close did not wake reports it.
     */
    final long waitMillis;
    /** The checkpoint barrier (workers and coordinator), or {@code null} in the close phase. */
    final CyclicBarrier barrier;
    /** Per pair (key number times {@link #valuesPerKey} plus value number): 1 while a worker runs its delete loop. */
    final AtomicIntegerArray deleting;
    final Worker[] workers;

    /** Asks the workers to stop at the barrier (steady phases). */
    volatile boolean pause;
    /** Set with {@link #pause} at the last checkpoint: the workers end after it. */
    volatile boolean finished;
    /** Ends the load early: a failure was seen (or, in the close phase, the round is over). */
    volatile boolean stop;
    /** {@code close()} has been called: from now on entries may vanish and calls may throw. */
    volatile boolean closeStarted;
    /** {@code close()} has returned: every call that starts now must throw {@link IllegalStateException}. */
    volatile boolean closeDone;

    Load(String name, DedupCache cache, Tally tally, SoakConfig config, long waitMillis, boolean checkpoints) {
        this.name = name;
        this.cache = cache;
        this.tally = tally;
        this.keys = new int[config.keys()];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = 0x9E37_79B9 * (i + 1);
        }
        this.valuesPerKey = config.valuesPerKey();
        this.maxEntries = config.maxEntries();
        this.deleting = new AtomicIntegerArray(keys.length * valuesPerKey);
        this.waitMillis = waitMillis;
        this.barrier = checkpoints ? new CyclicBarrier(config.threads() + 1) : null;
        this.workers = new Worker[config.threads()];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Worker(this, i, config.seed() * 31 + i);
        }
    }

    /** The value of the {@code j}-th pair of key number {@code k}: distinct for every pair, both halves nonzero. */
    long value(int k, int j) {
        return 0x5EED_0000_0000_0000L | ((long) k << 32) | (0x1000 + j);
    }

    void start() {
        for (Worker w : workers) {
            w.thread.start();
        }
    }
}
