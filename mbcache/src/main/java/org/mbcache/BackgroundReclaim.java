package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.mbcache.internal.Saturating;

/**
 * The reclaim triggers of a create and the background reclaim they start (kernel
 * {@code mb_cache_entry_create}'s first lines, {@code c_shrink_work} and
 * {@code mb_cache_shrink_worker}). A cache builds one from its executor, its entry count and bound,
 * its reclaim pass ({@link Reclaimer}) and a check of whether it was closed ({@link BooleanSupplier});
 * nothing else of the cache is reached from here, so one implementation serves every layout that
 * has those (both layouts of the kernel port use it), and it can be driven alone
 * ({@code BackgroundReclaimProtocolTest}). The batches are this class's own
 * ({@link #SHRINK_DIVISOR}, {@link #SYNC_SHRINK_BATCH}).
 *
 * <p><b>Data.</b> The cache's entry count (read, never written here), its {@code maxEntries} and
 * {@code 2 * maxEntries}; {@link #pendingPass}, the task handed to the executor and not yet ended,
 * or null (kernel: {@code c_shrink_work} queued); {@link #continuingOn}, the thread inside
 * {@code execute} handing a continuation over, or null; and one {@link Pass} object per hand-over to
 * the executor, carrying when it was handed over and whether a run of it started. A create below
 * the bound allocates nothing here and calls neither hook of the layout: it loads this object from
 * its cache, the entry count's estimate, and (near the bound) {@code pendingPass}. Each hand-over
 * allocates its one {@code Pass}.
 *
 * <p><b>Why passes go on.</b> The kernel's worker frees one batch and waits for a later create to
 * queue it again, so a writer whose bursts add more than a batch takes the cache to twice the bound,
 * and pays synchronous passes there, while the worker sits idle. Here one pass per executor task
 * goes on until the count is below {@code maxEntries}. The protocol:
 * <ol>
 *   <li>Each hand-over to the executor is a task object of its own ({@link Pass}), and
 *       {@link #pendingPass} names the one pending or running, or is null. A create sets it by
 *       CAS from null (or from a stale pass, below) to a task it allocated before the CAS, and
 *       only then hands that task over. An allocation that throws therefore leaves the field as it
 *       was, never naming a task nobody was given.</li>
 *   <li>A task does its pass only if, when it starts, it is the pending one, and only on its first
 *       run: a task no longer pending (replaced, or its work ended) and any second run of a task
 *       (an executor that runs it twice, or runs it and then throws, so that the creating thread
 *       runs it too; a CAS on {@code started} picks one run) do nothing at all, and scan nothing.
 *       So the tasks that do passes form one chain, and an executor that stalls a task and runs
 *       it late, or runs tasks twice, adds no pass to it.</li>
 *   <li>A pass scans one batch ({@code maxEntries / }{@link #SHRINK_DIVISOR}), so no pass holds
 *       the reclaim lock longer than the kernel's does. Then, if it freed something, the cache is
 *       open and the count is still at or above {@code maxEntries} (where a create would ask for
 *       another pass), it continues: it replaces itself in {@code pendingPass} with a new task by
 *       CAS and hands that to the executor, behind whatever else is queued there, never looping in
 *       this task. The field does not go through null on the way, so no create schedules a second
 *       pass meanwhile, and the staleness clock restarts at each hand-over. The target is the bound
 *       itself, where creates schedule the work, with no low watermark below it: the last pass
 *       already leaves up to a batch of room, and each pass further down would evict entries a
 *       dedup cache is kept for, for the sake of passes that the next burst asks for anyway.</li>
 *   <li>Otherwise it ends the work: it clears the field by CAS from itself. A create that found
 *       the pass pending scheduled nothing; if its entry came in after the pass read the count, the
 *       count may be back at the bound with no pass pending, so a pass that cleared the field reads
 *       the count again and, at the bound, hands a pass over as a create would (by CAS from null).
 *       What can still slip through is one create per creating thread (its check before the clear,
 *       its entry after the second read): the work ends at most that far above the bound, and the
 *       next create schedules it again.</li>
 *   <li>Every step is a CAS from the task itself. A pass replaced meanwhile (a create at twice the
 *       bound handed a new task over because this one was over {@code stalePassNanos} old)
 *       leaves the field, and the going on, to the newer task. Only that replacement, made at
 *       twice the bound, can overlap two passes (one that started just before it, and the new one),
 *       and a batch each from there cannot take the count below the bound.</li>
 *   <li>A pass stops when it frees nothing (every entry it reached was held or referenced): passes
 *       that kept finding nothing to free would keep the executor busy for good. A later create at
 *       the bound schedules again.</li>
 *   <li>Faults. An executor whose {@code execute} throws (rejected, shut down, broken) gets the
 *       creating thread to run the pass, as Caffeine does with its maintenance: background reclaim
 *       is never switched off by a failure. That pass is a background pass like any other, counted
 *       as one. If the executor ran or queued the task before it threw, step 2 lets one of the two
 *       runs do the pass. A Throwable in the pass clears the field (finally). A continuation the
 *       executor throws on is not run here, where the thread is the executor's, or a create's that
 *       ran a pass already because the executor threw: the field is cleared, and the next create at
 *       the bound schedules again (running one pass itself if the executor still throws). So a
 *       create runs one pass, neither looping nor recursing, however far above the bound the count
 *       is. A task the executor drops leaves the field set: a create at twice the bound hands a new
 *       task over once the pending one is {@link #STALE_PASS_NANOS} old (the constructor's
 *       {@code stalePassNanos}). An executor that runs the task inside {@code execute} (a
 *       caller-runs policy) would stack one pass per continuation on one thread: a pass that finds
 *       itself inside its own thread's hand-over ({@link #continuingOn}) does not go on, so such a
 *       thread runs two passes at most.</li>
 * </ol>
 *
 * <p><b>Memory order.</b> {@code pendingPass} is volatile and changed only by CAS, so the tasks
 * agree on one sequence of values. Its loads are volatile too: the only frequent one is a create's
 * null check near the bound, a plain load on x86 and one {@code ldar} on AArch64, so a weaker mode
 * would buy nothing measurable and cost each load an argument of its own. The CAS that installs a
 * task is a volatile write that happens before {@code execute}, so the task, wherever it runs, finds
 * itself pending unless something replaced it since. A task's fields are final, or written only by
 * CAS; the CAS on {@code started} matters for its atomicity alone (one winner among the runs of one
 * task). {@code continuingOn} needs no ordering with other threads: the read that finds this
 * thread's mark is this thread's own, inside its own {@code execute}, and program order makes it see
 * the mark; any other thread finds a value that is not itself. It is cleared by CAS, so that a
 * thread never clears another's mark (a pool thread may run the next pass and hand its own
 * continuation over before this {@code execute} returns). It is volatile, which the CAS's field
 * needs anyway; opaque would be enough, and would save one fence per hand-over, which is not worth a
 * second access mode. The failure-logged flag is plain: a race logs at worst two warnings.
 */
final class BackgroundReclaim {
    /**
     * The background pass scans {@code maxEntries / SHRINK_DIVISOR} entries (at least 1): kernel
     * {@code SHRINK_DIVISOR} in {@code fs/mbcache.c}.
     */
    static final int SHRINK_DIVISOR = 16;
    /** Entries a create's synchronous reclaim pass scans at twice the bound: kernel {@code SYNC_SHRINK_BATCH}. */
    static final int SYNC_SHRINK_BATCH = 64;
    /** A pending background pass older than this when the synchronous threshold is hit is handed over again. */
    static final long STALE_PASS_NANOS = TimeUnit.SECONDS.toNanos(1);

    private static final VarHandle PENDING_PASS;
    private static final VarHandle CONTINUING_ON;
    private static final VarHandle STARTED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            PENDING_PASS = lookup.findVarHandle(BackgroundReclaim.class, "pendingPass", Pass.class);
            CONTINUING_ON = lookup.findVarHandle(BackgroundReclaim.class, "continuingOn", Thread.class);
            STARTED = lookup.findVarHandle(Pass.class, "started", boolean.class);
            // The task's class, initialized with this one rather than at the first hand-over: a
            // Throwable in a class's initialization (an OutOfMemoryError on a full heap) makes the
            // class unusable for the life of the JVM, so it is better thrown where this class is
            // initialized (by a cache class, before any cache exists) than inside a create.
            lookup.ensureInitialized(Pass.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Executor executor;
    /** The cache's entry count (kernel {@code c_entry_count}): read here, written by the cache. */
    private final EntryCount entryCount;
    /** Where creates start background reclaim (kernel {@code c_max_entries}). */
    private final long maxEntries;
    /** {@code 2 * maxEntries}, saturated: where creates start reclaiming synchronously. */
    private final long synchronousThreshold;
    /** The entries a background pass scans: {@code maxEntries / SHRINK_DIVISOR}, at least 1. */
    private final long batch;
    /**
     * The name of the cache's logger, so that its executor's failures are logged under its class's
     * name. A name, not the logger: the logger's object graph (a logging framework's patterns and
     * handlers) would then be reachable from every cache, which tools that walk a cache's state
     * (Lincheck's model checker) cannot, and need not, enter. Looked up on the failure path only.
     */
    private final String loggerName;
    /** The cache's reclaim pass. */
    private final Reclaimer reclaimer;
    /** Whether the cache was closed. */
    private final BooleanSupplier closed;
    /** How old a pending pass is when a create at twice the bound hands a new one over in its place. */
    private final long stalePassNanos;

    /** The task handed to the executor and not yet ended, or null; see the class comment. */
    private volatile Pass pendingPass;
    /** The thread inside {@code execute} handing a continuation over, or null; see the class comment. */
    private volatile Thread continuingOn;
    /** Whether an executor failure was logged as a warning already (racy: at worst two warnings). */
    private boolean executorFailureLogged;

    /**
     * The triggers and background reclaim of one cache; nothing pending.
     *
     * @param executor where background passes run
     * @param entryCount the cache's entry count
     * @param maxEntries the cache's bound, positive
     * @param loggerName the name of the logger an executor's failure is logged to
     * @param reclaimer the cache's reclaim pass
     * @param closed whether the cache was closed
     */
    BackgroundReclaim(Executor executor, EntryCount entryCount, long maxEntries, String loggerName,
                      Reclaimer reclaimer, BooleanSupplier closed) {
        this(executor, entryCount, maxEntries, loggerName, reclaimer, closed, STALE_PASS_NANOS);
    }

    /**
     * As {@link #BackgroundReclaim(Executor, EntryCount, long, String, Reclaimer, BooleanSupplier)},
     * with the age at which a pending pass counts as stale (step 5 of the class comment) named, so
     * that tests can make every pending pass stale ({@code -1}) or none ({@link Long#MAX_VALUE})
     * without waiting on the clock.
     *
     * @param stalePassNanos a pending pass handed over more than this long ago is stale
     */
    BackgroundReclaim(Executor executor, EntryCount entryCount, long maxEntries, String loggerName,
                      Reclaimer reclaimer, BooleanSupplier closed, long stalePassNanos) {
        this.executor = executor;
        this.entryCount = entryCount;
        this.maxEntries = maxEntries;
        this.synchronousThreshold = Saturating.twice(maxEntries);
        this.batch = Math.max(1, maxEntries / SHRINK_DIVISOR);
        this.loggerName = loggerName;
        this.reclaimer = reclaimer;
        this.closed = closed;
        this.stalePassNanos = stalePassNanos;
    }

    /** A layout's reclaim pass (its {@code reclaim} method). */
    @FunctionalInterface
    interface Reclaimer {
        /**
         * One reclaim pass of the cache over up to {@code nrToScan} entries (kernel
         * {@code mb_cache_shrink}), counted in the cache's statistics and flight-recorder events as
         * a pass of {@code kind}.
         *
         * <p>A pass given a {@code floor} reads the exact entry count once it holds the reclaim lock,
         * and if the count is below the floor it does nothing (scans nothing, and is neither counted
         * nor recorded) and returns 0: the create's synchronous pass, decided on a count that passes
         * running meanwhile may have taken down, then has nothing left to do.
         *
         * @param nrToScan the most entries the pass looks at
         * @param kind why the pass runs
         * @param floor the count below which the pass does nothing; {@link #NO_FLOOR} for always
         * @return the number of entries freed
         */
        long reclaim(long nrToScan, ReclaimPassEvent.Kind kind, long floor);

        /** A pass's {@code floor} that lets it run whatever the count. */
        long NO_FLOOR = Long.MIN_VALUE;
    }

    // ------------------------------------------------------------------------------------------
    // The create's triggers
    // ------------------------------------------------------------------------------------------

    /**
     * The reclaim triggers at the top of kernel {@code mb_cache_entry_create}, decided without
     * reading every stripe of the entry count where that cannot matter:
     * <ul>
     *   <li>near twice the bound (where the estimate's slack leaves the synchronous threshold
     *       open), on a snapshot: the promise that {@code size()} stays within twice the bound
     *       needs the exact count;</li>
     *   <li>elsewhere, where the estimate settles the bound too, on the estimate;</li>
     *   <li>near the bound, with a background pass already pending, not at all: scheduling one
     *       more is a no-op;</li>
     *   <li>near the bound otherwise, on the estimate corrected by this thread's own cells: exact
     *       when one thread creates and deletes (whichever thread runs the passes, which count
     *       their frees exactly), early or late by less than {@code batch} per other writing
     *       thread ({@code maxEntries / 16} at most in all) when several do.</li>
     * </ul>
     * At the bound it schedules a background pass; at twice the bound it also hands a stale pending
     * pass over again and runs a synchronous pass of {@link #SYNC_SHRINK_BATCH} here, which
     * does nothing if, once it holds the reclaim lock, the exact count is below twice the bound. A
     * create below the bound reads the one shared estimate word, written once per batch of adds,
     * and allocates nothing.
     *
     * @return the count it decided on (near the bound with a pass pending: the estimate), which
     *     {@code CompactMbCache}'s create reads to decide whether it may reclaim in its line
     */
    final long beforeCreate() {
        long estimate = entryCount.estimate();
        long count;
        if (!entryCount.decides(estimate, synchronousThreshold)) {
            count = entryCount.snapshot();
        } else if (entryCount.decides(estimate, maxEntries)) {
            count = estimate;
        } else if (lvPendingPass() != null) {
            return estimate;
        } else {
            count = entryCount.estimateSeenByThisThread(estimate);
        }
        if (count < maxEntries) {
            return count;
        }
        schedule();
        if (count >= synchronousThreshold) {
            resubmitStale();
            // Still at twice the bound once the pass holds the lock, or nothing: between this
            // count and the lock, background passes (or another creator's synchronous pass) may
            // have taken the count down, and a pass of 64 on top would then empty a small cache.
            reclaimer.reclaim(SYNC_SHRINK_BATCH, ReclaimPassEvent.Kind.SYNCHRONOUS, synchronousThreshold);
        }
        return count;
    }

    /** {@return whether a background pass is pending or running} */
    final boolean pending() {
        return lvPendingPass() != null;
    }

    // ------------------------------------------------------------------------------------------
    // Hand-overs
    // ------------------------------------------------------------------------------------------

    /**
     * Schedules one background pass unless one is pending (kernel: {@code queue_work(c_shrink_work)}).
     * The task is allocated before the CAS: if that throws, nothing is pending and the next create
     * at the bound tries again.
     */
    private void schedule() {
        if (lvPendingPass() == null) {
            Pass pass = new Pass();
            if (casPendingPass(null, pass)) {
                submit(pass);
            }
        }
    }

    /**
     * The synchronous threshold was reached: if the pending pass was handed over long ago, the
     * executor dropped it (or is hopelessly behind); hand it a new one in its place. The one it
     * replaces does nothing if it runs late.
     */
    private void resubmitStale() {
        Pass pending = lvPendingPass();
        if (pending != null && System.nanoTime() - pending.handedOverAt > stalePassNanos) {
            Pass pass = new Pass();
            if (casPendingPass(pending, pass)) {
                submit(pass);
            }
        }
    }

    /**
     * Hands a create's pass to the executor; if {@code execute} throws anything, the pass runs here,
     * on the creating thread (step 7 of the class comment). It runs before the failure is logged, so
     * a log call that itself fails (out of memory) cannot leave the pass pending. The first failure
     * is a warning with its stack; repeats (a broken executor fails every time) are logged at DEBUG
     * so that they do not flood the log.
     */
    private void submit(Pass pass) {
        try {
            executor.execute(pass);
        } catch (Throwable failure) {
            pass.run();
            System.Logger.Level level = executorFailureLogged ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING;
            executorFailureLogged = true;
            System.getLogger(loggerName).log(level, "mbcache: the reclaim executor failed; ran the pass on the calling thread",
                    failure);
        }
    }

    /**
     * One hand-over of the background pass to the executor: each hand-over allocates its own, and
     * {@link #pendingPass} holds the one that may run. Identity is the token, so no later hand-over
     * can be mistaken for this one while the executor still holds it.
     */
    private final class Pass implements Runnable {
        /** When it was handed over ({@link System#nanoTime()}), for the staleness check. */
        final long handedOverAt = System.nanoTime();
        /** Set by the one run that may do the pass; only ever accessed by {@link #casStarted()}. */
        @SuppressWarnings("unused")
        private boolean started;

        @Override
        public void run() {
            backgroundPass(this);
        }

        /** Whether this run is the first of this task (CAS: atomicity is all it is for). */
        boolean casStarted() {
            return STARTED.compareAndSet(this, false, true);
        }
    }

    /**
     * The background pass (kernel {@code mb_cache_shrink_worker}): one batch, then the next task or
     * the end of the work, by steps 2-7 of the class comment.
     */
    private void backgroundPass(Pass pass) {
        if (lvPendingPass() != pass || !pass.casStarted()) {
            return; // replaced, ended, or another run of this task does the pass
        }
        boolean settled = false; // replaced or cleared here: the finally leaves the field alone
        try {
            if (!closed.getAsBoolean()) {
                long freed = reclaimer.reclaim(batch, ReclaimPassEvent.Kind.BACKGROUND, Reclaimer.NO_FLOOR);
                if (freed > 0 && lvContinuingOn() != Thread.currentThread()) {
                    if (atTheBound()) {
                        settled = handOverNextPass(pass);
                    } else if (casPendingPass(pass, null)) {
                        settled = true;
                        if (atTheBound()) {
                            handOverNextPass(null);
                        }
                    }
                }
            }
        } finally {
            if (!settled) {
                casPendingPass(pass, null);
            }
        }
    }

    /** Whether the cache is open and its count at or above {@code maxEntries}, on the estimate where it decides. */
    private boolean atTheBound() {
        long estimate = entryCount.estimate();
        long count = entryCount.decides(estimate, maxEntries) ? estimate : entryCount.snapshot();
        return !closed.getAsBoolean() && count >= maxEntries;
    }

    /**
     * Hands a new task to the executor in place of {@code current}, or of none if {@code current}
     * is null. Returns whether the field was replaced (and cleared again if {@code execute} threw);
     * if not, a newer task owns it. The new task is allocated before the CAS, so a Throwable there
     * replaces nothing.
     */
    private boolean handOverNextPass(Pass current) {
        Pass next = new Pass();
        if (!casPendingPass(current, next)) {
            return false; // superseded: the newer task goes on, and the field is not ours to clear
        }
        Thread self = Thread.currentThread();
        svContinuingOn(self);
        try {
            executor.execute(next);
            return true;
        } catch (Throwable failure) {
            // Not logged here, where logging could throw into the executor's thread: the next
            // create at the bound hands a pass to the same executor and logs what it throws. If
            // the executor ran or queued the task before it threw, that run finds the field
            // cleared (or a later task in it) and does nothing.
            casPendingPass(next, null);
            return true; // the field is cleared, or a pass the executor ran took it over
        } finally {
            casContinuingOn(self, null);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Accessors, named for their memory order (see the class comment)
    // ------------------------------------------------------------------------------------------

    private Pass lvPendingPass() {
        return pendingPass;
    }

    private boolean casPendingPass(Pass expected, Pass updated) {
        return PENDING_PASS.compareAndSet(this, expected, updated);
    }

    private Thread lvContinuingOn() {
        return continuingOn;
    }

    private void svContinuingOn(Thread thread) {
        continuingOn = thread;
    }

    private boolean casContinuingOn(Thread expected, Thread updated) {
        return CONTINUING_ON.compareAndSet(this, expected, updated);
    }
}
