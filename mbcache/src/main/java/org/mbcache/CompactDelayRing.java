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

    static {
        try {
            POSITION = MethodHandles.lookup().findVarHandle(CompactDelayRing.class, "position", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int[] places;
    private final int mask;
    /** Frees through the ring so far (wraps); its low bits name the place the next free takes. */
    @SuppressWarnings("unused") // through POSITION
    private volatile int position;

    /** An empty ring for a table whose meta space needs {@code slotBits} bits ({@link #sizeFor}). */
    CompactDelayRing(int slotBits) {
        places = new int[sizeFor(slotBits)];
        mask = places.length - 1;
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
