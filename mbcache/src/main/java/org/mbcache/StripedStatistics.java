package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * A fixed set of exact event counters (hits, misses, refusals...) split into per-thread stripes, one
 * cache line pair per stripe holding every counter of the set, allocated once, when the cache is
 * built.
 *
 * <p>Why not {@link java.util.concurrent.atomic.LongAdder}: a LongAdder allocates its cells the
 * first time two threads collide on it, so an {@code increment} can throw {@link OutOfMemoryError}.
 * A lookup counts its hit after it has taken a reference, and a create counts its cap reclaims
 * after it has changed the chain; a counter that can fail there leaves a reference or a half-done
 * create behind. An {@link #add} here allocates nothing and cannot fail. It is also one line per
 * thread for all the counters of the set, instead of one per counter.
 *
 * <p>A thread adds to the stripe its id picks ({@link StripedCounter#stripeOf}), atomically
 * ({@code getAndAdd}), so two threads sharing a stripe lose nothing. {@link #sum} reads every
 * stripe: exact once the adders are quiet; while they are not, it may miss adds that overlap the
 * read, the same promise a LongAdder makes.
 *
 * <p>Memory ordering: every access to a cell is a volatile-mode {@link VarHandle} access; the
 * counters order nothing else.
 */
final class StripedStatistics {
    private static final VarHandle CELL = MethodHandles.arrayElementVarHandle(long[].class);
    /** Stripes 16 longs (128 bytes) apart: apart also for the adjacent-line prefetcher. */
    private static final int STRIDE = 16;

    private final long[] cells;
    private final int mask;
    private final int counters;

    /**
     * A set of {@code counters} counters, all zero.
     *
     * @param counters how many counters; at most 16, the longs of one stripe
     */
    StripedStatistics(int counters) {
        if (counters < 1 || counters > STRIDE) {
            throw new IllegalArgumentException("counters must be 1 to " + STRIDE + ", was " + counters);
        }
        int stripes = StripedCounter.stripeCount();
        // One stripe more than used, first: the array's header and its neighbour stay off stripe 0.
        this.cells = new long[(stripes + 1) * STRIDE];
        this.mask = stripes - 1;
        this.counters = counters;
    }

    /** Adds {@code delta} to counter {@code counter} in the calling thread's stripe. Never allocates. */
    void add(int counter, long delta) {
        int stripe = StripedCounter.stripeOfCurrentThread(mask) + 1;
        CELL.getAndAdd(cells, stripe * STRIDE + Objects.checkIndex(counter, counters), delta);
    }

    /** Counter {@code counter}'s sum over every stripe: exact once the adders are quiet. */
    long sum(int counter) {
        int offset = Objects.checkIndex(counter, counters);
        long sum = 0;
        for (int i = STRIDE; i < cells.length; i += STRIDE) {
            sum += (long) CELL.getVolatile(cells, i + offset);
        }
        return sum;
    }
}
