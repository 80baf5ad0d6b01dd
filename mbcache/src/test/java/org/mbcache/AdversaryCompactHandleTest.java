package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Adversarial checks of {@link CompactMbCache}'s primitive handles: slot reuse in a nearly full
 * table, batches that fail part-way, refused strategies, over-releases of a saturated hot pair.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AdversaryCompactHandleTest {

    private static final int KEY = 0x5EED_CAFE;
    private static final long VALUE = 7;

    private static CompactMbCache cache(int bucketBits, long maxEntries) {
        return CompactMbCache.builder().bucketBits(bucketBits).maxEntries(maxEntries).executor(Runnable::run)
                .memoryPressureReclaim(false).hashSeed(42).build();
    }

    /**
     * When callers hold nearly every slot, every create drains the delay ring (the free list is
     * empty and no new slot is left): the drained slots must be handed out oldest first, so that
     * one key deleted and created in a loop still cycles through every free slot, and each slot's
     * generation advances once per that many pairs, not once per pair.
     */
    @Test
    void aKeyChurnedInANearlyFullTableCyclesThroughEveryFreeSlot() {
        try (CompactMbCache cache = cache(0, 128)) { // one bucket: 7 home slots, 518 pool slots, a ring of 128
            int usable = FreedSlots.capacity(cache);
            int free = 64; // fewer than the ring's places: every create drains it
            long[] held = new long[usable - free];
            for (int i = 0; i < held.length; i++) {
                assertTrue(cache.create(i + 1_000_000, i, true));
                held[i] = cache.getHandle(i + 1_000_000, i);
            }
            java.util.Set<Integer> slots = new java.util.HashSet<>();
            int[] lastUse = new int[FreedSlots.end(cache) + usable];
            java.util.Arrays.fill(lastUse, -1);
            int shortestReuse = Integer.MAX_VALUE;
            for (int cycle = 0; cycle < 10 * free; cycle++) {
                assertTrue(cache.create(KEY, VALUE, true), "cycle " + cycle);
                long holder = cache.getHandle(KEY, VALUE);
                int slot = CompactSlots.slotOf(holder);
                slots.add(slot);
                if (lastUse[slot] >= 0) {
                    shortestReuse = Math.min(shortestReuse, cycle - lastUse[slot]);
                }
                lastUse[slot] = cycle;
                cache.release(holder);
                assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE), "cycle " + cycle);
            }
            assertEquals(free, slots.size(), "the key's pairs went to every free slot");
            assertEquals(free, shortestReuse, "a slot is handed out again only after every other free slot");
            for (long h : held) {
                cache.release(h);
            }
        }
    }

    /**
     * findFirstHandles where the failing lookup is a repeat of a key found earlier in the batch
     * (one caller past the most a cold pair has, with the hot budget spent): every reference the batch took goes back.
     */
    @Test
    void aBatchThatSaturatesItsOwnEarlierKeyGivesBackEveryReference() {
        try (CompactMbCache cache = cache(4, 1024)) {
            List<Long> hot = HotEntries.spendHotBudget(cache, 0); // the cache's hot-mode budget spent
            assertTrue(cache.create(KEY, VALUE, true));
            assertTrue(cache.create(KEY + 1, VALUE, true));
            long handle = cache.getHandle(KEY, VALUE);
            for (int i = 1; i < CompactSlots.MAX_COLD_CALLERS - 2; i++) {
                assertEquals(handle, cache.getHandle(KEY, VALUE));
            }
            // Two callers short of the most now; the batch takes the last two, then fails on the next.
            int[] keys = {KEY + 1, KEY, 0, KEY, KEY + 1, KEY, KEY + 1};
            long[] handles = new long[keys.length + 1];
            handles[keys.length] = 12345;
            assertThrows(IllegalStateException.class, () -> cache.findFirstHandles(keys, handles));
            long[] expected = new long[keys.length + 1];
            Arrays.fill(expected, CompactMbCache.NO_ENTRY);
            expected[keys.length] = 12345;
            assertArrayEquals(expected, handles);
            for (int i = 0; i < CompactSlots.MAX_COLD_CALLERS - 2; i++) {
                cache.release(handle);
            }
            assertThrows(IllegalStateException.class, () -> cache.release(handle), "the batch leaked a reference");
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY + 1, VALUE), "KEY+1 leaked a reference");
            long zero = cache.deleteOrGetHandle(0, 0L); // key 0 is hot and held once by the test
            assertEquals(hot.get(0), zero);
            cache.release(zero);
            hot.forEach(cache::release);
            assertThrows(IllegalStateException.class, () -> cache.release(hot.get(0)), "key 0 leaked a reference");
        }
    }

    /** A refused create strategy changes nothing on the builder. */
    @Test
    void aRefusedCreateStrategyChangesNothing() {
        CompactMbCache.Builder builder = CompactMbCache.builder().bucketBits(3).memoryPressureReclaim(false);
        assertThrows(IllegalArgumentException.class, () -> builder.createStrategy(CreateStrategy.ALLOCATE_FIRST));
        assertThrows(NullPointerException.class, () -> builder.createStrategy(null));
        try (CompactMbCache cache = builder.build()) {
            assertEquals(CreateStrategy.REQUEST_LIST, cache.createStrategy());
            assertEquals(3, cache.bucketBits());
            assertEquals(64, cache.maxEntries());
            assertTrue(cache.create(1, 1, true));
            assertFalse(cache.create(1, 1, true));
        }
    }

    /**
     * A pair switched to hot mode at saturation (the count at its most in the word, later callers in cells),
     * its references given back on other threads than took them: the over-release after the last one
     * throws and leaves the cache's own reference, and nothing else, in place.
     */
    @Test
    void aSaturatedHotPairReleasedOnOtherThreadsDetectsTheOverRelease() throws Exception {
        try (CompactMbCache cache = cache(4, 1024)) {
            assertTrue(cache.create(KEY, VALUE, true));
            long handle = cache.getHandle(KEY, VALUE);
            for (int i = 1; i < 2_100; i++) {
                assertEquals(handle, cache.getHandle(KEY, VALUE));
            }
            assertTrue(HotEntries.isHot(cache, handle));
            Thread[] releasers = new Thread[3];
            for (int t = 0; t < releasers.length; t++) {
                releasers[t] = new Thread(() -> {
                    for (int i = 0; i < 700; i++) {
                        cache.release(handle);
                    }
                });
                releasers[t].start();
            }
            for (Thread releaser : releasers) {
                releaser.join();
            }
            assertThrows(IllegalStateException.class, () -> cache.release(handle), "2,100 taken, 2,100 given back");
            long again = cache.getHandle(KEY, VALUE);
            assertEquals(handle, again, "the cache's own reference survived the over-release");
            cache.release(again);
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, VALUE));
            assertEquals(0, cache.size());
            assertEquals(0, cache.hotSlots());
        }
    }
}
