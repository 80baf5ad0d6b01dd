package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.mbcache.internal.StripedStatistics;

/**
 * The entry count (kernel {@code c_entry_count}), striped so that creates and removals on
 * different cores write different cache lines, with an exact {@link #snapshot()} for
 * {@code size()} and a cheap {@link #estimate()} for the reclaim decisions of every create.
 *
 * <h2>Cells</h2>
 * Each thread adds to the stripe its id picks ({@link StripedStatistics}): entries added in one
 * cell, entries removed in another, both only ever growing, so a stripe is one line written by
 * its own thread (and by the rare other thread whose id collides, atomically). The count is the
 * sum over the stripes of added minus removed, plus {@code central} (below).
 *
 * <h2>The snapshot: a double collect</h2>
 * A sum read cell by cell is no value the count ever had: a reader descheduled between two cells
 * mixes moments far apart (a thread's removal read, another thread's earlier create not), and can
 * come out above every count there was, or below zero. {@link #snapshot()} therefore reads every
 * cell, then {@code central}, then every cell again. The cells only grow, so if the sums of both
 * reads agree, no cell changed between its two reads, and every cell had the value read at the
 * moment {@code central} was read: the result is the exact count at that moment. (An entry's
 * removal is counted only after its creation was, since its creator holds it until it is counted,
 * and a removal needs it unheld; so that count is never negative.)
 *
 * <p>While writers keep moving the cells, the two reads may never agree. After
 * {@value #TRIES_BEFORE_DIVERTING} tries the snapshot raises {@code collectors}: a writer that sees
 * it above zero adds to the single word {@code central} instead of its cell. Only writers that read
 * {@code collectors} before it was raised can still change a cell, each of them once, so the
 * double collect succeeds after at most one retry per such writer. The snapshot then lowers
 * {@code collectors}, and the writers go back to their cells. {@code central} is shared, but
 * written only while a snapshot waits for writers that did not let it finish.
 *
 * <h2>The estimate</h2>
 * A snapshot reads every stripe twice, too much for a decision on every create. Each stripe's
 * cells therefore also feed one shared estimate word: when an add takes its cell across a
 * multiple of {@code batch}, the adding thread moves the estimate by that step (up for added
 * entries, down for removed ones). The estimate word is written once per {@code batch} adds of a
 * thread, and once writers are quiet it is off from the count by less than {@link #slack()}
 * either way ({@code stripes * (batch - 1)}). The batch is the largest power of two up to 64 that
 * keeps the slack within {@code maxEntries / 16}; it is 1 only for caches below
 * {@code 32 * stripes} entries (512 on a machine of two processors, 4,096 on one of 16), whose
 * estimate is then exact and written by every add. The slack is a worst case over every stripe:
 * with {@code T} threads writing, the estimate is off by less than {@code T * batch}. (A tighter
 * bound on the slack would make the batch 1, and the estimate a word written by every create, for
 * caches of ext4's size on the machines with many processors that striping is for.)
 * A create compares the estimate with its thresholds ({@link #decides}); where the slack leaves
 * the background pass's threshold open, it corrects the estimate by its own thread's cells
 * ({@link #estimateSeenByThisThread}: exact for a single creating thread, since reclaim passes
 * count their frees with {@link #addExactly}), and only near the synchronous threshold, whose
 * promise about {@code size()} needs the exact count, does it take a snapshot. (A snapshot for
 * every create near the bound would read every stripe twice on nearly every create of a cache
 * whose count hovers just below the bound.)
 *
 * <h2>Memory ordering</h2>
 * Every access to a cell, {@code central}, {@code collectors} or the estimate is a volatile-mode
 * {@link VarHandle} access, so the reads of a snapshot happen in the order written (first
 * collect, {@code central}, second collect), and a writer's read of {@code collectors} is ordered
 * with the snapshot's raise of it. The count orders nothing else.
 */
final class EntryCount {
    private static final VarHandle WORD = MethodHandles.arrayElementVarHandle(long[].class);
    /** The stripes' counters. */
    private static final int ADDED = 0;
    private static final int REMOVED = 1;
    /** Slots of {@link #shared}, each on lines of its own (16 longs, 128 bytes, apart). */
    private static final int ESTIMATE = 16;
    private static final int CENTRAL = 32;
    private static final int COLLECTORS = 48;
    /**
     * The largest batch: the estimate then stays within {@code 64 * stripes} of the count even in a
     * cache whose bound is far above its size, where it stands in for the live count (the purge
     * of dead LRU entries compares with it).
     */
    private static final long MAX_BATCH = 64;
    /** Double collects a snapshot tries before it diverts the writers to {@code central}. */
    static final int TRIES_BEFORE_DIVERTING = 2;

    private final StripedStatistics cells = new StripedStatistics(2);
    /** The estimate, {@code central} and {@code collectors}, each on a line of its own. */
    private final long[] shared = new long[COLLECTORS + 16];
    private final long batch;
    /** log2 of {@link #batch}: an arithmetic shift is a floor division by it. */
    private final int batchShift;

    /**
     * A count at zero for a cache of {@code maxEntries}.
     *
     * @param maxEntries the cache's bound (saturated values welcome): it sizes the estimate's batch
     */
    EntryCount(long maxEntries) {
        long most = Math.min(MAX_BATCH, Math.max(1, maxEntries / 16 / cells.stripes()));
        this.batch = Long.highestOneBit(most);
        this.batchShift = Long.numberOfTrailingZeros(batch);
    }

    /**
     * Counts {@code delta} entries added (above zero) or removed (below zero) in the calling
     * thread's cell, or in {@code central} while a snapshot waits. Allocation-free and atomic: it
     * cannot fail halfway.
     */
    void add(long delta) {
        if (delta == 0) {
            return;
        }
        if (lvCollectors() != 0) {
            addExactly(delta);
            return;
        }
        int counter = delta > 0 ? ADDED : REMOVED;
        long n = Math.abs(delta);
        long before = cells.getAndAdd(counter, n);
        long steps = ((before + n) >> batchShift) - (before >> batchShift);
        if (steps != 0) {
            long step = steps << batchShift;
            WORD.getAndAdd(shared, ESTIMATE, counter == ADDED ? step : -step);
        }
    }

    /**
     * Counts {@code delta} entries added or removed in {@code central} and the estimate at once,
     * so that the estimate carries all of it and no thread's cell keeps a part below a batch: for
     * rare bulk changes (a reclaim pass's frees), which then leave nothing that another thread's
     * {@link #estimateSeenByThisThread} cannot see. Writes two shared words; allocation-free. A
     * snapshot reads {@code central} in one load, so it sees all of the change or none of it.
     */
    void addExactly(long delta) {
        WORD.getAndAdd(shared, CENTRAL, delta);
        WORD.getAndAdd(shared, ESTIMATE, delta);
    }

    /** The estimate: off from the count by less than {@link #slack()} either way once quiet. */
    long estimate() {
        return (long) WORD.getVolatile(shared, ESTIMATE);
    }

    /**
     * The estimate corrected by the calling thread's own cells: what the estimate leaves out of
     * this thread's adds (each cell's part below a multiple of the batch) added back. Exact when
     * no other thread writes cells ({@link #addExactly} writes none); otherwise off by the other
     * stripes' parts, less than
     * {@code (stripes - 1) * (batch - 1)} either way. Reads the thread's own line only.
     */
    long estimateSeenByThisThread(long estimate) {
        long below = batch - 1;
        return estimate + (cells.own(ADDED) & below) - (cells.own(REMOVED) & below);
    }

    /** How far the estimate may be from the count when writers are quiet: {@code stripes * (batch - 1)}. */
    long slack() {
        return cells.stripes() * (batch - 1);
    }

    /**
     * Whether the estimate settles "count {@code >= threshold}" whatever the slack: the count is
     * then surely on the estimate's side of it (once writers are quiet), and no snapshot is needed.
     */
    boolean decides(long estimate, long threshold) {
        long slack = slack();
        return estimate - slack >= threshold || estimate + slack < threshold;
    }

    /** The estimate's batch (for tests). */
    long batch() {
        return batch;
    }

    /**
     * The count at one moment during the call (the class comment's double collect): exact, never
     * negative, a value the count really had. Allocation-free; returns after at most
     * {@value #TRIES_BEFORE_DIVERTING} tries plus one per writer that was adding when the writers
     * were diverted.
     */
    long snapshot() {
        boolean diverted = false;
        try {
            for (int tries = 1; ; tries++) {
                long added = cells.sum(ADDED);
                long removed = cells.sum(REMOVED);
                long central = (long) WORD.getVolatile(shared, CENTRAL);
                if (cells.sum(ADDED) == added && cells.sum(REMOVED) == removed) {
                    return added - removed + central;
                }
                if (tries == TRIES_BEFORE_DIVERTING) {
                    WORD.getAndAdd(shared, COLLECTORS, 1L);
                    diverted = true;
                }
            }
        } finally {
            if (diverted) {
                WORD.getAndAdd(shared, COLLECTORS, -1L);
            }
        }
    }

    private long lvCollectors() {
        return (long) WORD.getVolatile(shared, COLLECTORS);
    }

    /** Whether writers are diverted to {@code central} now (for tests). */
    boolean diverted() {
        return lvCollectors() != 0;
    }

    /**
     * Resets to zero. Only while nobody adds (close). {@code collectors} is left alone: each
     * snapshot lowers what it raised, and a snapshot may still be finishing.
     */
    void reset() {
        cells.reset();
        WORD.setVolatile(shared, ESTIMATE, 0L);
        WORD.setVolatile(shared, CENTRAL, 0L);
    }
}
