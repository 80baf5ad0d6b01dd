package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CompactMbCache}'s line reclaim: once the cache is at its bound, a create whose bucket's
 * line is full reclaims the line's oldest entry nobody holds (second chance and the in-place clock
 * applied) and refills its slot, instead of taking a pool slot. One bucket (every key in it), seven home
 * slots, line reclaim forced on (a table this small has it off), background passes never run (an
 * executor that drops them), so the count stays where the creates put it.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CompactLineReclaimTest {

    private static final int HOME_SLOTS = 7;
    /** Slot indices below this are the one bucket's home slots; the pool's are above. */
    private static final long FIRST_POOL_INDEX = 8;

    private static CompactMbCache oneLineCache(long maxEntries, boolean lineReclaim) {
        CompactMbCache.Builder builder = CompactMbCache.builder().maxEntries(maxEntries).hashSeed(42)
                .executor(task -> { }).memoryPressureReclaim(false);
        return new CompactMbCache(builder, 1, lineReclaim);
    }

    /** A line of keys 1..7 in a cache whose bound is 7: full, and at the bound. */
    private static CompactMbCache fullLineAtTheBound() {
        CompactMbCache cache = oneLineCache(HOME_SLOTS, true);
        for (int key = 1; key <= HOME_SLOTS; key++) {
            assertTrue(cache.create(key, key, true));
        }
        return cache;
    }

    private static boolean cached(CompactMbCache cache, int key) {
        long handle = cache.findFirstHandle(key);
        if (handle == CompactMbCache.NO_ENTRY) {
            return false;
        }
        cache.release(handle);
        return true;
    }

    private static long slotOf(long handle) {
        return CompactSlots.slotOf(handle);
    }

    @Test
    void aCreateAtTheBoundIntoAFullLineReclaimsItsOldestEntry() {
        try (CompactMbCache cache = fullLineAtTheBound()) {
            assertTrue(cache.create(100, 100, true));
            assertFalse(cached(cache, 1), "the oldest entry left");
            for (int key = 2; key <= HOME_SLOTS; key++) {
                assertTrue(cached(cache, key));
            }
            assertEquals(HOME_SLOTS, cache.size());
            assertEquals(1, cache.stats().entriesReclaimed());
            cache.checkChains();
        }
    }

    @Test
    void theNewPairTakesTheReclaimedSlotNotAPoolSlot() {
        try (CompactMbCache cache = fullLineAtTheBound()) {
            long oldest = cache.findFirstHandle(1);
            cache.release(oldest);
            assertTrue(cache.create(100, 100, true));
            long created = cache.findFirstHandle(100);
            assertEquals(slotOf(oldest), slotOf(created));
            assertTrue(slotOf(created) < FIRST_POOL_INDEX);
            cache.release(created);
        }
    }

    @Test
    void aReleasedHandleOfTheReclaimedPairReadsStale() {
        try (CompactMbCache cache = fullLineAtTheBound()) {
            long oldest = cache.findFirstHandle(1);
            cache.release(oldest);
            assertTrue(cache.create(100, 100, true));
            assertThrows(IllegalStateException.class, () -> cache.key(oldest));
            assertThrows(IllegalStateException.class, () -> cache.release(oldest));
            long created = cache.findFirstHandle(100);
            assertNotEquals(oldest, created, "the slot's generation moved");
            cache.release(created);
        }
    }

    @Test
    void aReferencedEntryGetsItsSecondChance() {
        try (CompactMbCache cache = fullLineAtTheBound()) {
            long oldest = cache.findFirstHandle(1);
            cache.touch(oldest);
            cache.release(oldest);
            assertTrue(cache.create(100, 100, true));
            assertTrue(cached(cache, 1), "the referenced oldest is passed over");
            assertFalse(cached(cache, 2), "the next oldest goes");
            assertTrue(cache.create(101, 101, true));
            assertFalse(cached(cache, 1), "its flag was cleared: the second chance is used up");
        }
    }

    @Test
    void aHeldEntryIsNeverReclaimedInItsLine() {
        try (CompactMbCache cache = fullLineAtTheBound()) {
            long held = cache.findFirstHandle(1);
            assertTrue(cache.create(100, 100, true));
            assertEquals(1, cache.key(held), "the holder's pair is still its slot's");
            assertFalse(cached(cache, 2), "the oldest unheld entry went instead");
            cache.release(held);
        }
    }

    @Test
    void aHeldReferencedEntryKeepsItsFlagForTheReclaimAfterItsRelease() {
        try (CompactMbCache cache = fullLineAtTheBound()) {
            long held = cache.findFirstHandle(1);
            cache.touch(held);
            assertTrue(cache.create(100, 100, true)); // 1 passed over as held: 2 goes
            assertFalse(cached(cache, 2));
            cache.release(held);
            assertTrue(cache.create(101, 101, true)); // 1's touch unspent: passed over again, 3 goes
            assertTrue(cached(cache, 1), "the touch was spent while the entry could not be reclaimed");
            assertFalse(cached(cache, 3));
        }
    }

    /** Creates keys 101 up until every slot of the full line was refilled in place three times; their number. */
    private static int spendTheLinesRefills(CompactMbCache cache) {
        int refills = (CompactDelayRing.EPOCH_GENERATIONS - 1) * HOME_SLOTS;
        for (int key = 101; key <= 100 + refills; key++) {
            assertTrue(cache.create(key, key, true));
            assertEquals(HOME_SLOTS, cache.size(), "refilled in place");
        }
        assertEquals(refills, cache.stats().entriesReclaimed(), "every slot of the line refilled three times");
        return refills;
    }

    /** A pool pair created and deleted {@code times} times: each a free through the ring. */
    private static void freeThroughTheRing(CompactMbCache cache, int times) {
        for (int i = 0; i < times; i++) {
            assertTrue(cache.create(200, i, true));
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(200, i));
        }
    }

    /** The delay ring of {@code cache}'s table, which keeps the in-place clock. */
    private static CompactDelayRing delayRingOf(CompactMbCache cache) {
        try {
            Field table = CompactMbCache.class.getDeclaredField("table");
            table.setAccessible(true);
            Field ring = CompactTable.class.getDeclaredField("delayRing");
            ring.setAccessible(true);
            return (CompactDelayRing) ring.get(table.get(cache));
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    /** The reuses in an epoch of this cache's in-place clock. */
    private static int epoch(CompactMbCache cache) {
        return CompactDelayRing.EPOCH_RINGS * FreedSlots.ringSize(cache);
    }

    @Test
    void aSlotWithinItsEpochIsRefilledInPlaceUpToTheEpochsLastGeneration() {
        try (CompactMbCache cache = fullLineAtTheBound()) {
            int refills = spendTheLinesRefills(cache);
            assertTrue(cache.create(200, 200, true));
            assertEquals(refills, cache.stats().entriesReclaimed(), "nothing more reclaimed");
            assertEquals(HOME_SLOTS + 1, cache.size(), "no slot left to refill: the pool");
            long created = cache.findFirstHandle(200);
            assertTrue(slotOf(created) >= FIRST_POOL_INDEX, "a pool slot");
            cache.release(created);
            cache.checkChains();
        }
    }

    @Test
    void aSlotsInPlaceBudgetComesBackOnceTheCacheHasReusedAnEpochOfSlots() {
        try (CompactMbCache cache = fullLineAtTheBound()) {
            int refills = spendTheLinesRefills(cache);
            int untilTheEpoch = epoch(cache) - refills;
            freeThroughTheRing(cache, untilTheEpoch - 1);
            assertTrue(cache.create(300, 300, true));
            assertEquals(refills, cache.stats().entriesReclaimed(), "one reuse short of the epoch: the pool");
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(300, 300));
            assertTrue(cache.create(301, 301, true));
            assertEquals(refills + 1, cache.stats().entriesReclaimed(), "the epoch's reuses done: the line reclaims again");
            assertEquals(HOME_SLOTS, cache.size(), "refilled in place");
            long created = cache.findFirstHandle(301);
            assertTrue(slotOf(created) < FIRST_POOL_INDEX, "a home slot");
            cache.release(created);
            cache.checkChains();
        }
    }

    @Test
    void aSlotEpochsBehindIsRefilledOneGenerationAtATimeUntilItCatchesUp() {
        try (CompactMbCache cache = fullLineAtTheBound()) {
            int refills = spendTheLinesRefills(cache); // every slot at generation 3
            CompactDelayRing clock = delayRingOf(cache);
            for (int i = refills; i < 2 * epoch(cache); i++) { // as refills in other lines would
                clock.countRefill();
            }
            // Epoch 2 owns generations 8-11: each slot, at 3, takes 4 to 11 (eight refills) and waits, unless the
            // refills themselves end the epoch.
            int catchUp = 8 * HOME_SLOTS;
            for (int key = 1_000; key < 1_000 + catchUp; key++) {
                assertTrue(cache.create(key, key, true));
                assertEquals(HOME_SLOTS, cache.size(), "refilled in place");
            }
            assertEquals(refills + catchUp, cache.stats().entriesReclaimed());
            assertTrue(cache.create(2_000, 2_000, true));
            assertEquals(HOME_SLOTS + 1, cache.size(), "caught up with the epoch's last generation: the pool");
            cache.checkChains();
        }
    }

    @Test
    void aCacheTurnedOverAtItsBoundKeepsRefillingInItsLinesInsteadOfGrowingItsPool() {
        // A cache sized as users size it (2^14 buckets and more: line reclaim on), background passes as users run them.
        int maxEntries = 100_000;
        try (CompactMbCache cache = CompactMbCache.builder().maxEntries(maxEntries).hashSeed(3).executor(Runnable::run)
                .memoryPressureReclaim(false).build()) {
            int key = 0;
            for (; key < 2 * maxEntries; key++) { // filled, and turned over once
                cache.create(key, key, true);
            }
            int afterOneTurnover = FreedSlots.end(cache);
            for (; key < 12 * maxEntries; key++) {
                cache.create(key, key, true);
            }
            int grown = FreedSlots.end(cache) - afterOneTurnover;
            // About 20 where a pass gives the home slots it frees straight back to their buckets; about 6,300 where
            // they rested in the delay ring (a create into a line a pass had just swept took a pool slot); about 20,000
            // where a slot's in-place budget came back only when a pass freed the slot.
            assertTrue(grown < maxEntries / 100, () -> "ten more turnovers handed out " + grown + " more slots");
            cache.checkChains();
        }
    }

    @Test
    void twoKeysCreatedInTurnInOneLineDoNotWrapAReleasedHandle() {
        // A cache sized as users size it, line reclaim on by default; two keys that share a bucket.
        try (CompactMbCache cache = CompactMbCache.builder().maxEntries(100_000).hashSeed(1).executor(Runnable::run)
                .memoryPressureReclaim(false).build()) {
            int first = 7;
            int second = 8;
            while (cache.bucketOf(second) != cache.bucketOf(first)) {
                second++;
            }
            for (int key = 1_000_000; key < 1_200_000; key++) { // at the bound
                cache.create(key, key, true);
            }
            assertTrue(cache.create(first, -1, true));
            long released = cache.getHandle(first, -1);
            cache.release(released);
            boolean wentStale = false;
            // Past the 458,752 rounds (7 x 2^17 creates, two a round) in which refills in place alone would wrap
            // the line's slots.
            for (long value = 0; value < 600_000; value++) {
                cache.create(first, value, true);
                cache.create(second, value, true);
                boolean stale = isStale(cache, released);
                assertFalse(wentStale && !stale, () -> "a released handle of a pair that left reads the pair "
                        + cache.key(released) + "/" + cache.value(released));
                wentStale |= stale;
            }
            assertTrue(wentStale, "its pair left the cache");
        }
    }

    private static boolean isStale(CompactMbCache cache, long released) {
        try {
            cache.key(released);
            return false;
        } catch (IllegalStateException stale) {
            return true;
        }
    }

    @Test
    void aLineWithASlotRestingInTheDelayRingIsNotFullAndOverflowsIntoThePool() {
        try (CompactMbCache cache = oneLineCache(16, true)) {
            for (int key = 1; key <= 17; key++) { // the 17th finds the bound and reclaims key 1 in the line
                assertTrue(cache.create(key, key, true));
            }
            assertEquals(1, cache.stats().entriesReclaimed());
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(2, 2), "a home slot freed: resting");
            assertTrue(cache.create(100, 100, true));
            assertEquals(1, cache.stats().entriesReclaimed(), "six entries and a resting slot: nothing reclaimed");
            assertEquals(16, cache.size());
            cache.checkChains();
        }
    }

    @Test
    void belowTheBoundAFullLineOverflowsIntoThePool() {
        try (CompactMbCache cache = oneLineCache(2 * HOME_SLOTS, true)) {
            for (int key = 1; key <= HOME_SLOTS + 1; key++) {
                assertTrue(cache.create(key, key, true));
            }
            for (int key = 1; key <= HOME_SLOTS + 1; key++) {
                assertTrue(cached(cache, key), "nothing reclaimed below the bound");
            }
            assertEquals(0, cache.stats().entriesReclaimed());
        }
    }

    @Test
    void aTableWithoutLineReclaimOverflowsAtTheBoundToo() {
        try (CompactMbCache cache = oneLineCache(HOME_SLOTS, false)) {
            for (int key = 1; key <= HOME_SLOTS + 1; key++) {
                assertTrue(cache.create(key, key, true));
            }
            assertEquals(HOME_SLOTS + 1, cache.size());
            assertTrue(cached(cache, 1));
        }
    }

    @Test
    void lineReclaimStopsOnceTheCountFallsAnEighthBelowTheBound() {
        try (CompactMbCache cache = oneLineCache(16, true)) {
            for (int key = 1; key <= 16; key++) { // the bound: line reclaim from here
                assertTrue(cache.create(key, key, true));
            }
            cache.shrink(Long.MAX_VALUE); // far below the bound
            for (int key = 101; key <= 101 + HOME_SLOTS; key++) {
                assertTrue(cache.create(key, key, true));
            }
            for (int key = 101; key <= 101 + HOME_SLOTS; key++) {
                assertTrue(cached(cache, key), "the eighth create went to the pool");
            }
        }
    }

    @Test
    void lineReclaimGoesOnWithinAnEighthBelowTheBound() {
        try (CompactMbCache cache = oneLineCache(16, true)) {
            for (int key = 1; key <= 17; key++) { // seven in the line, nine in the pool; the 17th finds the bound
                assertTrue(cache.create(key, key, true));
            }
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(16, 16), "a pool entry: the line stays full");
            assertEquals(15, cache.size(), "within an eighth of 16");
            long reclaimedBefore = cache.stats().entriesReclaimed();
            for (int key = 101; key <= 101 + HOME_SLOTS; key++) {
                assertTrue(cache.create(key, key, true));
            }
            assertTrue(cache.stats().entriesReclaimed() > reclaimedBefore, "creates into the full line reclaimed in it");
            cache.checkChains();
        }
    }

    @Test
    void aRestoreNeverReclaimsInALine() throws Exception {
        try (CompactMbCache source = oneLineCache(16, false);
             CompactMbCache target = oneLineCache(16, true)) {
            assertTrue(source.create(1_000, 1_000, true));
            ByteArrayOutputStream snapshot = new ByteArrayOutputStream();
            source.writeSnapshot(snapshot);
            for (int key = 1; key <= 17; key++) { // the 17th finds the bound: line reclaim on
                assertTrue(target.create(key, key, true));
            }
            assertEquals(1, target.shrink(1), "room for the restore, the count within an eighth of the bound");
            List<Integer> cachedBefore = new ArrayList<>();
            for (int key = 1; key <= 17; key++) {
                if (cached(target, key)) {
                    cachedBefore.add(key);
                }
            }
            long reclaimedBefore = target.stats().entriesReclaimed();
            assertEquals(1, target.readSnapshot(new ByteArrayInputStream(snapshot.toByteArray())));
            for (int key : cachedBefore) {
                assertTrue(cached(target, key), "what the target cached stays");
            }
            assertTrue(cached(target, 1_000));
            assertEquals(reclaimedBefore, target.stats().entriesReclaimed());
        }
    }
}
