package org.mbcache.stress.soak;

import java.util.SplittableRandom;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;

/**
 * One soak thread: random operations in ext4's pattern (the contract, section 7) on the shared cache,
 * each of which checks what it can see on the way, and a count of the references it holds.
 *
 * <p>The mix: {@code create} of a random pair (30%); ext4's walk, {@code findFirst} then compare, on a
 * match {@code touch} (sometimes {@code setReusable(false)}, a block at its sharer limit) and release,
 * else {@code findNext} (20%); {@code get} of a pair and a flag update (15%); the last sharer's
 * {@code deleteOrGet} / {@code waitUnused} / release / retry loop (13%); a plain hit, {@code findFirst}
 * and release (10%); {@code shrink} of a few entries, now and then of all (5%); {@code size()} and
 * {@code stats()} (2%); and an interrupt sent to a peer that is waiting in {@code waitUnused} (5%,
 * before a hit; none once a close has begun). While it holds an entry, a worker checks now and then that
 * {@code get} of the same pair answers the very same entry: an entry somebody holds must not have been
 * reclaimed, deleted or replaced by a twin. In the close phase a worker may also keep one entry it got
 * by {@code get} until the cache is closed, so that deleters of that pair wait in {@code waitUnused}
 * until {@code close()} wakes them, which {@link #waitUnused} checks.
 *
 * <p>Implementation notes: {@link #held} counts the references this thread was handed and has not given
 * back; only this thread writes it, and the coordinator reads it at a barrier, which orders the two. An
 * interrupt is sent only under this worker's monitor while {@link #waiting} is set, and the worker
 * clears that flag under the same monitor before it clears its interrupt status, so no interrupt of
 * the soak outlives the wait it was aimed at (a stray one would break the checkpoint barrier).
 */
final class Worker implements Runnable {

    /** How long a worker keeps retrying one delete before the soak calls it stuck. */
    private static final long DELETE_BOUND_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** The longest ext4 walk a worker makes before it settles for the entry it holds. */
    private static final int MAX_WALK = 64;

    private final Load load;
    private final int index;
    private final SplittableRandom random;
    final Thread thread;

    /** References this thread holds: handed out by the cache and not given back. */
    long held;

    /**
     * Set when an injected executor fault escaped from a cache call: that call may have taken or given
     * back a reference that {@link #held} does not show, so the next checkpoint cannot judge it.
     */
    boolean heldUncertain;

    /** Set while the thread is inside {@code waitUnused}; guarded by this worker's monitor. */
    private boolean waiting;

    /**
     * Whether this thread keeps an entry across the close (close phase only, each thread by a coin
     * flip, so that some rounds keep the load running to the close and others close on waiters).
     */
    private final boolean lingers;

    /**
     * The entry this thread looked up and keeps until the cache is closed, if it {@link #lingers}, so
     * that a deleter of its pair (this thread included) waits in {@code waitUnused} until
     * {@code close()} wakes it.
     */
    private CacheEntry lingering;

    Worker(Load load, int index, long seed) {
        this.load = load;
        this.index = index;
        this.random = new SplittableRandom(seed);
        this.lingers = load.barrier == null && random.nextBoolean();
        this.thread = new Thread(this, "soak-" + load.name + "-" + index);
        thread.setDaemon(true);
    }

    @Override
    public void run() {
        if (load.barrier == null) {
            while (!load.stop) {
                step();
            }
            releaseLingering();
            return;
        }
        while (true) {
            while (!load.pause) {
                step();
            }
            clearInterrupt();
            if (!arrive() || !arrive() || load.finished) {
                return;
            }
        }
    }

    /** Waits at the checkpoint barrier; {@code false} if the soak gave up on it (a stuck thread). */
    private boolean arrive() {
        try {
            load.barrier.await(2 * Load.STUCK_MILLIS, TimeUnit.MILLISECONDS);
            return true;
        } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
            return false;
        }
    }

    /** One random operation, with its exceptions judged against the contract. */
    void step() {
        boolean afterClose = load.closeDone;
        int dice = random.nextInt(100);
        String op = dice < 30 ? "create" : dice < 50 ? "walk" : dice < 65 ? "get" : dice < 78 ? "delete"
                : dice < 88 ? "hit" : dice < 93 ? "shrink" : dice < 95 ? "size" : "interrupt+hit";
        load.tally.operation(op);
        try {
            switch (op) {
                case "create" -> create();
                case "walk" -> walk();
                case "get" -> get();
                case "delete" -> delete();
                case "hit" -> hit();
                case "shrink" -> shrink();
                case "size" -> size();
                default -> {
                    interruptWaitingPeer();
                    hit();
                }
            }
            if (afterClose) {
                load.tally.failed("call-after-close-throws", op + " returned normally on a closed cache");
            }
        } catch (Throwable t) {
            judge(op, t, afterClose);
        }
    }

    private void judge(String op, Throwable t, boolean afterClose) {
        if (FaultyExecutor.isInjected(t)) {
            heldUncertain = true;
            load.tally.failed("executor-fault-contained",
                    "executor faults are contained: " + op + " let the executor's injected fault escape: " + Traces.of(t));
            return;
        }
        if (t instanceof IllegalStateException && load.closeStarted) {
            if (afterClose) {
                load.tally.passed("call-after-close-throws");
            } else {
                load.tally.count("ise-racing-close");
            }
            return;
        }
        load.tally.failed("no-unexpected-exception", op + " threw " + Traces.of(t));
        load.stop = true;
    }

    private DedupCache cache() {
        return load.cache;
    }

    private CacheEntry took(CacheEntry entry) {
        if (entry != null) {
            held++;
        }
        return entry;
    }

    private void give(CacheEntry entry) {
        if (random.nextBoolean()) {
            cache().release(entry);
        } else {
            entry.close();
        }
        held--;
    }

    private void create() {
        int k = random.nextInt(load.keys.length);
        if (cache().create(load.keys[k], load.value(k, random.nextInt(load.valuesPerKey)), random.nextInt(5) > 0)) {
            load.tally.operation("create-inserted");
        }
        long size = cache().size();
        load.tally.max("max-size", size);
        // The contract, section 4: seen from one thread, size() never exceeds twice the bound plus the
        // creates in flight on the other threads.
        long bound = 2 * load.maxEntries + load.workers.length - 1;
        if (size <= bound) {
            load.tally.passed("size-within-twice-the-bound");
        } else {
            load.tally.failed("size-within-twice-the-bound", "size() is " + size + " after a create, above "
                    + bound + " (2 * maxEntries + creates in flight on the other threads)");
        }
    }

    /** ext4's search for a block to share: findFirst, compare, findNext..., touch and release the match. */
    private void walk() {
        int key = load.keys[random.nextInt(load.keys.length)];
        CacheEntry entry = took(cache().findFirst(key));
        for (int steps = 0; entry != null; steps++) {
            checkAnswers(entry, key, entry.value());
            if (random.nextInt(4) == 0) {
                checkStillCached(entry);
            }
            if (random.nextInt(3) == 0 || steps >= MAX_WALK) {
                cache().touch(entry);
                if (random.nextInt(10) == 0) {
                    entry.setReusable(false);
                }
                give(entry);
                return;
            }
            held--; // findNext gives the reference back in all cases (the contract, section 3)
            entry = took(cache().findNext(entry));
        }
    }

    private void get() {
        int k = random.nextInt(load.keys.length);
        long value = load.value(k, random.nextInt(load.valuesPerKey));
        CacheEntry entry = took(cache().get(load.keys[k], value));
        if (entry == null) {
            return;
        }
        checkAnswers(entry, load.keys[k], value);
        if (random.nextInt(3) == 0) {
            checkStillCached(entry);
        }
        switch (random.nextInt(4)) {
            case 0 -> cache().touch(entry);
            case 1 -> entry.setReusable(true);
            case 2 -> entry.setReusable(false);
            default -> { }
        }
        if (lingers && lingering == null && random.nextInt(16) == 0) {
            lingering = entry; // held until the close: see the field
            return;
        }
        give(entry);
    }

    /**
     * The last sharer leaves: deleteOrGet, and while somebody uses the pair, waitUnused, release, retry.
     * As in ext4, where the block's buffer lock serialises its last sharers, one thread at a time runs
     * this loop for a pair: two deleters of one pair would each hold it while waiting for the other.
     * A worker that finds the pair's loop taken looks the pair up instead.
     */
    private void delete() {
        int k = random.nextInt(load.keys.length);
        int j = random.nextInt(load.valuesPerKey);
        int pair = k * load.valuesPerKey + j;
        if (!load.deleting.compareAndSet(pair, 0, 1)) {
            load.tally.operation("delete-skipped-pair-busy");
            CacheEntry entry = took(cache().get(load.keys[k], load.value(k, j)));
            if (entry != null) {
                give(entry);
            }
            return;
        }
        try {
            deleteLoop(load.keys[k], load.value(k, j));
        } finally {
            load.deleting.set(pair, 0);
        }
    }

    private void deleteLoop(int key, long value) {
        long deadline = System.nanoTime() + DELETE_BOUND_NANOS;
        CacheEntry entry = took(cache().deleteOrGet(key, value));
        while (entry != null) {
            load.tally.operation("delete-retry");
            checkAnswers(entry, key, value);
            if (System.nanoTime() - deadline > 0) {
                load.tally.failed("delete-loop-ends", "deleteOrGet(" + key + ", " + value
                        + ") still hands the entry back after 10 s: a reference was leaked");
                give(entry);
                load.stop = true;
                return;
            }
            waitUnused(entry);
            give(entry);
            entry = took(cache().deleteOrGet(key, value));
        }
    }

    /**
     * waitUnused, bounded, open to the peers' interrupts; an interrupt counts as an injected fault seen.
     * However it ends (the entry unused, the time-out, an interrupt), the delete loop retries.
     *
     * <p>In the close phase, a wait that began on an open cache checks that {@code close()} ends it: it
     * must throw {@link IllegalStateException} before its time-out ({@link Load#waitMillis}, which
     * only {@code close()} can cut short for a pair held across the close, since no interrupt is sent
     * once the close has begun). A wait that runs out its time while the cache is closed meanwhile,
     * and then returns {@code false} or throws, was not woken by {@code close()}.
     */
    private void waitUnused(CacheEntry entry) {
        synchronized (this) {
            waiting = true;
        }
        boolean closeMustWake = load.barrier == null && !load.closeStarted;
        long start = System.nanoTime();
        try {
            if (!cache().waitUnused(entry, load.waitMillis, TimeUnit.MILLISECONDS) && closeMustWake && load.closeStarted) {
                closeDidNotWake("returned false");
            }
        } catch (InterruptedException interrupted) {
            load.tally.fault("interrupted-in-wait");
        } catch (IllegalStateException closed) {
            if (closeMustWake) {
                if (System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(load.waitMillis)) {
                    load.tally.passed("close-wakes-waiters");
                } else {
                    closeDidNotWake("threw only then");
                }
            }
            throw closed;
        } finally {
            clearInterrupt();
        }
    }

    private void closeDidNotWake(String how) {
        load.tally.failed("close-wakes-waiters", "waitUnused ran out its " + load.waitMillis
                + " ms on a cache closed meanwhile and " + how + ": close() did not wake it");
    }

    /** Close phase: gives back the lingering entry once the load stops; the cache is closed by then. */
    private void releaseLingering() {
        if (lingering == null) {
            return;
        }
        CacheEntry entry = lingering;
        lingering = null;
        held--;
        try {
            cache().release(entry);
            if (load.closeDone) {
                load.tally.failed("call-after-close-throws", "release returned normally on a closed cache");
            }
        } catch (IllegalStateException closed) {
            if (load.closeDone) {
                load.tally.passed("call-after-close-throws");
            }
        }
    }

    private void clearInterrupt() {
        synchronized (this) {
            waiting = false;
        }
        if (Thread.interrupted()) {
            load.tally.fault("interrupt-after-wait");
        }
    }

    /** Interrupts a peer waiting in {@code waitUnused}; none once the close has begun (only close ends a wait then). */
    private void interruptWaitingPeer() {
        Worker peer = load.workers[random.nextInt(load.workers.length)];
        if (peer == this || load.closeStarted) {
            return;
        }
        synchronized (peer) {
            if (peer.waiting) {
                peer.thread.interrupt();
                load.tally.fault("interrupt-sent");
            }
        }
    }

    private void hit() {
        CacheEntry entry = took(cache().findFirst(load.keys[random.nextInt(load.keys.length)]));
        if (entry != null) {
            give(entry);
        }
    }

    private void shrink() {
        long freed = random.nextInt(50) == 0 ? cache().shrink(Long.MAX_VALUE) : cache().shrink(1 + random.nextInt(16));
        if (freed < 0) {
            load.tally.failed("shrink-count", "shrink returned " + freed);
        }
    }

    private void size() {
        long size = cache().size();
        if (size < 0) {
            load.tally.failed("size-never-negative", "size() returned " + size);
        }
        cache().stats();
    }

    /** A handed-out entry answers the question asked: the key looked up, and for a pair, the value. */
    private void checkAnswers(CacheEntry entry, int key, long value) {
        if (entry.key() == key && entry.value() == value) {
            load.tally.passed("lookup-answers-question");
        } else {
            load.tally.failed("lookup-answers-question", "asked for (" + key + ", " + value + "), got " + entry);
        }
    }

    /**
     * While this thread holds {@code entry}, {@code get} of its pair must answer an entry equal to it: a
     * held entry is never reclaimed or deleted (so never replaced by a new twin, which is not equal). Once {@code close()} has
     * begun, every entry may go.
     */
    private void checkStillCached(CacheEntry entry) {
        CacheEntry again = took(cache().get(entry.key(), entry.value()));
        boolean same = entry.equals(again);
        if (again != null) {
            give(again);
        }
        if (same) {
            load.tally.passed("held-entry-still-cached");
        } else if (!load.closeStarted) {
            load.tally.failed("held-entry-still-cached", "thread " + index + " holds " + entry + " but get answered " + again);
        }
    }
}
