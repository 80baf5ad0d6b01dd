package org.mbcache;

import static org.mbcache.CompactSlots.GENERATION_SHIFT;
import static org.mbcache.CompactSlots.REFERENCED;
import static org.mbcache.CompactSlots.count;
import static org.mbcache.CompactSlots.generation;
import static org.mbcache.CompactSlots.keyOf;
import static org.mbcache.CompactSlots.lvMeta;


/**
 * The compact layout's reclaim order: a CLOCK hand over a {@link CompactTable}'s slots, the step of
 * its reclaim passes ({@link ReclaimBooks.Sweep}, run by {@link ReclaimBooks} under the reclaim
 * lock), and the order its snapshots list pairs in ({@link CompactSnapshotWalk}).
 *
 * <p><b>The sweep.</b> Over {@code [1, end)} in {@link CompactSweepOrder}'s order: the lines' slots
 * and the pool's, each region in index order with a hand of its own, wrapping, the two interleaved in
 * proportion to their sizes; {@code end} is the table's end when the pass begins, and the pass's
 * extent is {@code end - 1}. Headers and skipped indices are {@link #EMPTY}. At each slot it reads
 * the meta word. Count zero (free, or claimed elsewhere): {@link #EMPTY}. Referenced: the flag
 * cleared, a second chance. Count one: claimed under its bucket's bit (the claim re-checks key,
 * generation and count there), unhashed, then freed ({@link CompactTable#freeFromPass} in tables with
 * line reclaim, else {@link CompactTable#free}). Held: kept.
 * The reclaim lock is taken before any bucket bit and never while one is held (a create that finds
 * no free slot reclaims before it locks its bucket), so the two cannot deadlock.
 *
 * <p><b>The look-ahead.</b> Each time a region's hand enters slots outside its window it first loads the
 * bucket lines of the claimable ones among the next {@value #LOOKAHEAD}
 * ({@link CompactTable#touchBucketsOfClaimable}): loads only, racy and plain, whose values decide
 * nothing, so that the claims that follow (each behind the lock bit's locked instruction, which
 * waits for the loads before it) find those lines in the cache instead of waiting for each miss in
 * turn. 16 slots: up to 48 loads in flight, about what a core tracks at once.
 */
final class CompactClock implements ReclaimBooks.Sweep {

    /** Slots the hand looks ahead of itself (see the class comment). */
    static final int LOOKAHEAD = 16;

    private final CompactTable table;
    /** Whether a pass's frees go through {@link CompactTable#freeFromPass} (see the constructor). */
    private final boolean homeSlotsInPlace;
    /** Where the hands are: the slot a pass looks at next in each region. Reclaim lock held. */
    private final CompactSweepOrder order;
    private int end;
    /** The look-ahead's windows, {@code [touchedFrom[r], touchedTo[r])}, r 0 the lines' region, 1 the pool's. */
    private final int[] touchedFrom = new int[2];
    private final int[] touchedTo = new int[2];
    /** The region of the slot looked at last. */
    private int lastRegion;
    private long touched;

    /**
     * @param homeSlotsInPlace whether a pass frees home slots through {@link CompactTable#freeFromPass}
     *     (given straight back to their buckets where the in-place clock allows) rather than always
     *     through the delay ring ({@link CompactTable#free}): in tables whose creates reclaim in
     *     their lines, which have the full ring; in a smaller ring the in-place reuses would bring a
     *     kept handle's generation round sooner
     */
    CompactClock(CompactTable table, boolean homeSlotsInPlace) {
        this.table = table;
        this.homeSlotsInPlace = homeSlotsInPlace;
        this.order = new CompactSweepOrder(table.homeSlots);
    }

    /** The order from where the hands are now, for a snapshot's walk. Reclaim lock held. */
    CompactSweepOrder orderFromHands() {
        return order.copy();
    }

    /** The hands (tests). */
    CompactSweepOrder order() {
        return order;
    }

    /** The first slot of the look-ahead window of the region looked at last (tests). */
    int lookAheadFrom() {
        return touchedFrom[lastRegion];
    }

    /** The end, exclusive, of the look-ahead window of the region looked at last (tests). */
    int lookAheadTo() {
        return touchedTo[lastRegion];
    }

    @Override
    public long beginPass() {
        end = table.end();
        touchedFrom[0] = touchedTo[0] = touchedFrom[1] = touchedTo[1] = 0;
        touched = 0;
        return end - 1L;
    }

    @Override
    public int step() {
        int slot = order.next(end);
        int region = table.isHome(slot) ? 0 : 1;
        lastRegion = region;
        if (slot < touchedFrom[region] || slot >= touchedTo[region]) {
            touchedFrom[region] = slot;
            touchedTo[region] = Math.min(region == 0 ? table.homeSlots : end, slot + LOOKAHEAD);
            touched += table.touchBucketsOfClaimable(touchedFrom[region], touchedTo[region]);
        }
        if (!CompactLine.isSlot(slot)) {
            return EMPTY; // a line's header, or a skipped pool index
        }
        long[] page = table.metaPage(slot);
        int at = table.metaIndex(slot);
        long meta = lvMeta(page, at);
        if (count(meta) == 0) {
            return EMPTY;
        }
        if ((meta & REFERENCED) == 0 && count(meta) == 1 && claim(slot, page, at, meta)) {
            return FREED;
        }
        if ((meta & REFERENCED) != 0) {
            CompactSlots.setFlag(page, at, generation(meta), REFERENCED, false);
            return SECOND_CHANCE;
        }
        return KEPT;
    }

    @Override
    public void endPass() {
        table.consume(touched);
    }

    /**
     * Claims an unused slot (count 1 to 0, re-checked under its bucket's bit: same key, same
     * generation) and unhashes it, then frees it. Reclaim lock held.
     */
    private boolean claim(int slot, long[] page, int at, long seen) {
        int bucket = table.bucketOf(keyOf(seen)); // a home slot may serve another bucket as a pool slot
        table.lock(bucket);
        try {
            long meta = lvMeta(page, at);
            if ((meta ^ seen) >>> GENERATION_SHIFT != 0 || !CompactSlots.tryClaim(table, slot, page, at, meta, true)) {
                return false; // another generation or key (reused meanwhile), or held or referenced now
            }
            int pos = table.positionFromOldest(bucket, slot); // the hand claims old pairs: near the front
            if (pos < 0) {
                throw new AssertionError("a live slot was not in its chain: " + slot);
            }
            table.removeAt(bucket, pos);
            if (homeSlotsInPlace) { // under the bit: a create in the bucket never sees the slot out of the chain unfreed
                table.freeFromPass(slot);
            } else {
                table.free(slot);
            }
        } finally {
            table.unlock(bucket);
        }
        return true;
    }
}
