package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CompactTable}'s key filters, driven directly on a quiet table whose references leave the
 * fingerprint 3 bits ({@code slotBits} 29, as a cache of about 10^8 entries): the filters take their
 * bits from the keyed hash, cover every key of the chain at every step, and are rebuilt exactly from
 * the keys left every {@link CompactTable#rebuildEvery}-th removal.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CompactTableKeyFilterTest {

    /** 32 - 29 = 3 fingerprint bits: one key in eight shares a given fingerprint. */
    private static final int SLOT_BITS = 29;
    private static final int SLOT_PAGE_BITS = 10;

    private static CompactTable table(int buckets) {
        return new CompactTable(buckets, SLOT_BITS, SLOT_PAGE_BITS, KeyedIndex.seed(42L));
    }

    /** A one-bucket table of the most slots a table has: two bits left above the length. */
    private static CompactTable widestTable() {
        return new CompactTable(1, 30, 14, KeyedIndex.seed(42L));
    }

    /** Fills a free slot with {@code key} (count 1) and hashes it as the newest of its chain; its slot. */
    private static int add(CompactTable table, int key) {
        int slot = table.allocate();
        long[] page = table.slotPage(slot);
        int at = table.valueIndex(slot);
        page[at] = key;
        CompactSlots.soMeta(page, at, (long) key << 32 | 1);
        int b = table.bucketOf(key);
        table.lock(b);
        try {
            table.ensureRoom(b);
            table.addNewest(b, table.fingerprintOf(key) | slot, table.filterMix(key));
        } finally {
            table.unlock(b);
        }
        return slot;
    }

    /** Claims {@code slot} (count 1 to 0), unhashes it and frees it, as deleteOrGet does. */
    private static void remove(CompactTable table, int key, int slot) {
        int b = table.bucketOf(key);
        long[] page = table.slotPage(slot);
        int at = table.valueIndex(slot);
        table.lock(b);
        try {
            assertTrue(CompactSlots.casMeta(page, at, (long) key << 32 | 1, (long) key << 32));
            table.removeAt(b, table.positionOf(b, slot));
        } finally {
            table.unlock(b);
        }
        table.free(slot);
    }

    private static boolean turnedAway(CompactTable table, int key) {
        int b = table.bucketOf(key);
        return table.turnsAway(b, table.laVersion(b), table.filterMix(key));
    }

    /** The two filters built from {@code keys}: the head word's bits, then the wide word. */
    private static long[] filtersOf(CompactTable table, Iterable<Integer> keys) {
        long head = 0;
        long wide = 0;
        for (int k : keys) {
            head |= CompactTable.filterBit(table.filterMix(k));
            wide |= CompactTable.wideFilterBits(table.filterMix(k));
        }
        return new long[] {head, wide};
    }

    /** Whether {@code filters} ({@link #filtersOf}) have every bit of {@code key}. */
    private static boolean covered(CompactTable table, long[] filters, int key) {
        int mix = table.filterMix(key);
        return (CompactTable.filterBit(mix) & ~filters[0]) == 0 && (CompactTable.wideFilterBits(mix) & ~filters[1]) == 0;
    }

    /** {@code count} keys of bucket {@code b} with fingerprint {@code print}, from {@code from} up. */
    private static List<Integer> keysOf(CompactTable table, int b, int print, int from, int count) {
        List<Integer> keys = new ArrayList<>();
        for (int key = from; keys.size() < count; key++) {
            if (table.bucketOf(key) == b && table.fingerprintOf(key) == print) {
                keys.add(key);
            }
        }
        return keys;
    }

    @Test
    void theFiltersAreAlwaysTheKeysOfTheChainAndThoseRemovedSinceTheLastRebuild() {
        int buckets = 4;
        int[] rebuiltAway = new int[1];
        for (long seed = 1; seed <= 6; seed++) { // the last two with 30 slot bits: a rebuild every fourth
            Random random = new Random(seed);
            CompactTable table = new CompactTable(buckets, seed <= 4 ? SLOT_BITS : 30, 14, KeyedIndex.seed(seed));
            List<Map<Integer, Integer>> chains = new ArrayList<>(); // key -> slot, per bucket
            List<Set<Integer>> stale = new ArrayList<>(); // removed since the bucket's last rebuild
            List<Set<Integer>> gone = new ArrayList<>(); // removed before that
            int[] removals = new int[buckets]; // since the bucket's last rebuild
            for (int b = 0; b < buckets; b++) {
                chains.add(new HashMap<>());
                stale.add(new LinkedHashSet<>());
                gone.add(new LinkedHashSet<>());
            }
            for (int step = 0; step < 3_000; step++) {
                int key = random.nextInt(1 << 12);
                int b = table.bucketOf(key);
                Map<Integer, Integer> chain = chains.get(b);
                boolean removing = chain.containsKey(key) || chain.size() >= 40
                        ? !chain.isEmpty() : chain.size() > 2 && random.nextInt(3) == 0;
                if (removing) {
                    List<Integer> present = new ArrayList<>(chain.keySet());
                    int victim = chain.containsKey(key) ? key : present.get(random.nextInt(present.size()));
                    remove(table, victim, chain.remove(victim));
                    gone.get(b).remove(victim);
                    stale.get(b).add(victim);
                    if (chain.isEmpty() || ++removals[b] == table.rebuildEvery) {
                        removals[b] = 0;
                        gone.get(b).addAll(stale.get(b));
                        stale.get(b).clear();
                    }
                } else {
                    stale.get(b).remove(key);
                    gone.get(b).remove(key);
                    chain.put(key, add(table, key));
                }
                for (int c = 0; c < buckets; c++) {
                    long at = seed << 32 | step;
                    checkBucket(table, c, chains.get(c).keySet(), stale.get(c), gone.get(c), rebuiltAway,
                            () -> "seed " + (at >>> 32) + " step " + (int) at);
                }
            }
        }
        assertTrue(rebuiltAway[0] > 100, "keys that left were turned away after rebuilds: " + rebuiltAway[0]);
    }

    private static void checkBucket(CompactTable table, int b, Set<Integer> present, Set<Integer> stale,
                                    Set<Integer> gone, int[] rebuiltAway, Supplier<String> where) {
        assertEquals(present.size(), table.length(b), () -> where.get() + ": bucket " + b + "'s length");
        for (int key : present) {
            assertFalse(turnedAway(table, key), () -> where.get() + ": chained key " + key + " turned away");
        }
        Set<Integer> covering = new HashSet<>(present);
        covering.addAll(stale);
        long[] filters = filtersOf(table, covering);
        for (int key : stale) {
            assertFalse(turnedAway(table, key), () -> where.get() + ": a removal without a rebuild changed the filters");
        }
        for (int key : gone) {
            boolean away = !covered(table, filters, key);
            assertEquals(away, turnedAway(table, key),
                    () -> where.get() + ": key " + key + " removed before the last rebuild");
            if (away) {
                rebuiltAway[0]++;
            }
        }
    }

    @Test
    void keysSharingOneFingerprintAreStillToldApartByTheFilters() {
        CompactTable table = table(64);
        int b = table.bucketOf(0x5EED);
        int print = table.fingerprintOf(0x5EED);
        List<Integer> keys = keysOf(table, b, print, 0x5EED, 14 + 4_000);
        List<Integer> chained = keys.subList(0, 14);
        for (int key : chained) {
            add(table, key);
        }
        for (int key : chained) {
            assertFalse(turnedAway(table, key));
        }
        int passed = 0;
        List<Integer> absent = keys.subList(14, keys.size());
        for (int key : absent) {
            if (!turnedAway(table, key)) {
                passed++;
            }
        }
        double rate = (double) passed / absent.size();
        assertTrue(rate < 0.25, "absent keys with the chain's fingerprint let through: " + rate + " (expected about 0.05)");
    }

    @Test
    void removalsBetweenRebuildsLeaveTheRemovedKeysBitsAndTheNextRebuildDropsThem() {
        assertEquals(8, table(1).rebuildEvery);
        removalsBetweenRebuildsLeaveTheRemovedKeysBits(table(1));
    }

    @Test
    void aTableOfThirtySlotBitsRebuildsOnEveryFourthRemoval() {
        CompactTable table = widestTable();
        assertEquals(4, table.rebuildEvery, "two bits above a 30-bit length count to 3");
        removalsBetweenRebuildsLeaveTheRemovedKeysBits(table);
    }

    private static void removalsBetweenRebuildsLeaveTheRemovedKeysBits(CompactTable table) {
        List<Integer> keys = new ArrayList<>();
        List<Integer> slots = new ArrayList<>();
        for (int key = 1; keys.size() < table.rebuildEvery + 12; key++) {
            keys.add(key);
            slots.add(add(table, key));
        }
        List<Integer> kept = keys.subList(table.rebuildEvery, keys.size());
        List<Integer> leaving = new ArrayList<>();
        for (int i = 0; i < table.rebuildEvery; i++) {
            remove(table, keys.get(i), slots.get(i));
            assertEquals(keys.size() - i - 1, table.length(0), "the length beside the removals counted");
            leaving.add(keys.get(i));
            for (int key : leaving) {
                boolean rebuilt = i == table.rebuildEvery - 1;
                assertEquals(rebuilt && !covered(table, filtersOf(table, kept), key), turnedAway(table, key),
                        "key " + key + " after " + (i + 1) + " removals");
            }
        }
        assertEquals(kept.size(), table.length(0));
    }

    @Test
    void theRemovalThatEmptiesAChainClearsItsFilters() {
        CompactTable table = table(1);
        int first = add(table, 7);
        int second = add(table, 8);
        remove(table, 8, second);
        assertFalse(turnedAway(table, 8), "one removal keeps the filters");
        remove(table, 7, first);
        assertEquals(0, table.length(0));
        for (int key = 0; key < 1_000; key++) {
            assertTrue(turnedAway(table, key), "key " + key + " in an emptied chain's filters");
        }
    }

    @Test
    void theChainsLengthLeavesOutTheRemovalsCounted() {
        CompactTable table = table(1);
        List<Integer> slots = new ArrayList<>();
        for (int key = 0; key < 20; key++) { // past the record's 15 inline references
            slots.add(add(table, key));
        }
        for (int key = 0; key < 20 - 1; key++) {
            remove(table, key, slots.get(key));
            assertEquals(20 - 1 - key, table.length(0), "after " + (key + 1) + " removals");
            assertEquals(slots.get(key + 1), table.slotOfRef(table.refAt(0, 0)), "the oldest left");
        }
        add(table, 100);
        assertEquals(2, table.length(0));
    }
}
