package org.mbcache;

/**
 * The arithmetic of a {@link CompactTable} bucket's line and of its header word, static and free of
 * state: where a line's home slots and values are, which meta indices are slots, and the upper
 * half of the header ({@link BucketLockWord}'s lock and version are its lower half): the order
 * list of the chain's home entries (bits 32-52, three bits a line position, newest first, the
 * newest lowest), the overflowed bit (53) and the pool filter (bits 54-63); and the bits a key
 * takes in a bucket's key filter. {@link CompactTable}'s class comment describes the layout these
 * numbers make; {@code CompactTableChainTest} tests them.
 */
final class CompactLine {

    private CompactLine() {}

    /** Longs of a bucket's line: its header and the meta words of its home slots. */
    static final int LINE_LONGS = 8;

    /** Home slots a bucket has (line positions 1-7). */
    static final int HOME_SLOTS = LINE_LONGS - 1;

    static final int ORDER_SHIFT = 32;

    /** The order list's 21 bits: seven line positions of three bits. */
    static final int ORDER_MASK = (1 << 21) - 1;

    /** Header bit: the chain has pool entries, and is kept whole in its bucket's array. */
    static final long OVERFLOWED = 1L << 53;

    static final int POOL_FILTER_SHIFT = 54;

    static final int POOL_FILTER_BITS = 10;

    static final long POOL_FILTER_MASK = -1L << POOL_FILTER_SHIFT;

    /** The pool filter's bit of a {@link CompactTable#filterMix}, in place in the header: one of bits 54-63. */
    static long poolFilterBit(int mix) {
        return 1L << (POOL_FILTER_SHIFT + (int) (((mix >>> 16) * (long) POOL_FILTER_BITS) >>> 16));
    }

    /** A header's order list: line positions, newest first, three bits each, the newest lowest. */
    static int orderOf(long head) {
        return (int) (head >>> ORDER_SHIFT) & ORDER_MASK;
    }

    /** Whether a header's chain has pool entries (and is whole in the bucket's array). */
    static boolean overflowed(long head) {
        return (head & OVERFLOWED) != 0;
    }

    /**
     * Whether a header's pool filter lets a key of this {@link CompactTable#filterMix} through: {@code false}
     * means no pool entry of the chain has the key (always so for a chain without pool entries,
     * whose filter is zero).
     */
    static boolean poolMayHold(long head, int mix) {
        return (head & poolFilterBit(mix)) != 0;
    }

    /** The number of positions in an order list. */
    static int lineLength(int order) {
        return (34 - Integer.numberOfLeadingZeros(order)) / 3;
    }

    /** The line position (1-7) of an order list's {@code k}-th newest entry, or 0 past its end. */
    static int positionAt(int order, int k) {
        return (order >>> (3 * k)) & 7;
    }

    /** The line positions an order list names, as a bit mask ({@code 1 << position}). */
    static int positionsIn(int order) {
        int positions = 0;
        for (; order != 0; order >>>= 3) {
            positions |= 1 << (order & 7);
        }
        return positions;
    }

    /** An order list without {@code position}, the others' order kept. */
    static int withoutPosition(int order, int position) {
        for (int shift = 0; shift < 21; shift += 3) {
            if (((order >>> shift) & 7) == position) {
                return (order >>> (shift + 3)) << shift | (order & ((1 << shift) - 1));
            }
        }
        throw new AssertionError("position " + position + " is not in order list " + Integer.toOctalString(order));
    }

    /**
     * The line positions whose home slot's meta word, in the line at {@code base} of {@code page},
     * holds {@code key} (bit {@code 1 << position}, positions 1-7), live or not. Seven plain loads
     * at addresses known from the bucket alone: they go out with the header's, none waits for
     * another or for the order list, and no branch on a loaded word stands between them, so a
     * lookup waits for one memory latency (a word loaded at the order list's position would wait
     * for the header first, and a compare per word would be a branch the processor mispredicts
     * while the line is still in flight). Plain loads, as {@link java.util.concurrent.locks.StampedLock}'s optimistic reads are:
     * the caller reads them after its acquire load of the header and validates the version after
     * them ({@link BucketLockWord#validate}), or holds the bucket's bit; a stale word only makes it
     * skip or try a slot whose own CAS then decides.
     */
    static int keyPositions(long[] page, int base, int key) {
        return matchAt(page[base + 1], key, 1) | matchAt(page[base + 2], key, 2) | matchAt(page[base + 3], key, 3)
                | matchAt(page[base + 4], key, 4) | matchAt(page[base + 5], key, 5) | matchAt(page[base + 6], key, 6)
                | matchAt(page[base + 7], key, 7);
    }

    /** {@code 1 << position} if the meta word holds {@code key}, else 0. */
    private static int matchAt(long meta, int key, int position) {
        return (CompactSlots.keyOf(meta) == key ? 1 : 0) << position;
    }

    /** The home slot at line position {@code position} (1-7) of bucket {@code b}. */
    static int homeSlot(int b, int position) {
        return b << 3 | position;
    }

    /**
     * Whether {@code slot} is one of bucket {@code b}'s own home slots, kept in its order list. A
     * home slot of another bucket in {@code b}'s chain ({@link CompactTable#stealHomeSlot}) counts as a pool
     * entry there.
     */
    static boolean isHomeOf(int b, int slot) {
        return slot >>> 3 == b;
    }

    /** Whether a meta index is a slot at all: not a line's header, nor a skipped pool index. */
    static boolean isSlot(int slot) {
        return (slot & 7) != 0;
    }

    /** The key filter's two bits of a {@link CompactTable#filterMix}, picked by its top ten bits. */
    static int keyFilterBits(int mix) {
        return 1 << (mix >>> 27) | 1 << ((mix >>> 22) & 31);
    }

    /** The index of {@code slot} in the value space: the meta space's index, every eighth skipped. */
    static int valueIndex(int slot) {
        return slot - (slot >>> 3) - 1;
    }

    /** The header's upper half for a chain of this order list, overflowed bit and pool filter. */
    static long chainBits(int order, boolean overflowed, long poolFilter) {
        return (long) order << ORDER_SHIFT | (overflowed ? OVERFLOWED : 0) | (poolFilter & POOL_FILTER_MASK);
    }
}
