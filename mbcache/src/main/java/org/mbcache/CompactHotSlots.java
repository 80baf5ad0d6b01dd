package org.mbcache;

import static org.mbcache.CompactSlots.IDENTITY;
import static org.mbcache.CompactSlots.casMeta;
import static org.mbcache.CompactSlots.count;
import static org.mbcache.CompactSlots.lvMeta;

/**
 * The hot-mode side of a {@link CompactTable}'s slots: the {@link HotReferences.Host} whose words
 * are the slots' meta words (a slot index is its {@code at}), the cells of at most
 * {@value HotReferences#MAX_HOT_ENTRIES} hot slots, and the vote over failed CASes that decides when
 * a slot goes hot. {@link HotReferences} has the protocol; {@link CompactSlots} calls it with this.
 */
final class CompactHotSlots implements HotReferences.Host {

    private final CompactTable table;

    CompactHotSlots(CompactTable table) {
        this.table = table;
    }

    /** The cells of at most MAX_HOT_ENTRIES hot slots, each named by its occupant (identity bits and slot). */
    private final HotCellTable hotCells = new HotCellTable();
    /** The hot-mode vote over failed CASes of slots' meta words. */
    private final ContentionVote contentionVote = new ContentionVote();
    /** Per slot of {@link #contentionVote}, the handle (slot and generation) it favours; racy on purpose. */
    private final long[] contended = new long[ContentionVote.SLOTS];

    @Override
    public long lvWord(long at) {
        int slot = (int) at;
        return lvMeta(table.metaPage(slot), table.metaIndex(slot));
    }

    /** The hot-mode CASes; the one that claims (count to zero) marks a home slot as {@link CompactTable#claimedWord} does. */
    @Override
    public boolean casWord(long at, long expected, long updated) {
        int slot = (int) at;
        return casMeta(table.metaPage(slot), table.metaIndex(slot), expected, count(updated) == 0 ? table.claimedWord(slot, updated) : updated);
    }

    /** The cells of the slot's occupant whose meta word is {@code word}: found by its identity bits and the slot. */
    @Override
    public long[] hotCells(long at, long word) {
        return hotCells.cells((int) at, null, word & IDENTITY, at);
    }

    @Override
    public boolean publishHotCells(long at, long word, long[] cells) {
        return hotCells.publish((int) at, null, word & IDENTITY, at, cells);
    }

    @Override
    public void retireHotCells(long at, long[] cells) {
        hotCells.retire(cells);
    }

    @Override
    public boolean hotBudgetSpent() {
        return hotCells.full();
    }

    /** Slots with cells now (hot ones, and a switch in progress). */
    int hotSlots() {
        return hotCells.size();
    }

    /**
     * Notes a failed CAS on the meta word of the occupant {@code handle} (slot and generation) and
     * answers whether it has been contended often enough to switch to hot mode ({@link ContentionVote},
     * by handle).
     */
    boolean noteContention(long handle) {
        int slot = ContentionVote.slotOf(CompactSlots.slotOf(handle));
        int verdict = contentionVote.tally(slot, contended[slot] == handle);
        if (verdict == ContentionVote.TAKE_OVER) {
            contended[slot] = handle;
        }
        return verdict == ContentionVote.SWITCH;
    }
}
