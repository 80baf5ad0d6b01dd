package org.mbcache;

import java.lang.reflect.Field;

/**
 * Reaches the free slots of a {@link CompactMbCache} from tests and the stress races: its delay
 * ring ({@link CompactDelayRing}), which holds a freed slot back for a ring's length of further
 * frees, and the accounting of free slots. Test support, in this package because the table is
 * package-private; the stress module reaches it through the test jar.
 */
public final class FreedSlots {

    private static final Field TABLE;

    static {
        try {
            TABLE = CompactMbCache.class.getDeclaredField("table");
            TABLE.setAccessible(true);
        } catch (NoSuchFieldException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private FreedSlots() {
    }

    /**
     * Moves the delay ring's slots to the free list, the newest on top, as a create does once no
     * other slot is left: the next create then takes the slot freed last, as it did before the ring.
     *
     * @param cache the compact cache
     * @return the slots moved
     */
    public static int reuseNext(CompactMbCache cache) {
        return tableOf(cache).drainDelayRing();
    }

    /**
     * The slots of the table, home and pool: what callers can hold at once.
     *
     * @param cache the compact cache
     * @return the table's slots
     */
    public static int capacity(CompactMbCache cache) {
        return tableOf(cache).capacity();
    }

    /**
     * The free slots: pool slots on the free list or never handed out, slots in the delay ring, and
     * home slots not resting. Quiet caches only.
     *
     * @param cache the compact cache
     * @return the free slots
     */
    public static int freeSlots(CompactMbCache cache) {
        return tableOf(cache).freeSlots();
    }

    /**
     * The slots handed out so far, slot 0 included: live, free and claimed ones are {@code [1, end)}.
     *
     * @param cache the compact cache
     * @return the table's end
     */
    public static int end(CompactMbCache cache) {
        return tableOf(cache).end();
    }

    /**
     * The delay ring's length ({@link CompactDelayRing#sizeFor}).
     *
     * @param cache the compact cache
     * @return the frees a freed slot waits for before it is handed out again
     */
    public static int ringSize(CompactMbCache cache) {
        return tableOf(cache).ringSize();
    }

    /**
     * The slot a handle names ({@link CompactSlots#slotOf}): two handles of one slot name it whatever
     * their generations.
     *
     * @param handle a handle of a compact cache
     * @return its slot
     */
    public static int slotOf(long handle) {
        return CompactSlots.slotOf(handle);
    }

    /** The cache's table (for this package's tests that act on it directly). */
    static CompactTable tableOf(CompactMbCache cache) {
        try {
            return (CompactTable) TABLE.get(cache);
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);
        }
    }
}
