package org.mbcache;

/**
 * When a {@link CompactMbCache} create may reclaim in its bucket's line
 * ({@link CompactWalk#reclaimInLine}, the contract's section 4): from the create that finds the
 * count at the bound until one that finds it more than an eighth below (the band background passes
 * keep a full cache in, each freeing {@code maxEntries / 16}). So a cache filling up keeps every
 * entry until it reaches its bound, and a full one stays in its lines while passes take it down and
 * creates bring it back.
 *
 * <p>Entered and left by a plain write of one flag, only when it changes (so creates that agree do
 * not write a shared line): a hint, racy on purpose. A create that misses another thread's change
 * takes a pool slot, or reclaims in its line, once more; either keeps the contract.
 */
final class LineReclaimBand {

    private final long maxEntries;
    /** The count below which line reclaim stops: an eighth below the bound. */
    private final long lowWater;
    /** Whether the count reached the bound and has not fallen below {@link #lowWater} since. */
    private boolean active;

    /** A band for a cache of bound {@code maxEntries}, not entered yet. */
    LineReclaimBand(long maxEntries) {
        this.maxEntries = maxEntries;
        this.lowWater = maxEntries - maxEntries / 8;
    }

    /**
     * Whether a create that read {@code count} ({@link BackgroundReclaim#beforeCreate}) may reclaim
     * in its line; enters or leaves the band.
     */
    boolean allows(long count) {
        boolean inBand = count >= maxEntries || (count >= lowWater && active);
        if (inBand != active) {
            active = inBand;
        }
        return inBand;
    }
}
