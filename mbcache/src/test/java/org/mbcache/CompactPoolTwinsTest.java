package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link CompactPoolTwins}: a home entry's {@link CompactSlots#POOL_TWIN} bit is set wherever a
 * pool entry of its chain has its key, so that a lookup which decides from the line alone (a live
 * word of the key without the bit) answers what the walk of the whole chain answers.
 */
class CompactPoolTwinsTest {

    /** One bucket: every key in one chain, seven in its line, the rest in the pool. */
    private final CompactMbCache cache = CompactMbCache.builder().bucketBits(0).maxEntries(1 << 10).chainCap(1 << 10)
            .executor(Runnable::run).build();
    private final CompactTable table = FreedSlots.tableOf(cache);

    @AfterEach
    void close() {
        cache.close();
    }

    private long metaOf(long handle) {
        int slot = CompactSlots.slotOf(handle);
        return CompactSlots.lvMeta(table.metaPage(slot), table.metaIndex(slot));
    }

    private long value(long handle) {
        long value = cache.value(handle);
        cache.release(handle);
        return value;
    }

    /** Fills the line with {@code key}'s pair and six others (keys 1000 up). */
    private void fillLineWith(int key, long value) {
        assertTrue(cache.create(key, value, true));
        for (int other = 1000; other < 1006; other++) {
            assertTrue(cache.create(other, other, true));
        }
    }

    @Test
    void aPoolEntryOfAKeyInTheLineMarksTheLinesEntryAndTheLookupFindsTheNewerPoolEntry() {
        fillLineWith(7, 1);
        assertTrue(cache.create(7, 2, true), "the line is full: a pool entry");
        long newest = cache.findFirstHandle(7);
        assertEquals(2, value(newest), "the newest pair of the key, in the pool");
        long home = cache.getHandle(7, 1);
        assertTrue(CompactLine.isHomeOf(0, CompactSlots.slotOf(home)));
        assertNotEquals(0, metaOf(home) & CompactSlots.POOL_TWIN, "the line's entry of the key is marked");
        long next = cache.findNextHandle(cache.findFirstHandle(7));
        assertEquals(1, value(next), "the older pair, in the line, after it");
        assertEquals(1, value(home));
    }

    @Test
    void aPoolEntryOfAKeyInTheLineIsFoundByPair() {
        fillLineWith(7, 1);
        assertTrue(cache.create(7, 2, true));
        assertFalse(cache.create(7, 2, true), "the pool pair is cached: a duplicate");
        assertEquals(2, value(cache.getHandle(7, 2)));
    }

    @Test
    void aHomeEntryOfAKeyThePoolHoldsIsMadeLiveMarked() {
        CompactTable bare = new CompactTable(4, 512, KeyedIndex.seed(7L));
        int key = 1;
        while (bare.bucketOf(key) != 2) {
            key++;
        }
        int pooled = add(bare, key, bare.allocate(), 10, true);
        int home = add(bare, key, 0, 20, false);
        assertTrue(CompactLine.isHomeOf(2, home));
        long meta = CompactSlots.lvMeta(bare.metaPage(home), bare.metaIndex(home));
        assertNotEquals(0, meta & CompactSlots.POOL_TWIN, "made live marked: the pool holds its key");
        assertFalse(CompactPoolTwins.lineHoldsEveryEntryOf(bare.linePage(2), bare.lineBase(2), key));
        long found = CompactWalk.find(bare, key, 0, false, 0, false);
        assertEquals(pooled, CompactSlots.slotOf(found), "the newest reusable pair is the pool's older one");
        long byPair = CompactWalk.find(bare, key, 10, true, 0, false);
        assertEquals(pooled, CompactSlots.slotOf(byPair));
    }

    /** A create's steps at the table: {@code slot} 0 takes a free home slot of the key's bucket. */
    private static int add(CompactTable bare, int key, int slot, long value, boolean reusable) {
        int b = bare.bucketOf(key);
        bare.lock(b);
        try {
            if (slot == 0) {
                slot = bare.freeHomeSlot(b);
            }
            bare.ensureRoom(b, slot);
            int mix = bare.filterMix(key);
            CompactSlots.makeLive(bare, slot, key, value, reusable, CompactPoolTwins.twinOfNewEntry(bare, b, slot, key, mix));
            bare.addNewest(b, slot, mix);
            return slot;
        } finally {
            bare.unlock(b);
        }
    }

    @Test
    void aLineEntryWhosePoolFilterBitAnotherKeySharesDecidesFromTheLine() {
        int pooled = 2000;
        while (CompactLine.poolFilterBit(table.filterMix(pooled)) != CompactLine.poolFilterBit(table.filterMix(7))) {
            pooled++;
        }
        fillLineWith(7, 1);
        assertTrue(cache.create(pooled, 3, true), "a pool entry whose filter bit is the line key's");
        assertTrue(CompactLine.poolMayHold(table.laVersion(0), table.filterMix(7)), "the pool filter lets 7 through");
        long home = cache.getHandle(7, 1);
        assertEquals(0, metaOf(home) & CompactSlots.POOL_TWIN, "no pool entry has key 7");
        cache.release(home);
        assertTrue(CompactPoolTwins.lineHoldsEveryEntryOf(table.linePage(0), table.lineBase(0), 7));
        assertEquals(0, CompactWalk.poolRecordEntry(table, 0, 7, table.filterMix(7)), "a batch leaves the pool alone");
        assertEquals(1, value(cache.findFirstHandle(7)));
        assertEquals(3, value(cache.findFirstHandle(pooled)));
    }

    @Test
    void aMarkLeftAfterItsPoolTwinLeftOnlySendsTheLookupThroughTheChain() {
        fillLineWith(7, 1);
        assertTrue(cache.create(7, 2, true));
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(7, 2), "deleted");
        long home = cache.getHandle(7, 1);
        assertNotEquals(0, metaOf(home) & CompactSlots.POOL_TWIN, "the mark stays");
        cache.release(home);
        assertFalse(CompactPoolTwins.lineHoldsEveryEntryOf(table.linePage(0), table.lineBase(0), 7));
        assertEquals(1, value(cache.findFirstHandle(7)));
    }

    @Test
    void aFreeWordOfTheKeyInTheLineDecidesNothing() {
        fillLineWith(7, 1);
        assertTrue(cache.create(7, 2, true), "a pool entry, marking the line's");
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(7, 1), "deleted: the line's word keeps the key, count zero");
        assertFalse(CompactPoolTwins.lineHoldsEveryEntryOf(table.linePage(0), table.lineBase(0), 7));
        assertEquals(2, value(cache.findFirstHandle(7)), "the pool's pair");
    }
}
