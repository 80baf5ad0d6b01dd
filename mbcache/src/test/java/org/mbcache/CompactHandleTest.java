package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * {@link CompactMbCache}'s handles against misuse: a handle of another cache or a forged one is
 * refused ({@link CompactHandles}' tag and the slot range), a released one stays stale while its
 * slot is reused (the 17-bit generation and the delay ring, {@link CompactDelayRing}), the ring
 * loses no slot when the table is full, and a cold pair's count saturates into hot mode.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CompactHandleTest {

    private static final int KEY = 0x5EED_CAFE;
    private static final long VALUE = 7;

    /** A cache of the given size whose reclaim runs on the caller, with a fixed seed. */
    private static CompactMbCache cache(int bucketBits, long maxEntries) {
        return CompactMbCache.builder().bucketBits(bucketBits).maxEntries(maxEntries).executor(Runnable::run)
                .memoryPressureReclaim(false).hashSeed(42).build();
    }

    /** Every public method that takes a handle, called with {@code handle}. */
    private static List<Executable> handleMethods(CompactMbCache cache, long handle) {
        return List.of(
                () -> cache.release(handle),
                () -> cache.touch(handle),
                () -> cache.setReusable(handle, false),
                () -> cache.reusable(handle),
                () -> cache.key(handle),
                () -> cache.value(handle),
                () -> cache.findNextHandle(handle),
                () -> cache.waitUnused(handle),
                () -> cache.waitUnused(handle, 0, TimeUnit.SECONDS));
    }

    /**
     * Asserts that the pair is cached, reusable, and held by exactly one caller, whose handle is
     * {@code held}: that caller's release is accepted, and a {@code deleteOrGet} then removes it.
     */
    private static void assertHeldOnceAndDeletable(CompactMbCache cache, long held) {
        assertTrue(cache.reusable(held), "the reusable flag was left alone");
        long handedBack = cache.deleteOrGetHandle(KEY, VALUE);
        assertEquals(held, handedBack, "still held: handed back");
        cache.release(handedBack);
        cache.release(held); // the holder's reference is intact
        assertThrows(IllegalStateException.class, () -> cache.release(held), "exactly one reference was left");
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
        assertEquals(0, cache.size());
    }

    @Test
    void aHandleOfAnotherCacheIsRefusedByEveryHandleMethodAndSpendsNoReference() {
        try (CompactMbCache mine = cache(4, 1024); CompactMbCache other = cache(4, 1024)) {
            assertTrue(mine.create(KEY, VALUE, true));
            assertTrue(other.create(KEY, VALUE, true));
            long held = mine.getHandle(KEY, VALUE);
            long foreign = other.getHandle(KEY, VALUE);
            assertEquals(held & 0xFFFF_FFFF_FFFFL, foreign & 0xFFFF_FFFF_FFFFL, "same slot and generation");
            assertNotEquals(held, foreign, "told apart by the tag alone");
            for (Executable call : handleMethods(mine, foreign)) {
                IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, call);
                assertTrue(refused.getMessage().contains("not a handle of this cache: " + Long.toHexString(foreign)),
                        refused.getMessage());
            }
            CacheEntry otherEntry = other.get(KEY, VALUE);
            assertThrows(IllegalArgumentException.class, () -> mine.release(otherEntry));
            assertThrows(IllegalArgumentException.class, () -> mine.touch(otherEntry));
            assertHeldOnceAndDeletable(mine, held);
        }
    }

    @Test
    void aForgedHandleIsRefusedOrStaleAndNeverActsOnALivePair() {
        try (CompactMbCache cache = cache(4, 1024)) {
            assertTrue(cache.create(KEY + 1, 1, true));
            long gone = cache.getHandle(KEY + 1, 1);
            cache.release(gone);
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY + 1, 1)); // its slot is free
            assertTrue(cache.create(KEY, VALUE, true));
            long held = cache.getHandle(KEY, VALUE);
            long tag = held & CompactHandles.TAG_MASK;
            int end = FreedSlots.end(cache);
            List<Long> forged = new ArrayList<>(List.of(CompactMbCache.NO_ENTRY, 0L, (long) CompactSlots.slotOf(held), tag, tag | end,
                    tag | 0x7FFF_FFFFL, tag | 0xFFFF_FFFFL, held ^ 1L << 32, held + 1, (held & ~(long) CompactSlots.SLOT_MASK) | CompactSlots.slotOf(gone)));
            Random random = new Random(42);
            for (int i = 0; i < 2_000; i++) {
                forged.add(random.nextLong());
                forged.add(tag | (random.nextLong() & 0xFFFF_FFFF_FFFFL));
                forged.add(tag | (long) random.nextInt(CompactSlots.GENERATION_MASK + 1) << CompactSlots.HANDLE_GENERATION_SHIFT
                        | random.nextInt(end + 2));
            }
            for (long handle : forged) {
                if ((handle & 0xFFFF_FFFF_FFFFL) == (held & 0xFFFF_FFFF_FFFFL) && (handle & CompactHandles.TAG_MASK) == tag) {
                    continue; // that is the real handle, not a forged one
                }
                for (Executable call : handleMethods(cache, handle)) {
                    try {
                        call.execute();
                    } catch (IllegalArgumentException | IllegalStateException refusedOrStale) {
                        continue;
                    } catch (Throwable unexpected) {
                        throw new AssertionError("forged handle " + Long.toHexString(handle), unexpected);
                    }
                }
            }
            assertHeldOnceAndDeletable(cache, held);
        }
    }

    @Test
    void aHandleKeptAfterItsReleaseStaysStaleAcross200000CyclesOfOneKey() {
        try (CompactMbCache cache = cache(0, 1024)) {
            assertTrue(cache.create(KEY, VALUE, true));
            long stale = cache.getHandle(KEY, VALUE);
            cache.release(stale);
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
            int reused = 0;
            for (int cycle = 0; cycle < 200_000; cycle++) {
                assertTrue(cache.create(KEY, VALUE, true));
                long holder = cache.getHandle(KEY, VALUE);
                if (CompactSlots.slotOf(holder) == CompactSlots.slotOf(stale)) {
                    reused++;
                    assertNotEquals(stale, holder, "cycle " + cycle + ": the generation wrapped");
                    assertThrows(IllegalStateException.class, () -> cache.release(stale), "cycle " + cycle);
                    assertThrows(IllegalStateException.class, () -> cache.key(stale), "cycle " + cycle);
                    assertThrows(IllegalStateException.class, () -> cache.value(stale), "cycle " + cycle);
                }
                cache.release(holder); // the stale release spent none of it
                assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE), "cycle " + cycle);
            }
            assertTrue(reused >= 200_000 / (FreedSlots.ringSize(cache) + 1) - 1, "the slot was reused " + reused + " times");
        }
    }

    @Test
    void aLargeTableWithASmallBoundHoldsAFreedSlotBackForItsWholeRing() {
        try (CompactMbCache cache = CompactMbCache.builder().bucketBits(14).maxEntries(100).hashSeed(1)
                .executor(Runnable::run).memoryPressureReclaim(false).build()) {
            int bucket = cache.bucketOf(KEY);
            int[] keys = new int[CompactLine.HOME_SLOTS + 1];
            for (int k = KEY + 1, n = 0; n < keys.length; k++) {
                if (cache.bucketOf(k) == bucket) {
                    keys[n++] = k;
                }
            }
            for (int i = 0; i < CompactLine.HOME_SLOTS; i++) {
                assertTrue(cache.create(keys[i], 0, true)); // the line full: the cycling key goes to the pool
            }
            int ring = FreedSlots.ringSize(cache);
            assertEquals(8192, ring);
            int cycling = keys[CompactLine.HOME_SLOTS];
            Map<Integer, Integer> lastUse = new HashMap<>();
            for (int cycle = 0; cycle < 3 * ring; cycle++) {
                assertTrue(cache.create(cycling, cycle, true));
                long handle = cache.getHandle(cycling, cycle);
                Integer before = lastUse.put(CompactSlots.slotOf(handle), cycle);
                assertTrue(before == null || cycle - before > ring,
                        "slot " + CompactSlots.slotOf(handle) + " reused after " + (before == null ? 0 : cycle - before) + " frees");
                cache.release(handle);
                assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(cycling, cycle));
            }
        }
    }

    /** A slot of a new one-bucket table holding a claimed pair of {@code KEY} (count 0) of {@code generation}. */
    private static int claimedSlotOfGeneration(CompactTable table, int generation) {
        int slot = table.allocate();
        CompactSlots.soMeta(table.metaPage(slot), table.metaIndex(slot),
                CompactSlots.liveMeta(KEY, generation, false) & ~(long) CompactSlots.COUNT_MASK);
        return slot;
    }

    @Test
    void aFreeAdvancesTheGenerationThrough17BitsAndKeepsTheKeyAndTheSlot() {
        CompactTable table = new CompactTable(1, 512, KeyedIndex.seed(7L));
        int slot = claimedSlotOfGeneration(table, 0xFFFF);
        long[] page = table.metaPage(slot);
        int at = table.metaIndex(slot);
        table.free(slot);
        assertEquals(0x1_0000, CompactSlots.generation(CompactSlots.lvMeta(page, at)), "past 16 bits");
        long handle = CompactSlots.handleOf(slot, CompactSlots.lvMeta(page, at)) | table.handleTag;
        assertEquals(0x1_0000, CompactSlots.generationOf(handle));
        assertEquals(slot, CompactSlots.slotOf(handle));
        assertEquals(KEY, CompactSlots.keyOf(CompactSlots.lvMeta(page, at)), "the key is kept");
    }

    @Test
    void theGenerationWrapsAfter17BitsAndNeverReachesTheHandlesSlotOrTag() {
        CompactTable table = new CompactTable(1, 512, KeyedIndex.seed(7L));
        int slot = claimedSlotOfGeneration(table, 0x1_FFFF);
        long[] page = table.metaPage(slot);
        long last = CompactSlots.handleOf(slot, CompactSlots.lvMeta(page, table.metaIndex(slot))) | table.handleTag;
        assertEquals(0x1_FFFF, CompactSlots.generationOf(last));
        assertEquals(slot, CompactSlots.slotOf(last));
        assertEquals(table.handleTag, last & CompactHandles.TAG_MASK, "the generation stays below the tag");
        table.free(slot);
        assertEquals(0, CompactSlots.generation(CompactSlots.lvMeta(page, table.metaIndex(slot))), "wrapped");
    }

    @Test
    void aFullCacheKeepsCreatingAfterDeletesAndLosesNoSlotInTheRing() {
        try (CompactMbCache cache = cache(10, 1024)) {
            int usable = FreedSlots.capacity(cache);
            int live = usable - usable / 20; // a line's free home slots serve only its bucket: leave some room
            long[] held = new long[live];
            for (int i = 0; i < live; i++) {
                assertTrue(cache.create(i, i, true));
                held[i] = cache.getHandle(i, i);
            }
            for (int cycle = 0; cycle < 20 * FreedSlots.ringSize(cache); cycle++) {
                int i = cycle % live;
                int oldKey = cache.key(held[i]);
                cache.release(held[i]);
                assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(oldKey, oldKey), "cycle " + cycle);
                int key = live + cycle;
                assertTrue(cache.create(key, key, true), "cycle " + cycle);
                held[i] = cache.getHandle(key, key);
                assertEquals(key, cache.value(held[i]));
            }
            assertEquals(live, cache.size());
            assertEquals(usable - live, FreedSlots.freeSlots(cache), "free slots: on the list, in the ring, and at home");
            cache.checkChains();
            for (long handle : held) {
                cache.release(handle);
            }
        }
    }

    @Test
    void aColdPairHoldsItsMostCallersAndTheNextSwitchesItToHotMode() {
        int most = CompactSlots.MAX_COLD_CALLERS;
        assertEquals(510, most);
        try (CompactMbCache cache = cache(4, 1024)) {
            assertTrue(cache.create(KEY, VALUE, true));
            long handle = cache.getHandle(KEY, VALUE);
            for (int i = 1; i < most; i++) {
                assertEquals(handle, cache.getHandle(KEY, VALUE));
            }
            assertFalse(HotEntries.isHot(cache, handle), "the most callers: still cold");
            assertEquals(handle, cache.getHandle(KEY, VALUE), "one more");
            assertTrue(HotEntries.isHot(cache, handle), "one more switched it to hot mode");
            for (int i = 0; i < most + 1; i++) {
                cache.release(handle);
            }
            assertThrows(IllegalStateException.class, () -> cache.release(handle), "every reference was given back");
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
            assertEquals(0, cache.hotSlots());
        }
    }

    @Test
    void theNextCallerOfASaturatedColdPairIsRefusedWhenNoSlotCanGoHot() {
        try (CompactMbCache cache = cache(4, 1024)) {
            List<Long> hot = HotEntries.spendHotBudget(cache, 0); // the cache's hot-mode budget spent
            assertTrue(cache.create(KEY, VALUE, true));
            long handle = cache.getHandle(KEY, VALUE);
            for (int i = 1; i < CompactSlots.MAX_COLD_CALLERS; i++) {
                cache.getHandle(KEY, VALUE);
            }
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> cache.getHandle(KEY, VALUE));
            assertTrue(refused.getMessage().contains("too many references"), refused.getMessage());
            assertFalse(HotEntries.isHot(cache, handle));
            for (int i = 0; i < CompactSlots.MAX_COLD_CALLERS; i++) {
                cache.release(handle);
            }
            assertThrows(IllegalStateException.class, () -> cache.release(handle), "the refusal took no reference");
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
            hot.forEach(cache::release);
        }
    }
}
