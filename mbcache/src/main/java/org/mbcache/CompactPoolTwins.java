package org.mbcache;

import static org.mbcache.CompactSlots.POOL_TWIN;
import static org.mbcache.CompactSlots.count;
import static org.mbcache.CompactSlots.keyOf;
import static org.mbcache.CompactSlots.lvMeta;

/**
 * The {@link CompactSlots#POOL_TWIN} bit of a home entry's meta word: which lookups of an
 * overflowed chain decide from the bucket's line alone.
 *
 * <p>A lookup whose key the header's pool filter lets through ({@link CompactLine#poolMayHold})
 * must learn whether a pool entry of the chain has its key, and a pool entry is found only through
 * the bucket's chain record: two or three dependent misses after the line's. The filter lets
 * through every key of the chain's pool entries, and about one key in five to one in three of the
 * line's others (its ten bits hold one to three pool keys in most overflowed chains). The bit
 * answers for the line's keys: it is kept so that
 * <blockquote>a live home entry of the chain whose word lacks {@code POOL_TWIN} has a key that no
 * pool entry of the chain has,</blockquote>
 * so a line holding such a word of the key holds all of the key's entries, in its order list's
 * order ({@link #lineHoldsEveryEntryOf}), and the lookup walks the line.
 *
 * <p><b>Writers.</b> Under the bucket's bit, a create sets the bit where the invariant would fail
 * ({@link #twinOfNewEntry}): a pool entry's create (a pool slot, or a home slot lent by another
 * line) sets it on the line's live home entries of its key, with a CAS each (callers change the
 * count and the flags meanwhile without the bit, and their CAS fails on a word that changed, so
 * none loses it); a home entry's create is made live with the bit where a pool entry of the chain
 * has its key. Nothing clears the bit of a live word: a pool entry's removal leaves it set on its
 * twins, which then take the chain's walk, as before, until they leave; a home slot's next
 * occupant starts without it ({@link CompactSlots#liveMeta}). Entries never move between the line
 * and the pool, so no other change can break the invariant.
 *
 * <p><b>Readers.</b> An optimistic reader reads the line's words plainly between its acquire load
 * of the header and its validation, as it reads them for the key ({@link CompactLine#keyPositions}):
 * the bit is set after the lock CAS that makes the version odd and before the unlock, so a reader
 * that read a word before its mark either validated before that lock CAS (its answer is the one
 * before the create) or sees the version moved and retries. A
 * live word of the key is in the chain's order list at a validated version: a home slot lent to
 * another bucket's chain holds a key of that bucket, never this one's, and a word leaves the chain
 * only by a claim (count to zero) under the bit.
 */
final class CompactPoolTwins {

    private CompactPoolTwins() {}

    /**
     * Whether the line at {@code base} of {@code page} has a live word of {@code key} without
     * {@link CompactSlots#POOL_TWIN}: then, at a version that validates, every entry of the key in
     * the chain is in the line. Seven plain loads of words the caller's lookup has loaded already.
     */
    static boolean lineHoldsEveryEntryOf(long[] page, int base, int key) {
        return untwinned(page[base + 1], key) | untwinned(page[base + 2], key) | untwinned(page[base + 3], key)
                | untwinned(page[base + 4], key) | untwinned(page[base + 5], key) | untwinned(page[base + 6], key)
                | untwinned(page[base + 7], key);
    }

    private static boolean untwinned(long meta, int key) {
        return keyOf(meta) == key && count(meta) != 0 && (meta & POOL_TWIN) == 0;
    }

    /**
     * A create's step before its entry goes live in {@code slot} of bucket {@code b}'s chain: for a
     * pool entry, marks the line's live home entries of {@code key} and answers {@code false}; for
     * a home entry of {@code b}, answers whether a pool entry of the chain has the key (the new
     * word's {@code POOL_TWIN}). {@code mix} is the key's {@link CompactTable#filterMix}. Bit held.
     */
    static boolean twinOfNewEntry(CompactTable table, int b, int slot, int key, int mix) {
        long head = table.laVersion(b);
        long[] page = table.linePage(b);
        int base = table.lineBase(b);
        if (!CompactLine.isHomeOf(b, slot)) {
            for (int positions = CompactLine.positionsIn(CompactLine.orderOf(head)); positions != 0;
                    positions &= positions - 1) {
                int at = base + Integer.numberOfTrailingZeros(positions);
                long meta = lvMeta(page, at);
                if (keyOf(meta) == key) {
                    CompactSlots.setFlag(page, at, CompactSlots.generation(meta), POOL_TWIN, true);
                }
            }
            return false;
        }
        return CompactLine.overflowed(head) && CompactLine.poolMayHold(head, mix) && poolHolds(table, b, key);
    }

    /** Whether a pool entry of bucket {@code b}'s chain has {@code key}. Bit held. */
    private static boolean poolHolds(CompactTable table, int b, int key) {
        for (int j = 0, pool = table.records.poolCount(b); j < pool; j++) {
            int slot = table.records.poolRef(b, j);
            if (keyOf(lvMeta(table.metaPage(slot), table.metaIndex(slot))) == key) {
                return true;
            }
        }
        return false;
    }
}
