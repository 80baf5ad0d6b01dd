package org.mbcache;

/**
 * The order in which {@link CompactClock}'s hand visits a {@link CompactTable}'s meta indices: the
 * lines' region {@code [1, homeSlots)} and the pool's {@code [homeSlots, end)}, each in index order
 * with its own hand, wrapping within its region, the two interleaved in proportion to their sizes.
 * So a pool entry waits about as long for the hand as a home entry does, and the pool, which takes
 * the entries of lines that are full when they are created, is swept as fast as it fills; one hand
 * over the lines and then the pool would leave the pool unswept for a whole turn of the lines, and
 * it would grow meanwhile.
 *
 * <p>The interleave: a balance gains the pool's size at each step in the lines and loses the lines'
 * size at each step in the pool, and the next step is in the pool while it is positive. It stays
 * within {@code (-lines, pool]}, so over any {@code end - 1} consecutive steps with one {@code end}
 * each region's indices are visited exactly once. That holds for an {@code end} smaller than the
 * one the hands last moved over too (a copy walked over an end read before a pass moved the hands
 * over a larger one; {@link CompactMbCache#writeSnapshot} reads both under the reclaim lock, so
 * its ends are never smaller): the next step brings a balance above the pool back to it, and a
 * hand past the end starts its region again. Not thread-safe: the clock's is used under the
 * reclaim lock, and a snapshot walks a {@link #copy} of it.
 */
final class CompactSweepOrder {

    /** The first pool index: the lines' region is {@code [1, homeSlots)}. */
    private final int homeSlots;
    private int homeHand = 1;
    private int poolHand;
    private long balance;

    CompactSweepOrder(int homeSlots) {
        this.homeSlots = homeSlots;
        this.poolHand = homeSlots;
    }

    private CompactSweepOrder(CompactSweepOrder other) {
        this.homeSlots = other.homeSlots;
        this.homeHand = other.homeHand;
        this.poolHand = other.poolHand;
        this.balance = other.balance;
    }

    /** An independent order starting where this one is. */
    CompactSweepOrder copy() {
        return new CompactSweepOrder(this);
    }

    /**
     * The next index of a table whose end is {@code end} ({@code end > 1}), and the hands moved past
     * it; a header or skipped index comes as any other (the caller passes over it).
     */
    int next(int end) {
        int pool = end - homeSlots;
        int lines = homeSlots - 1;
        if (balance > pool) {
            balance = Math.max(0, pool); // hands moved over a larger end: back in range
        }
        if (pool > 0 && (balance > 0 || lines <= 0)) {
            int index = poolHand >= homeSlots && poolHand < end ? poolHand : homeSlots;
            poolHand = index + 1;
            balance -= lines;
            return index;
        }
        int index = homeHand < homeSlots && homeHand < end ? homeHand : 1;
        homeHand = index + 1;
        balance += Math.max(0, pool);
        return index;
    }

    /** The index the lines' hand visits next (tests). */
    int homeHand() {
        return homeHand;
    }

    /** The index the pool's hand visits next (tests). */
    int poolHand() {
        return poolHand;
    }
}
