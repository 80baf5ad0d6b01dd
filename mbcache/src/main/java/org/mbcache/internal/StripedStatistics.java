package org.mbcache.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * A fixed set of exact counters (hits, misses, refusals...) split into per-thread stripes, each
 * stripe on cache lines of its own and holding every counter of the set, allocated once, with the
 * cache; also where the cache's other per-thread structures get their stripes ({@link #stripeOf}).
 *
 * <p>Why not {@link java.util.concurrent.atomic.LongAdder}: a LongAdder allocates its cells the
 * first time two threads collide on it, so an {@code increment} can throw {@link OutOfMemoryError}.
 * A lookup counts its hit after it has taken a reference, and a create counts its cap reclaims
 * after it has changed the chain; a counter that can fail there leaves a reference or a half-done
 * create behind. An {@link #add} here allocates nothing and cannot fail. It is also one line per
 * thread for all the counters of the set, instead of one per counter.
 *
 * <p>A thread adds to the stripe its id picks, atomically ({@code getAndAdd}), so two threads
 * sharing a stripe lose nothing. {@link #sum} reads every stripe: exact once the adders are quiet;
 * while they are not, it may miss adds that overlap the read, the same promise a LongAdder makes.
 *
 * <p>Memory ordering: every access to a cell is a volatile-mode {@link VarHandle} access; the
 * counters order nothing else.
 */
public final class StripedStatistics {
    private static final VarHandle CELL = MethodHandles.arrayElementVarHandle(long[].class);
    /** Stripes 16 longs (128 bytes) apart: apart also for the adjacent-line prefetcher. */
    private static final int STRIDE = 16;
    private static final int MAX_STRIPES = 256;

    private final long[] cells;
    private final int mask;
    private final int counters;

    /**
     * A set of {@code counters} counters, all zero.
     *
     * @param counters how many counters; at most 16, the longs of one stripe
     */
    public StripedStatistics(int counters) {
        if (counters < 1 || counters > STRIDE) {
            throw new IllegalArgumentException("counters must be 1 to " + STRIDE + ", was " + counters);
        }
        int stripes = stripeCount();
        // One stripe more than used, first: the array's header and its neighbour stay off stripe 0.
        this.cells = new long[(stripes + 1) * STRIDE];
        this.mask = stripes - 1;
        this.counters = counters;
    }

    /** Stripes for this machine: eight per processor, a power of two, between 16 and 256. */
    public static int stripeCount() {
        int wanted = 8 * Runtime.getRuntime().availableProcessors();
        int stripes = 16;
        while (stripes < wanted && stripes < MAX_STRIPES) {
            stripes <<= 1;
        }
        return stripes;
    }

    /** The stripe of the calling thread among {@code mask + 1}: {@link #stripeOf} its id. */
    @SuppressWarnings("deprecation") // Thread.getId: threadId() arrived in Java 19, this targets 17
    public static int stripeOfCurrentThread(int mask) {
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
    public static int stripeOf(long id, int mask) {
        int bits = Integer.bitCount(mask);
        return bits == 0 ? 0 : ((int) id * 0x9E3779B9) >>> (32 - bits);
    }

    /** Adds {@code delta} to counter {@code counter} in the calling thread's stripe. Never allocates. */
    public void add(int counter, long delta) {
        getAndAdd(counter, delta);
    }

    /**
     * Adds {@code delta} to counter {@code counter} in the calling thread's stripe. Never allocates.
     *
     * @return that stripe's cell before the add
     */
    public long getAndAdd(int counter, long delta) {
        int stripe = stripeOfCurrentThread(mask) + 1;
        return (long) CELL.getAndAdd(cells, stripe * STRIDE + Objects.checkIndex(counter, counters), delta);
    }

    /** Counter {@code counter} in the calling thread's stripe (which threads whose ids collide share). */
    public long own(int counter) {
        int stripe = stripeOfCurrentThread(mask) + 1;
        return (long) CELL.getVolatile(cells, stripe * STRIDE + Objects.checkIndex(counter, counters));
    }

    /** Counter {@code counter}'s sum over every stripe: exact once the adders are quiet. */
    public long sum(int counter) {
        int offset = Objects.checkIndex(counter, counters);
        long sum = 0;
        for (int i = STRIDE; i < cells.length; i += STRIDE) {
            sum += (long) CELL.getVolatile(cells, i + offset);
        }
        return sum;
    }

    /** How many stripes each counter is split into. */
    public int stripes() {
        return mask + 1;
    }

    /** Resets every counter to zero. Only while nobody adds (close). */
    public void reset() {
        for (int i = 0; i < cells.length; i++) {
            CELL.setVolatile(cells, i, 0L);
        }
    }
}
