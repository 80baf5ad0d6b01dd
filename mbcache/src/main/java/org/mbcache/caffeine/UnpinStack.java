package org.mbcache.caffeine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The lazy-unpin stack of {@link CaffeineDedupCache}: entries whose last caller reference was
 * released but which are still pinned (their key group weighs 0 in Caffeine), waiting to be
 * unpinned in batches.
 */
final class UnpinStack {

    /*
     * Implementation notes.
     *
     * An intrusive Treiber stack: an entry is linked through its own nextToUnpin field, so a push
     * allocates nothing. Releases push onto the head (a CAS); a drain is the only consumer, runs
     * with drainLock held (one at a time), and is the only writer of the links below the head, so
     * unlinking there needs no CAS. A full drain takes the whole stack by one exchange of the head.
     *
     * Memory order: a push writes the entry's link with a plain store and publishes it by the
     * volatile CAS of the head (release semantics); a drain reads the head with a volatile load
     * (acquire), so the links it walks are the ones written before the pushes it sees. Links below
     * the head are then written and read by the drain thread only (drainLock orders successive
     * drains), hence plain accesses.
     *
     * Scheduling: normally one drain at a time is pending with the executor (drainScheduled). The
     * executor is the cache's FallbackExecutor, which decides what an executor that throws gets
     * (the drain runs on the pushing thread, which clears the flag as any drain does). What it
     * cannot see is an executor that accepts a task and never runs it; that recovery is this
     * class's: a pusher that finds the backlog at four batches while a drain is pending and not
     * running drains itself and clears the pending flag, so the next drain is handed to the
     * executor again (a late run of the lost task then finds little to do, and its finally may
     * clear the flag of the newer pending drain, so two can be queued at once: harmless, since
     * drains run one after another under drainLock). The same takeover covers a hand-over that
     * throws before the drain ran (a stopped executor, an OutOfMemoryError). Every path that sets
     * the flag has one that clears it.
     */

    private static final VarHandle HEAD;

    static {
        try {
            HEAD = MethodHandles.lookup().findVarHandle(UnpinStack.class, "head", PinnedEntry.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The newest queued entry; accessed through {@link #lvHead}, {@link #casHead}, {@link #xchgHead}. */
    @SuppressWarnings("unused") // through HEAD
    private volatile PinnedEntry head;

    /** Entries pushed and not yet unlinked by a drain (live or dead). */
    private final AtomicLong backlog = new AtomicLong();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    /** Held by every drain: one at a time, and a synchronous drain waits for a running one. */
    private final ReentrantLock drainLock = new ReentrantLock();

    private final long maxEntries;
    /** Backlog at which a drain is handed to the executor. */
    private final long batch;
    private final LongSupplier size;
    /** Runs drains in the background, or on the pushing thread if the executor throws. */
    private final FallbackExecutor executor;
    /** Unpins an entry just taken off the stack, if only the cache holds it. */
    private final Consumer<PinnedEntry> unpin;

    /** The drain handed to the executor: one preallocated task. */
    private final Runnable scheduledDrain = this::runScheduledDrain;

    /**
     * @param maxEntries the cache's size bound: above it, unheld pinned entries should become evictable
     * @param batch the backlog at which a drain is due, at least 1
     * @param size the cache's current entry count
     * @param executor where drains run in the background (the cache's, shared with Caffeine)
     * @param unpin unpins an entry just unlinked from the stack (off the stack for good), if only the
     *     cache holds it; must not push onto this stack
     */
    UnpinStack(long maxEntries, long batch, LongSupplier size, FallbackExecutor executor, Consumer<PinnedEntry> unpin) {
        this.maxEntries = maxEntries;
        this.batch = Math.max(1, batch);
        this.size = size;
        this.executor = executor;
        this.unpin = unpin;
    }

    private PinnedEntry lvHead() {
        return (PinnedEntry) HEAD.getVolatile(this);
    }

    private boolean casHead(PinnedEntry expected, PinnedEntry update) {
        return HEAD.compareAndSet(this, expected, update);
    }

    private PinnedEntry xchgHead(PinnedEntry update) {
        return (PinnedEntry) HEAD.getAndSet(this, update);
    }

    /** Entries waiting on the stack (live or dead). */
    long backlog() {
        return backlog.get();
    }

    /**
     * Queues an entry whose UNPIN_QUEUED flag the caller has just set, and starts a drain if one is
     * due: once the backlog reaches a batch and either the cache is over its bound or the stack
     * holds more than twice as many entries as the cache (dead ones must not pile up). Below the
     * bound pinned entries cost nothing (Caffeine would not evict anyway). At four batches with a
     * drain pending but not running (an executor that fell behind or dropped the task), this thread
     * drains.
     */
    void push(PinnedEntry entry) {
        long queued = relink(entry);
        if (queued < batch) {
            return;
        }
        long entries = size.getAsLong();
        if (entries <= maxEntries && queued <= 2 * entries) {
            return; // no eviction is due, and few dead entries are queued
        }
        if (!schedule() && queued >= 4 * batch && drainLock.tryLock()) {
            try { // a drain is pending and not running: the executor is behind, or dropped it
                drain(keep());
            } finally {
                drainLock.unlock();
                drainScheduled.set(false); // the next drain goes to the executor again
            }
        }
    }

    /** Starts a drain if the backlog has reached a batch (a create found the cache over its bound). */
    void scheduleIfBacklogged() {
        if (backlog.get() >= batch) {
            schedule();
        }
    }

    /**
     * Drains the whole stack on this thread, after any drain in progress: on return every entry
     * that was queued before the call and that only the cache holds is unpinned.
     */
    void drainAllNow() {
        drainLock.lock();
        try {
            drain(0);
        } finally {
            drainLock.unlock();
        }
    }

    /** Forgets every queued entry (the cache is closed: nothing will be unpinned any more). */
    void clear() {
        xchgHead(null);
    }

    /**
     * Hands one drain to the executor unless one is pending. If the executor throws, the
     * {@link FallbackExecutor} runs the drain here, and what the drain throws (an unpin's
     * {@code OutOfMemoryError}, after the walk) reaches the pusher, with the flag cleared.
     *
     * @return whether this call started one; {@code false} if one was pending already
     */
    private boolean schedule() {
        if (!drainScheduled.compareAndSet(false, true)) {
            return false;
        }
        executor.execute(scheduledDrain);
        return true;
    }

    private void runScheduledDrain() {
        drainLock.lock();
        try {
            drain(keep());
        } finally {
            drainLock.unlock();
            drainScheduled.set(false);
        }
    }

    /**
     * How many of the newest live entries a background drain leaves queued and pinned: above the
     * bound half a batch (the hot ones, which the next lookups would pin again at once); at or
     * below it all of them (none needs to become evictable: the drain only unlinks dead ones).
     */
    private long keep() {
        return size.getAsLong() > maxEntries ? batch / 2 : Long.MAX_VALUE;
    }

    /**
     * Walks the stack newest first, with {@link #drainLock} held. Dead entries are unlinked; of the
     * live ones the newest {@code keep} stay, and every other one is unlinked and handed to
     * {@link #unpin}. The UNPIN_QUEUED flag is cleared before an unlinked entry is looked at, so a
     * release after this look queues it again. An entry whose unpin throws (an
     * {@code OutOfMemoryError} in Caffeine's compute) is queued again, the walk goes on, and the
     * first such Throwable is rethrown at the end: no entry is left pinned and off the stack.
     *
     * @param keep how many live entries to leave queued; 0 takes the whole stack
     */
    private void drain(long keep) {
        long unlinked = 0;
        Throwable failure = null;
        if (keep == 0) {
            PinnedEntry entry = xchgHead(null);
            while (entry != null) {
                PinnedEntry next = entry.lpNextToUnpin();
                failure = unlinked(entry, failure);
                unlinked++;
                entry = next;
            }
        } else {
            PinnedEntry kept = lvHead(); // the head stays: only a CAS could take it off
            PinnedEntry entry = kept == null ? null : kept.lpNextToUnpin();
            long live = 1;
            while (entry != null) {
                PinnedEntry next = entry.lpNextToUnpin();
                if (live < keep && entry.count() != 0) {
                    live++;
                    kept = entry;
                } else {
                    kept.spNextToUnpin(next);
                    failure = unlinked(entry, failure);
                    unlinked++;
                }
                entry = next;
            }
        }
        if (unlinked > 0) {
            backlog.addAndGet(-unlinked);
        }
        if (failure != null) {
            throwUnchecked(failure);
        }
    }

    /** An entry just unlinked: off the stack for good, unless its unpin throws (then queued again). */
    private Throwable unlinked(PinnedEntry entry, Throwable earlier) {
        entry.spNextToUnpin(null);
        entry.clearUnpinQueued();
        try {
            unpin.accept(entry);
            return earlier;
        } catch (Throwable failed) {
            if (entry.markUnpinQueued()) { // else a release queued it again meanwhile
                relink(entry);
            }
            if (earlier != null) {
                return earlier;
            }
            return failed;
        }
    }

    /**
     * Links the entry on top (its link is published by the CAS of the head): a push without the
     * drain decision, which a drain uses to queue again. Allocates nothing.
     *
     * @return the backlog after the push
     */
    private long relink(PinnedEntry entry) {
        PinnedEntry h;
        do {
            h = lvHead();
            entry.spNextToUnpin(h);
        } while (!casHead(h, entry));
        return backlog.incrementAndGet();
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> void throwUnchecked(Throwable failure) throws T {
        throw (T) failure;
    }
}
