package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the compact layout adds to the hot mode ({@link HotReferences}) that {@link HotModeTest} runs
 * on both layouts: the primitive handle API on a hot slot (a handle taken on one thread and released
 * on another, over-release refused), slot reuse (a hot slot's cells never outlive its pair: a
 * deleted or reclaimed hot slot comes back cold, its old handle dead), and the one entry object of a
 * hot slot whichever thread looks it up.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CompactHotSlotTest {
    private static final int KEY = 7;
    private static final long VALUE = 70;

    private CompactMbCache cache;
    private OtherThread other;

    @BeforeEach
    void setUp() {
        cache = CompactMbCache.builder().bucketBits(0).maxEntries(1 << 12).executor(Runnable::run).build();
        other = new OtherThread();
    }

    @AfterEach
    void tearDown() {
        other.close();
        cache.close();
    }

    /** The pair, cached and switched to hot mode; nobody holds it. Its handle. */
    private long hotPair() {
        assertTrue(cache.create(KEY, VALUE, true));
        long handle = cache.getHandle(KEY, VALUE);
        assertTrue(HotEntries.makeHot(cache, handle));
        cache.release(handle);
        return handle;
    }

    @Test
    void aReclaimsClaimPassesOverAHotSlotTouchedSinceItsLookAsOverACold() throws Exception {
        for (boolean hot : new boolean[] {false, true}) {
            assertTrue(cache.create(KEY, VALUE, true));
            long handle = cache.getHandle(KEY, VALUE);
            if (hot) {
                assertTrue(HotEntries.makeHot(cache, handle));
            }
            cache.release(handle);
            CompactTable table = FreedSlots.tableOf(cache);
            int slot = CompactSlots.slotOf(handle);
            long[] page = table.metaPage(slot);
            int at = table.metaIndex(slot);
            long seen = CompactSlots.lvMeta(page, at); // the pass's look: unheld, not referenced
            assertEquals(0, seen & CompactSlots.REFERENCED);
            long holder = cache.getHandle(KEY, VALUE); // then a holder touches it and lets go
            cache.touch(holder);
            cache.release(holder);
            int bucket = table.bucketOf(KEY);
            table.lock(bucket);
            try {
                assertFalse(CompactSlots.tryClaim(table, slot, page, at, seen, true), (hot ? "hot" : "cold") + " slot claimed");
            } finally {
                table.unlock(bucket);
            }
            assertEquals(1, cache.size());
            assertNull(cache.deleteOrGet(KEY, VALUE), "unheld: deleted");
        }
    }

    @Test
    void aHandleTakenOnOneThreadIsReleasedOnAnother() throws Exception {
        long handle = hotPair();
        List<Long> taken = other.call(() -> {
            List<Long> refs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                refs.add(cache.getHandle(KEY, VALUE));
            }
            return refs;
        });
        for (long ref : taken) {
            assertEquals(handle, ref);
            cache.release(ref);
        }
        assertThrows(IllegalStateException.class, () -> cache.release(handle));
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
        assertEquals(0, cache.hotSlots());
    }

    @Test
    void overReleaseOfAHotHandleIsRefusedAndChangesNothing() throws Exception {
        long handle = hotPair();
        long held = cache.getHandle(KEY, VALUE);
        long second = other.call(() -> cache.getHandle(KEY, VALUE));
        cache.release(held);
        other.run(() -> cache.release(second));
        assertThrows(IllegalStateException.class, () -> cache.release(held));
        assertThrows(IllegalStateException.class, () -> other.run(() -> cache.release(held)));
        // Nothing changed: the pair is cached, one new reference is exactly one.
        long again = cache.getHandle(KEY, VALUE);
        assertEquals(handle, again);
        assertEquals(handle, cache.deleteOrGetHandle(KEY, VALUE)); // held: handed over
        cache.release(again);
        cache.release(handle);
        assertThrows(IllegalStateException.class, () -> cache.release(handle));
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
        assertThrows(IllegalStateException.class, () -> cache.release(handle)); // dead
    }

    @Test
    void aDeletedHotSlotIsReusedColdWithoutCells() {
        long old = hotPair();
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
        assertEquals(0, cache.hotSlots());
        FreedSlots.reuseNext(cache); // out of the delay ring: the free list hands the same slot back
        assertTrue(cache.create(KEY, VALUE + 1, true));
        long fresh = cache.getHandle(KEY, VALUE + 1);
        assertEquals(CompactSlots.slotOf(old), CompactSlots.slotOf(fresh), "the slot was reused");
        assertNotEquals(old, fresh);
        assertFalse(HotEntries.isHot(cache, fresh));
        assertFalse(HotEntries.isHot(cache, old));
        assertThrows(IllegalStateException.class, () -> cache.release(old));
        cache.release(fresh);
        assertThrows(IllegalStateException.class, () -> cache.release(fresh)); // exact: cold count 1
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE + 1));
    }

    @Test
    void aReclaimedHotSlotIsReusedColdWithoutCells() {
        long old = hotPair();
        cache.shrink(Long.MAX_VALUE);
        cache.shrink(Long.MAX_VALUE);
        assertEquals(0, cache.size());
        assertEquals(0, cache.hotSlots());
        FreedSlots.reuseNext(cache); // out of the delay ring: the free list hands the same slot back
        assertTrue(cache.create(KEY + 1, VALUE, true));
        long fresh = cache.getHandle(KEY + 1, VALUE);
        assertEquals(CompactSlots.slotOf(old), CompactSlots.slotOf(fresh), "the slot was reused");
        assertFalse(HotEntries.isHot(cache, fresh));
        assertTrue(HotEntries.makeHot(cache, fresh)); // and may become hot afresh, with new cells
        assertEquals(1, cache.hotSlots());
        cache.release(fresh);
        assertThrows(IllegalStateException.class, () -> cache.release(fresh));
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY + 1, VALUE));
        assertEquals(0, cache.hotSlots());
    }

    @Test
    void entryObjectsOfAHotSlotAreTheSameObject() throws Exception {
        hotPair();
        CacheEntry mine = cache.get(KEY, VALUE);
        CacheEntry theirs = other.call(() -> cache.get(KEY, VALUE));
        assertEquals(mine, theirs);
        assertTrue(HotEntries.isHot(mine));
        cache.release(theirs);
        cache.release(mine);
        assertThrows(IllegalStateException.class, () -> cache.release(mine));
        assertNull(cache.deleteOrGet(KEY, VALUE));
    }
}
