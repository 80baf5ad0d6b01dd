package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CompactMbCache}'s line reclaim: once the cache is at its bound, a create whose bucket's
 * line is full reclaims the line's oldest entry nobody holds (second chance and the three-refills
 * rule applied) and refills its slot, instead of taking a pool slot. One bucket (every key in it), seven home
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
    void aSlotIsRefilledInPlaceAtMostThreeTimesInARowBeforeItPassesThroughTheRing() {
        try (CompactMbCache cache = fullLineAtTheBound()) {
            int refills = CompactWalk.IN_PLACE_RUN * HOME_SLOTS;
            for (int key = 101; key <= 100 + refills; key++) {
                assertTrue(cache.create(key, key, true));
                assertEquals(HOME_SLOTS, cache.size(), "refilled in place");
            }
            assertEquals(refills, cache.stats().entriesReclaimed(), "every slot of the line refilled three times");
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
