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
 * ones the table cannot hand out until they leave it, and a table with no other free slot drains
 * it ({@link CompactTable#drainDelayRing}), so no slot is ever out of reach.
 *
 * <p>The ring also keeps the <em>in-place clock</em> ({@link #mayRefillInPlace}): its position
 * and a count of the reuses in place (a line reclaim's refills, a reclaim pass's home slots given
 * straight back), together the cache's reuses of slots, which bound how far a slot reused without
 * passing through the ring may advance its generation.
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

    /** The generations an epoch of the in-place clock owns ({@link #mayRefillInPlace}). */
    static final int EPOCH_GENERATIONS = 4;
    /** An epoch of the in-place clock is this many times the ring's length of reuses. */
    static final int EPOCH_RINGS = 16;

    private final int[] places;
    private final int mask;
    /** log2 of an epoch's reuses: {@link #EPOCH_RINGS} ring lengths (at most 2^17, so epochs wrap with generations). */
    private final int epochShift;
    /** Frees through the ring so far (wraps); its low bits name the place the next free takes. */
    @SuppressWarnings("unused") // through POSITION
    private volatile int position;
    /** Reuses in place so far (wraps; {@link #countRefill}). */
    @SuppressWarnings("unused") // through REFILLS
    private volatile int refills;

    /** An empty ring for a table whose meta space needs {@code slotBits} bits ({@link #sizeFor}). */
    CompactDelayRing(int slotBits) {
        places = new int[sizeFor(slotBits)];
        mask = places.length - 1;
        epochShift = Integer.numberOfTrailingZeros(places.length * EPOCH_RINGS);
    }

    // ---------------------------------------------------------------------------------------------
    // The in-place clock
    // ---------------------------------------------------------------------------------------------

    /**
     * Whether a slot whose occupant has {@code generation} may be reused in place now, skipping the
     * ring: refilled by a line reclaim ({@link CompactWalk#reclaimInLine}) or given straight back to
     * its bucket by a reclaim pass ({@link CompactTable#freeFromPass}). Either advances the
     * generation by one, as every reuse does; "a refill in place" below is either.
     *
     * <p>The clock counts the cache's <em>reuses</em>, frees through the ring and refills in place,
     * in <em>epochs</em> of {@link #EPOCH_RINGS} ring lengths (2^17 reuses with the full ring);
     * epoch {@code e} owns the generations {@code [4e, 4e + 3]} (modulo 2^17, as generations are;
     * the clock wraps with them). Read modulo 2^17, a slot's generation is within its epoch's range,
     * behind it (by at most half the generations) or ahead of it. A slot behind the range, or within
     * it below its last generation, may be refilled; one at the range's last, or ahead of it, waits
     * for a later epoch (a reclaim pass then frees it through the ring).
     *
     * <p>Why a kept handle's generation comes back only after hundreds of millions of reuses: take
     * {@code d = generation - 4e} unreduced. A refill in place moves {@code d} up by one and only
     * from a value whose reduction is at most 2, a free through the ring by one, an epoch down by
     * four. For the generation to come back, it must move forward 2^17, so {@code d} must climb
     * {@code 2^17 - 4 x epochs}; the values whose reduction is between 3 and 2^16 - 1 (2^16 - 3 of
     * every 2^17) can be climbed only by frees through the ring, each taking a ring's length of the
     * cache's frees before the slot is used again (a table whose callers hold all but a few slots,
     * which drains the ring, aside: {@link CompactTable#drainDelayRing}). So the slot needs at least
     * {@code 2^16 - 3 - 4 x epochs} frees through the ring, and with an epoch sixteen rings long, at
     * least about 0.8 x 2^16 rings of reuses: 4.3 x 10^8 with the full ring, 7 minutes at a million
     * a second (a slot refilled only through the ring wraps after 2^17 rings). And a slot's budget
     * comes back with the cache's reuses, not only when a pass frees it, so the line reclaim of a
     * cache turning over at its bound seldom finds a full line with no slot it may refill: the
     * oldest entries of a line, its victims, are epochs behind in a cache of a million entries or
     * more (and in a smaller one, a full line's seven slots share up to 28 refills an epoch).
     *
     * <p>Both counters are read with volatile loads. {@link #countRefill} is an atomic add and the
     * position only grows, so the clock never runs ahead of the reuses it counts; a stale read sees
     * an earlier epoch, which lets a slot through only if the epoch before would have.
     */
    boolean mayRefillInPlace(int generation) {
        int reuses = (int) POSITION.getVolatile(this) + (int) REFILLS.getVolatile(this);
        int first = ((reuses >>> epochShift) * EPOCH_GENERATIONS) & CompactSlots.GENERATION_MASK;
        int ahead = (generation - first) & CompactSlots.GENERATION_MASK;
        return ahead < EPOCH_GENERATIONS - 1 || ahead > CompactSlots.GENERATION_MASK >>> 1;
    }

    /** Counts a refill in place, a line reclaim's or a pass's ({@link #mayRefillInPlace}), as a reuse of the in-place clock. */
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
