package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The chains of a {@link CompactTable} on their own: a bucket's entries in its line's home slots,
 * listed newest first in the header's order list; the entries beyond them in pool slots, the whole
 * chain then kept in the bucket's array, its pool keys in the header's pool filter; free home
 * slots, resting ones, and home slots lent to other buckets.
 */
class CompactTableChainTest {

    private final CompactTable table = new CompactTable(4, 512, KeyedIndex.seed(7L));

    /** Makes {@code slot} live for {@code key} and hashes it as bucket {@code b}'s newest. */
    private int add(int b, int slot, int key) {
        assertNotEquals(0, slot, "a slot to add");
        table.lock(b);
        try {
            table.ensureRoom(b, slot);
            CompactSlots.makeLive(table, slot, key, key, true,
                    CompactPoolTwins.twinOfNewEntry(table, b, slot, key, table.filterMix(key)));
            table.addNewest(b, slot, table.filterMix(key));
        } finally {
            table.unlock(b);
        }
        return slot;
    }

    private int addHome(int b, int key) {
        table.lock(b);
        int slot;
        try {
            slot = table.freeHomeSlot(b);
        } finally {
            table.unlock(b);
        }
        return add(b, slot, key);
    }

    private int addPool(int b, int key) {
        return add(b, table.allocate(), key);
    }

    /** Removes chain position {@code pos} (0 the oldest) of bucket {@code b}, claims and frees its slot. */
    private int remove(int b, int pos) {
        table.lock(b);
        try {
            int slot = table.refAt(b, pos);
            long[] page = table.metaPage(slot);
            int at = table.metaIndex(slot);
            assertTrue(CompactSlots.tryClaim(table, slot, page, at, CompactSlots.lvMeta(page, at)));
            assertEquals(slot, table.removeAt(b, pos));
            table.free(slot);
            return slot;
        } finally {
            table.unlock(b);
        }
    }

    private List<Integer> chain(int b) {
        table.lock(b);
        try {
            List<Integer> slots = new ArrayList<>();
            for (int pos = 0; pos < table.length(b); pos++) {
                slots.add(table.refAt(b, pos));
            }
            return slots;
        } finally {
            table.unlock(b);
        }
    }

    private long header(int b) {
        return table.laVersion(b);
    }

    @Test
    void aChainWithinItsLineIsItsOrderListNewestFirst() {
        List<Integer> added = new ArrayList<>();
        for (int key = 0; key < 5; key++) {
            added.add(addHome(1, key));
        }
        assertEquals(added, chain(1));
        assertFalse(CompactLine.overflowed(header(1)));
        assertEquals(5, CompactLine.lineLength(CompactLine.orderOf(header(1))));
        assertEquals(added.get(4) & 7, CompactLine.positionAt(CompactLine.orderOf(header(1)), 0), "the newest first");
        for (int slot : added) {
            assertTrue(CompactLine.isHomeOf(1, slot));
        }
    }

    @Test
    void anEntryBeyondTheLineGoesToThePoolAndTheRecordHoldsOnlyThePoolEntries() {
        List<Integer> added = new ArrayList<>();
        for (int key = 0; key < CompactLine.HOME_SLOTS; key++) {
            added.add(addHome(2, key));
        }
        assertEquals(0, freeHome(2), "the line is full");
        int pool = addPool(2, 100);
        added.add(pool);
        assertFalse(table.isHome(pool));
        assertTrue(CompactLine.overflowed(header(2)));
        assertEquals(added, chain(2));
        assertEquals(8, table.length(2));
        assertEquals(1, table.records.poolCount(2));
        assertEquals(pool, table.records.poolRef(2, 0));
        assertEquals(CompactLine.HOME_SLOTS, CompactLine.lineLength(CompactLine.orderOf(header(2))),
                "the home entries stay in the order list");
    }

    @Test
    void theLastPoolEntryLeavingMakesTheOrderListTheWholeChainAgain() {
        List<Integer> added = new ArrayList<>();
        for (int key = 0; key < CompactLine.HOME_SLOTS; key++) {
            added.add(addHome(0, key));
        }
        addPool(0, 100);
        remove(0, 0); // a home entry: still overflowed
        added.remove(0);
        assertTrue(CompactLine.overflowed(header(0)));
        remove(0, CompactLine.HOME_SLOTS - 1); // the pool entry, now the newest
        assertFalse(CompactLine.overflowed(header(0)));
        assertEquals(0, header(0) & ~0L << 54, "no pool filter without pool entries");
        assertEquals(added, chain(0));
    }

    @Test
    void aChainGivesItsRecordBackWhenItsLastPoolEntryLeavesAndTheNextOverflowTakesIt() {
        for (int key = 0; key < CompactLine.HOME_SLOTS; key++) {
            addHome(0, key);
        }
        addPool(0, 100);
        int record = table.records.lpEntry(0);
        assertNotEquals(0, record);
        remove(0, CompactLine.HOME_SLOTS); // the pool entry, the newest
        assertFalse(CompactLine.overflowed(header(0)));
        assertEquals(0, table.records.lpEntry(0), "given back: a bucket holds a record only while its chain is in the pool");
        for (int key = 0; key < CompactLine.HOME_SLOTS; key++) {
            addHome(1, 200 + key);
        }
        addPool(1, 300);
        assertEquals(record, table.records.lpEntry(1), "the next chain to overflow takes it from its class's free list");
    }

    @Test
    void removalsAtEveryPositionOfMixedChainsKeepTheOthersInOrder() {
        SplittableRandom random = new SplittableRandom(11);
        List<Integer> model = new ArrayList<>();
        int key = 0;
        for (int step = 0; step < 3000; step++) {
            if (model.size() < 20 && (model.isEmpty() || random.nextInt(3) != 0)) {
                int home = freeHome(3);
                model.add(home != 0 && random.nextInt(4) != 0 ? add(3, home, key++) : addPool(3, key++));
            } else {
                int pos = random.nextInt(model.size());
                assertEquals((int) model.remove(pos), remove(3, pos));
            }
            assertEquals(model, chain(3), "step " + step);
            boolean pooled = model.stream().anyMatch(slot -> !CompactLine.isHomeOf(3, slot));
            assertEquals(pooled, CompactLine.overflowed(header(3)), "step " + step);
            List<Integer> homes = model.stream().filter(slot -> CompactLine.isHomeOf(3, slot)).toList();
            int order = CompactLine.orderOf(header(3));
            assertEquals(homes.size(), CompactLine.lineLength(order), "step " + step);
            for (int k = 0; k < homes.size(); k++) {
                assertEquals(homes.get(homes.size() - 1 - k) & 7, CompactLine.positionAt(order, k), "step " + step);
            }
        }
    }

    @Test
    void thePoolFilterHoldsThePoolKeysAndIsRebuiltWhenOneLeaves() {
        for (int k = 0; k < CompactLine.HOME_SLOTS; k++) {
            addHome(1, 1000 + k);
        }
        int first = 7;
        int second = first + 1;
        while (CompactLine.poolFilterBit(table.filterMix(second)) == CompactLine.poolFilterBit(table.filterMix(first))) {
            second++;
        }
        addPool(1, first);
        addPool(1, second);
        assertTrue(CompactLine.poolMayHold(header(1), table.filterMix(first)));
        assertTrue(CompactLine.poolMayHold(header(1), table.filterMix(second)));
        remove(1, CompactLine.HOME_SLOTS); // the first pool entry
        assertFalse(CompactLine.poolMayHold(header(1), table.filterMix(first)), "rebuilt from the pool key left");
        assertTrue(CompactLine.poolMayHold(header(1), table.filterMix(second)));
    }

    @Test
    void aFreedHomeSlotRestsUntilTheRingGivesItBack() {
        int slot = addHome(2, 5);
        remove(2, 0);
        assertEquals(0, CompactSlots.lvMeta(table.metaPage(slot), table.metaIndex(slot)) & CompactSlots.COUNT_MASK);
        assertNotEquals(slot, freeHome(2), "resting: passed over");
        table.drainDelayRing();
        assertEquals(slot, freeHome(2), "given back: the lowest free position again");
    }

    @Test
    void whenThePoolIsSpentAFreeHomeSlotOfAnotherBucketServesAsAPoolSlot() {
        CompactTable small = new CompactTable(2, 1, KeyedIndex.seed(7L)); // one pool line: 7 pool slots
        List<Integer> pool = new ArrayList<>();
        for (int slot = small.allocate(); !small.isHome(slot); slot = small.allocate()) {
            pool.add(slot);
        }
        assertEquals(CompactLine.HOME_SLOTS, pool.size(), "the pool's one line, handed out first");
        int stolen = small.allocate();
        assertTrue(small.isHome(stolen), "a home slot, lent");
        long meta = CompactSlots.lvMeta(small.metaPage(stolen), small.metaIndex(stolen));
        assertNotEquals(0, meta & CompactTable.RESTING, "its own bucket passes it over meanwhile");
        small.freeUnused(stolen);
        meta = CompactSlots.lvMeta(small.metaPage(stolen), small.metaIndex(stolen));
        assertEquals(0, meta & CompactTable.RESTING, "given back to its bucket");
    }

    @Test
    void aSpentPoolLendsAFreeHomeSlotBeforeItReusesASlotFreedIntoTheRing() {
        CompactTable small = new CompactTable(2, 1, KeyedIndex.seed(7L)); // one pool line: 7 pool slots
        int freed = small.allocate();
        for (int i = 1; i < CompactLine.HOME_SLOTS; i++) {
            assertFalse(small.isHome(small.allocate()), "the pool first");
        }
        small.free(freed); // into the delay ring: a ring's length of frees before it is reused
        int next = small.allocate();
        assertTrue(small.isHome(next), "a free home slot of a bucket is lent, not the freed pool slot: " + next);
        assertEquals(1, small.drainDelayRing(), "the freed slot still in the ring");
    }

    @Test
    void aHomeSlotGivenBackAfterALookFoundNoneIsLentAgain() {
        CompactTable small = new CompactTable(2, 1, KeyedIndex.seed(7L)); // 7 pool slots, 14 home slots
        List<Integer> home = new ArrayList<>();
        for (int slot = small.allocate(); slot != 0; slot = small.allocate()) {
            if (small.isHome(slot)) {
                home.add(slot);
            }
        }
        assertEquals(2 * CompactLine.HOME_SLOTS, home.size(), "every home slot lent, then none left");
        assertEquals(0, small.allocate(), "every slot in use");
        small.freeUnused(home.get(3));
        assertEquals(home.get(3), small.allocate(), "given back: lent again");
    }

    @Test
    void aLentHomeSlotClaimedInItsBorrowersChainStaysOutOfItsOwnBucketsReachUntilTheRingGivesItBack() {
        CompactTable small = new CompactTable(2, 1, KeyedIndex.seed(7L)); // one pool line: 7 pool slots
        for (int i = 0; i < CompactLine.HOME_SLOTS; i++) {
            assertFalse(small.isHome(small.allocate()), "the pool first");
        }
        int lent = small.allocate();
        int owner = lent >>> 3;
        int borrower = 1 - owner;
        small.lock(borrower);
        try {
            small.ensureRoom(borrower, lent);
            CompactSlots.makeLive(small, lent, 42, 42, true,
                    CompactPoolTwins.twinOfNewEntry(small, borrower, lent, 42, small.filterMix(42)));
            small.addNewest(borrower, lent, small.filterMix(42));
            assertEquals(1, small.length(borrower));
            assertTrue(CompactLine.overflowed(small.laVersion(borrower)), "a lent slot is a pool entry of its borrower");
            long[] page = small.metaPage(lent);
            int at = small.metaIndex(lent);
            assertTrue(CompactSlots.tryClaim(small, lent, page, at, CompactSlots.lvMeta(page, at)));
            small.removeAt(borrower, 0);
            // Claimed and unhashed under the borrower's bit, not yet freed: the owner must not take it.
            small.lock(owner);
            try {
                assertNotEquals(lent, small.freeHomeSlot(owner), "claimed, not freed: not free to its own bucket");
            } finally {
                small.unlock(owner);
            }
            small.free(lent);
        } finally {
            small.unlock(borrower);
        }
        small.drainDelayRing();
        small.lock(owner);
        try {
            assertEquals(lent, small.freeHomeSlot(owner), "given back by the ring: its own bucket's again");
        } finally {
            small.unlock(owner);
        }
    }

    @Test
    void theKeyFilterCoversTheChainsKeysAndIsRebuiltFromTheLineWhenOneLeaves() {
        int kept = 11;
        int leaving = kept + 1;
        int bits = CompactLine.keyFilterBits(table.filterMix(kept));
        while ((CompactLine.keyFilterBits(table.filterMix(leaving)) & ~bits) == 0) {
            leaving++; // a key with a bit the kept one lacks
        }
        addHome(1, kept);
        addHome(1, leaving);
        assertTrue(table.keyFilterMayHold(1, table.filterMix(kept)));
        assertTrue(table.keyFilterMayHold(1, table.filterMix(leaving)));
        remove(1, 1); // the newer, leaving
        assertTrue(table.keyFilterMayHold(1, table.filterMix(kept)));
        assertFalse(table.keyFilterMayHold(1, table.filterMix(leaving)), "rebuilt from the line's keys");
    }

    @Test
    void anOverflowedChainsKeyFilterKeepsEveryKeyUntilItLeavesThePool() {
        for (int k = 0; k < CompactLine.HOME_SLOTS; k++) {
            addHome(2, 2000 + k);
        }
        addPool(2, 3000);
        remove(2, 0); // a home entry, while a pool entry is in the chain: the filter is left a superset
        assertTrue(table.keyFilterMayHold(2, table.filterMix(2000)));
        assertTrue(table.keyFilterMayHold(2, table.filterMix(3000)));
        remove(2, CompactLine.HOME_SLOTS - 1); // the pool entry: the chain is its line again, and the filter exact
        assertTrue(table.keyFilterMayHold(2, table.filterMix(2001)));
        int stale = CompactLine.keyFilterBits(table.filterMix(3000));
        int exact = 0;
        for (int k = 1; k < CompactLine.HOME_SLOTS; k++) {
            exact |= CompactLine.keyFilterBits(table.filterMix(2000 + k));
        }
        assertEquals((stale & ~exact) == 0, table.keyFilterMayHold(2, table.filterMix(3000)), "only the keys left");
    }

    @Test
    void orderListsDropAPositionAndKeepTheRest() {
        int order = 3 | 5 << 3 | 1 << 6 | 7 << 9; // newest first: 3, 5, 1, 7
        assertEquals(4, CompactLine.lineLength(order));
        assertEquals(5 | 1 << 3 | 7 << 6, CompactLine.withoutPosition(order, 3));
        assertEquals(3 | 1 << 3 | 7 << 6, CompactLine.withoutPosition(order, 5));
        assertEquals(3 | 5 << 3 | 1 << 6, CompactLine.withoutPosition(order, 7));
        assertEquals(0, CompactLine.lineLength(0));
        assertEquals(7, CompactLine.lineLength(CompactLine.ORDER_MASK));
    }

    @Test
    void aLinesKeyPositionsNameEveryHomeSlotWhoseWordHoldsTheKeyAndNeverTheHeader() {
        long[] page = new long[16];
        int base = 8; // the second line of the page
        int key = 0x1234_5678;
        page[base] = (long) key << 32; // a header whose upper half equals the key is not a slot
        page[base + 2] = CompactSlots.liveMeta(key, 3, true);
        page[base + 5] = CompactSlots.liveMeta(key + 1, 0, true);
        page[base + 7] = (long) key << 32; // a free word keeps its key and counts here: the walk's CAS decides
        assertEquals(1 << 2 | 1 << 7, CompactLine.keyPositions(page, base, key));
        assertEquals(1 << 5, CompactLine.keyPositions(page, base, key + 1));
        assertEquals(0, CompactLine.keyPositions(page, base, key + 2));
        assertEquals(0, CompactLine.keyPositions(page, 0, key), "another line's words are not read");
    }

    @Test
    void aPoolLookAheadLoadsThePoolEntriesOfAChainWhosePoolFilterLetsTheKeyThroughAndNothingElse() {
        for (int key = 0; key < CompactLine.HOME_SLOTS; key++) {
            addHome(2, key);
        }
        int pooled = 100;
        int other = pooled + 1;
        while (CompactLine.poolFilterBit(table.filterMix(other)) == CompactLine.poolFilterBit(table.filterMix(pooled))) {
            other++;
        }
        assertEquals(0, CompactWalk.poolRecordEntry(table, 2, pooled, table.filterMix(pooled)), "no pool entry yet");
        int pool = addPool(2, pooled);
        long poolMeta = CompactSlots.lvMeta(table.metaPage(pool), table.metaIndex(pool));
        int entry = CompactWalk.poolRecordEntry(table, 2, pooled, table.filterMix(pooled));
        assertEquals(table.records.lpEntry(2), entry);
        int[] record = table.records.laPage(entry);
        int base = CompactChainRecords.baseOf(entry, record);
        assertEquals(1 + pool, CompactWalk.touchRecord(table, entry), "the pool count and the first reference");
        assertEquals(poolMeta, CompactWalk.touchPoolEntries(table, entry));
        assertEquals(1, record[base + CompactChainRecords.POOL_COUNT]);
        assertEquals(0, CompactWalk.poolRecordEntry(table, 2, other, table.filterMix(other)), "the pool filter turns the key away");
        assertEquals(0, CompactWalk.poolRecordEntry(table, 3, pooled, table.filterMix(pooled)), "another bucket has no pool entries");
        assertEquals(0, CompactWalk.touchRecord(table, 0), "entry 0 names no record");
        assertEquals(0, CompactWalk.touchPoolEntries(table, 0), "entry 0 names no record");
    }

    @Test
    void aPoolLookAheadNeverFaultsOnARecordAWriterIsRewriting() {
        for (int key = 0; key < CompactLine.HOME_SLOTS; key++) {
            addHome(2, key);
        }
        int pool = addPool(2, 100);
        int entry = table.records.lpEntry(2);
        int[] record = table.records.laPage(entry);
        int count = CompactChainRecords.baseOf(entry, record) + CompactChainRecords.POOL_COUNT;
        long poolMeta = CompactSlots.lvMeta(table.metaPage(pool), table.metaIndex(pool));
        record[count] = Integer.MAX_VALUE; // beyond the record's capacity: read to its end
        assertEquals(poolMeta, CompactWalk.touchPoolEntries(table, entry));
        record[count] = -1;
        assertEquals(0, CompactWalk.touchPoolEntries(table, entry));
        record[count] = 1;
        int ref = CompactChainRecords.baseOf(entry, record) + CompactChainRecords.refBase(CompactChainRecords.capacityOf(record));
        for (int bogus : new int[] {-1, 0, table.end(), Integer.MAX_VALUE, (pool | 7) + 1}) {
            record[ref] = bogus; // not a slot below the pool's end: not followed
            assertEquals(0, CompactWalk.touchPoolEntries(table, entry), "reference " + bogus);
        }
        record[ref] = pool;
    }

    private int freeHome(int b) {
        table.lock(b);
        try {
            return table.freeHomeSlot(b);
        } finally {
            table.unlock(b);
        }
    }
}
