package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A counter split into per-thread cells on cache lines of their own, with a cheap estimate beside
 * the exact sum: the JVM's {@code percpu_counter} (the kernel's answer to the same problem).
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
    private static final VarHandle CELL = MethodHandles.arrayElementVarHandle(long[].class);
    /** Cells 16 longs (128 bytes) apart: apart also for the adjacent-line prefetcher. */
    private static final int STRIDE = 16;
    private static final int MAX_STRIPES = 256;
    /** Slot of the estimate: the first line of {@link #cells}; cell {@code i} is at {@code (i + 1) * STRIDE}. */
    private static final int ESTIMATE = 0;

    private final long[] cells;
    private final int mask;
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
        int stripes = stripeCount();
        this.cells = new long[(stripes + 1) * STRIDE];
        this.mask = stripes - 1;
        this.batch = batch;
        this.batchShift = Long.numberOfTrailingZeros(batch);
    }

    /** Stripes for this machine: eight per processor, a power of two, between 16 and 256. */
    static int stripeCount() {
        int wanted = 8 * Runtime.getRuntime().availableProcessors();
        int stripes = 16;
        while (stripes < wanted && stripes < MAX_STRIPES) {
            stripes <<= 1;
        }
        return stripes;
    }

    /** The stripe of the calling thread among {@code mask + 1}: {@link #stripeOf} its id. */
    @SuppressWarnings("deprecation") // Thread.getId: threadId() arrived in Java 19, this targets 17
    static int stripeOfCurrentThread(int mask) {
        return stripeOf(Thread.currentThread().getId(), mask);
    }

    /**
     * The stripe of a thread id among {@code mask + 1} (a power of two): Fibonacci hashing, the top
     * bits of {@code id * 2^32 / phi}. Consecutive ids (threads started together, such as a pool's)
     * then land far apart, and with 16 stripes or more (always, here) never on one stripe: the
     * multiples of the golden ratio are the most evenly spread sequence there is. The mix this
     * replaced (the low bits of the same product, folded) put one pair of consecutive ids in four
     * or five on one stripe, so two threads of a pool often shared an append stack and a
     * dead-entry cell.
     */
    static int stripeOf(long id, int mask) {
        int bits = Integer.bitCount(mask);
        return bits == 0 ? 0 : ((int) id * 0x9E3779B9) >>> (32 - bits);
    }

    /** Adds {@code delta} to the calling thread's cell, and a batch step to the estimate if the cell crossed one. */
    void add(long delta) {
        int cell = (stripeOfCurrentThread(mask) + 1) * STRIDE;
        long before = (long) CELL.getAndAdd(cells, cell, delta);
        // Which multiples of batch the cell crossed: shifts, not Math.floorDiv, whose 64-bit divide
        // by a field cost this hot path (two per add) about 30 ns in the churn benchmark.
        long steps = ((before + delta) >> batchShift) - (before >> batchShift);
        if (steps != 0) {
            CELL.getAndAdd(cells, ESTIMATE, steps << batchShift);
        }
    }

    /** The exact sum once the adders are quiet (see the class comment). */
    long sum() {
        long sum = 0;
        for (int i = STRIDE; i < cells.length; i += STRIDE) {
            sum += (long) CELL.getVolatile(cells, i);
        }
        return sum;
    }

    /** The estimate: below {@link #sum()} by less than {@link #slack()} when quiet, never above it. */
    long estimate() {
        return (long) CELL.getVolatile(cells, ESTIMATE);
    }

    /** How far the estimate may trail the sum when quiet: {@code stripes * (batch - 1)}. */
    long slack() {
        return (mask + 1) * (batch - 1);
    }

    /** Resets to zero. Only while nobody adds (close). */
    void reset() {
        for (int i = 0; i < cells.length; i += STRIDE) {
            CELL.setVolatile(cells, i, 0L);
        }
    }
}
