package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The delay ring of a {@link CompactTable}: a fixed, lock-free ring of freed slots on their way back
 * into use (a pool slot to the free list, a home slot to its bucket), so that a freed slot is handed out again only after about {@link #size} further
 * frees ({@link CompactTable#free}, which also gives the memory-order argument for the slot's words).
 * A place holds a slot index, or 0 (empty; slot 0 is never used). Allocation-free after
 * construction.
 *
 * <p>Its length is {@code min(8192, 2^slotBits / 8)} (at least 1), a power of two, for a table
 * whose meta space needs {@code slotBits} bits (at least 12: 512 places in the smallest table,
 * 8192, 32 KiB, from 16 bits up). An eighth of the meta space at most: the ring's slots are free
 * ones the table cannot hand out until they leave it, and a table whose pool is spent with an empty
 * free list drains it ({@link CompactTable#drainDelayRing}), so no slot is ever out of reach.
 *
 * <p>Every access to a place is a volatile-mode {@link VarHandle} access: {@link #exchange} and
 * {@link #take} are {@code getAndSet}s, so a slot put in a place is taken out of it exactly once,
 * by the one free whose exchange displaces it or by one drain, and that taker's read of the place
 * synchronizes with the putter's write (the happens-before edge {@link CompactTable#free} relies
 * on). The position is a {@code getAndAdd}, so concurrent frees take distinct places until the
 * counter laps the ring; two that meet in one place still exchange atomically, one after the other.
 */
final class CompactDelayRing {

    /** The largest ring. */
    static final int MAX_SIZE = 8192;

    private static final VarHandle PLACES = MethodHandles.arrayElementVarHandle(int[].class);
    private static final VarHandle POSITION;
    private static final VarHandle REFILLS;

    static {
        try {
            POSITION = MethodHandles.lookup().findVarHandle(CompactDelayRing.class, "position", int.class);
            REFILLS = MethodHandles.lookup().findVarHandle(CompactDelayRing.class, "refills", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The generations a slot may take in one epoch of the in-place clock ({@link #inPlaceGeneration}). */
    static final int EPOCH_GENERATIONS = 4;
    /** The refills in place a slot takes at most in one epoch: all but the first of the epoch's generations. */
    static final int REFILLS_AN_EPOCH = EPOCH_GENERATIONS - 1;

    private final int[] places;
    private final int mask;
    /** log2 of the ring's length: an epoch of the in-place clock is that many reuses. */
    private final int epochShift;
    /** Frees through the ring so far (wraps); its low bits name the place the next free takes. */
    @SuppressWarnings("unused") // through POSITION
    private volatile int position;
    /** Refills in place so far (wraps; {@link #countRefill}). */
    @SuppressWarnings("unused") // through REFILLS
    private volatile int refills;

    /** An empty ring for a table whose meta space needs {@code slotBits} bits ({@link #sizeFor}). */
    CompactDelayRing(int slotBits) {
        places = new int[sizeFor(slotBits)];
        mask = places.length - 1;
        epochShift = Integer.numberOfTrailingZeros(places.length);
    }

    // ---------------------------------------------------------------------------------------------
    // The in-place clock
    // ---------------------------------------------------------------------------------------------

    /**
     * The generation a line reclaim gives a slot it refills in place, skipping the ring, whose
     * occupant has {@code generation}; or -1: the slot may not be refilled in place now.
     *
     * <p>Reuses (frees through the ring and refills in place) are counted in <em>epochs</em> of a
     * ring's length; epoch {@code e} owns the generations {@code [4e, 4e + 3]} (modulo 2^17, as
     * generations are). A slot whose generation is in its epoch's range is refilled with the next
     * one, up to the range's last ({@link #REFILLS_AN_EPOCH} refills); one whose generation is
     * behind the range (by less than half the generations) jumps to its first; one at the range's
     * last, or ahead of it, waits for the next epoch. A free through the ring advances a slot's
     * generation by one and takes at least a ring's length of reuses, an epoch, before the slot is
     * used again, so no slot's generation gets ahead of its epoch's range but by those (the drained
     * ring of a table callers hold nearly all of aside, {@link CompactTable#drainDelayRing}), and a
     * slot's generation only moves forward, by at most {@link #EPOCH_GENERATIONS} an epoch: it
     * comes back to a kept handle's only after about 2^15 epochs, 2^28 reuses of the full ring of
     * 8192. A slot's budget so comes back every epoch, not only when a reclaim pass frees it, so the
     * line reclaim of a cache turning over at its bound seldom finds a full line with no slot it
     * may refill.
     *
     * <p>The two counters are read with volatile loads; a stale (smaller) epoch only makes the
     * answer more cautious, and the bucket's bit, held by the caller, keeps the slot's word as read.
     */
    int inPlaceGeneration(int generation) {
        int reuses = (int) POSITION.getVolatile(this) + (int) REFILLS.getVolatile(this);
        int first = ((reuses >>> epochShift) * EPOCH_GENERATIONS) & CompactSlots.GENERATION_MASK;
        int ahead = (generation - first) & CompactSlots.GENERATION_MASK;
        if (ahead < REFILLS_AN_EPOCH) {
            return generation + 1; // within the range, below its last: no wrap (the range's first is a multiple of 4)
        }
        return ahead > CompactSlots.GENERATION_MASK >>> 1 ? first : -1;
    }

    /** Counts a refill in place ({@link #inPlaceGeneration}) as a reuse of the in-place clock. */
    void countRefill() {
        REFILLS.getAndAdd(this, 1);
    }

    /**
     * The ring's length for a table whose meta space needs {@code slotBits} bits: {@code min(8192, 2^slotBits / 8)},
     * at least 1, a power of two.
     */
    static int sizeFor(int slotBits) {
        return Math.min(MAX_SIZE, Math.max(1, (1 << Math.min(slotBits, 30)) >>> 3));
    }

    /** The number of places. */
    int size() {
        return places.length;
    }

    /**
     * Puts a freed slot in the next place and returns the slot that was there (0 if none): the one
     * freed {@link #size} frees earlier, which the caller pushes onto the free list.
     */
    int exchange(int slot) {
        int place = (int) POSITION.getAndAdd(this, 1) & mask;
        return (int) PLACES.getAndSet(places, place, slot);
    }

    /** The place the next free takes, the oldest slot's (unmasked: {@link #take} masks it). */
    int oldest() {
        return (int) POSITION.getVolatile(this);
    }

    /**
     * Empties place {@code place} (masked to the ring) and returns its slot (0 if it was empty). A
     * volatile load first, so an empty place costs no locked instruction.
     */
    int take(int place) {
        int at = place & mask;
        return (int) PLACES.getVolatile(places, at) == 0 ? 0 : (int) PLACES.getAndSet(places, at, 0);
    }

    /** Places holding a slot (for tests and accounting; a moment's count). */
    int occupied() {
        int n = 0;
        for (int i = 0; i < places.length; i++) {
            n += (int) PLACES.getVolatile(places, i) != 0 ? 1 : 0;
        }
        return n;
    }

    /** Bytes of the ring's array. */
    long footprintBytes() {
        return 16L + 4L * places.length;
    }
}
