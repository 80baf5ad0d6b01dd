package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.mbcache.internal.StripedStatistics;

/**
 * A counter split into per-thread cells on cache lines of their own (one counter of a
 * {@link StripedStatistics}), with a cheap estimate beside the exact sum: the JVM's
 * {@code percpu_counter} (the kernel's answer to the same problem).
 *
 * <p>A thread adds to the cell its id picks, so threads on different cores rarely write the same
 * line; the adds are atomic ({@code getAndAdd}), so two threads that share a cell lose nothing.
 * {@link #sum()} reads every cell: exact once the adders are quiet, and while they are not, off
 * by the adds that overlap the whole read, which can be many: a reader descheduled between two cells
 * mixes moments milliseconds apart, so the sum may be a value the counter never had. That is why
 * the cache's entry count, which {@code size()} reports, is not one of these; the dead entries
 * the LRU list still links are, since only a purge decision reads them. Reading every cell costs
 * one line per stripe, too much for a decision taken on every delete, so each cell also feeds a
 * shared <em>estimate</em>: whenever a
 * cell's value crosses a multiple of {@code batch}, the crossing thread adds that multiple's step
 * to the estimate. The estimate is therefore written once per {@code batch} adds of a thread, and
 * {@code sum() - stripes * batch < estimate() <= sum()} whenever the adders are quiet. With
 * {@code batch == 1} the estimate is the exact count, written by every add.
 *
 * <p>Memory ordering: every access to a cell or the estimate is a volatile-mode {@link VarHandle}
 * access; the counter orders nothing else, and nothing else is ordered by it.
 */
final class StripedCounter {
    private static final VarHandle ESTIMATE = MethodHandles.arrayElementVarHandle(long[].class);
    /** Where the estimate sits in {@link #estimateLine}: a line away from the array's header and neighbour. */
    private static final int ESTIMATE_SLOT = 16;

    /** The exact per-thread cells: one counter of a {@link StripedStatistics}. */
    private final StripedStatistics cells = new StripedStatistics(1);
    private final long[] estimateLine = new long[2 * ESTIMATE_SLOT];
    private final long batch;
    /** log2 of {@link #batch}: an arithmetic shift is a floor division by it, without a divide. */
    private final int batchShift;

    /**
     * A counter at zero.
     *
     * @param batch how far a thread's cell moves before the estimate follows; a power of two
     */
    StripedCounter(long batch) {
        if (batch < 1 || Long.bitCount(batch) != 1) {
            throw new IllegalArgumentException("batch must be a power of two, was " + batch);
        }
        this.batch = batch;
        this.batchShift = Long.numberOfTrailingZeros(batch);
    }

    /** Adds {@code delta} to the calling thread's cell, and a batch step to the estimate if the cell crossed one. */
    void add(long delta) {
        long before = cells.getAndAdd(0, delta);
        // Which multiples of batch the cell crossed: shifts, not Math.floorDiv, whose 64-bit divide
        // by a field would be the slowest instruction of this hot path (two per add).
        long steps = ((before + delta) >> batchShift) - (before >> batchShift);
        if (steps != 0) {
            ESTIMATE.getAndAdd(estimateLine, ESTIMATE_SLOT, steps << batchShift);
        }
    }

    /** The exact sum once the adders are quiet (see the class comment). */
    long sum() {
        return cells.sum(0);
    }

    /** The estimate: below {@link #sum()} by less than {@link #slack()} when quiet, never above it. */
    long estimate() {
        return (long) ESTIMATE.getVolatile(estimateLine, ESTIMATE_SLOT);
    }

    /** How far the estimate may trail the sum when quiet: {@code stripes * (batch - 1)}. */
    long slack() {
        return cells.stripes() * (batch - 1);
    }

    /** Resets to zero. Only while nobody adds (close). */
    void reset() {
        cells.reset();
        ESTIMATE.setVolatile(estimateLine, ESTIMATE_SLOT, 0L);
    }
}
