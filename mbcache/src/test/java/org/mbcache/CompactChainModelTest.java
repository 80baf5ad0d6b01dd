package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mbcache.internal.Snapshots;

/**
 * Random operation sequences on tiny compact tables (one to four buckets, chain caps from 1 to none,
 * chains past their line's seven home slots into the pool and back, with and without reclaim
 * passes) against a model of the cached pairs: after every step the
 * pairs a snapshot lists (a walk of the slots) are the model's, no pair is cached twice, every cached
 * pair is found by {@code get} and refused by {@code create}, and the chains check out.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CompactChainModelTest {

    static final long NO = CompactMbCache.NO_ENTRY;

    static long pair(int key, long value) {
        return ((long) key << 32) | (value & 0xFFFF_FFFFL);
    }

    /** The cache's pairs from its snapshot (a walk of the slots, not of chains or filters); duplicates fail. */
    static Map<Long, Boolean> actual(CompactMbCache cache) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            cache.writeSnapshot(out);
            Map<Long, Boolean> pairs = new HashMap<>();
            List<String> dups = new ArrayList<>();
            Set<String> full = new HashSet<>();
            Snapshots.readChecked(new ByteArrayInputStream(out.toByteArray()), Long.MAX_VALUE).createNewest(Long.MAX_VALUE, (k, v, r) -> {
                pairs.put(pair(k, v), r);
                if (!full.add(k + "/" + v)) {
                    dups.add(k + "/" + v);
                }
                return true;
            });
            assertTrue(dups.isEmpty(), () -> "duplicate pairs cached: " + dups);
            return pairs;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void everyStepLeavesExactlyTheModelsPairsFindableAndNoneTwice() {
        int configs = 0;
        int crossings = 0;
        for (int bucketBits = 0; bucketBits <= 2; bucketBits++) {
            for (int chainCap : new int[] {1, 3, 16, 100_000}) {
                for (boolean shrinking : new boolean[] {false, true}) {
                    for (long seed = 1; seed <= 2; seed++) {
                        crossings += run(bucketBits, chainCap, shrinking,
                                seed * 1000 + bucketBits * 100 + chainCap % 97 + (shrinking ? 7 : 0),
                                seed == 1 ? 1 << 14 : 1L << 28, false);
                        configs++;
                    }
                }
            }
        }
        assertEquals(3 * 4 * 2 * 2, configs);
        assertTrue(crossings >= 100, "chains crossed their line's " + CompactLine.HOME_SLOTS + " home slots, up or down, "
                + crossings + " times");
    }

    @Test
    void withLineReclaimAtTheBoundEveryStepLeavesOnlyTheModelsPairsAndNoneTwice() {
        for (int bucketBits = 0; bucketBits <= 1; bucketBits++) {
            for (int chainCap : new int[] {3, 100_000}) {
                for (long maxEntries : new long[] {6, 20}) {
                    for (long seed = 1; seed <= 2; seed++) {
                        run(bucketBits, chainCap, seed == 2, seed * 7919 + bucketBits * 31 + maxEntries + chainCap % 89,
                                maxEntries, true);
                    }
                }
            }
        }
        // Such a cache reclaims in its lines: at its bound (7, one line) and below twice it (no pass
        // runs), each create of seven new keys reclaims in the full line.
        try (CompactMbCache cache = new CompactMbCache(CompactMbCache.builder().maxEntries(7).hashSeed(1)
                .executor(task -> { }), 1, true)) {
            for (int key = 0; key < 14; key++) {
                assertTrue(cache.create(key * 0x9E3779B1, key, true));
            }
            assertEquals(7, cache.stats().entriesReclaimed(), "line reclaims");
            assertEquals(7, cache.size());
        }
    }

    /**
     * One random sequence (with {@code lineReclaim}, a cache that reclaims in lines whatever its
     * size); returns how many times a step moved the chain of its key's bucket across
     * its line's home slots (from at most {@link CompactTable#HOME_SLOTS} entries to more, or back).
     */
    private static int run(int bucketBits, int chainCap, boolean shrinking, long seed, long maxEntries, boolean lineReclaim) {
        Random random = new Random(seed);
        int keys = 3 + random.nextInt(40);
        int values = 1 + random.nextInt(6);
        boolean exact = !shrinking && chainCap >= 100_000 && !lineReclaim;
        String where0 = "maxEntries " + maxEntries + " bucketBits " + bucketBits + " chainCap " + chainCap + " shrinking " + shrinking + " seed " + seed;
        CompactMbCache.Builder builder = CompactMbCache.builder().maxEntries(maxEntries).chainCap(chainCap).hashSeed(seed)
                .executor(Runnable::run);
        try (CompactMbCache cache = new CompactMbCache(builder, 1L << bucketBits, lineReclaim)) {
            Map<Long, Boolean> model = new HashMap<>();
            List<Long> held = new ArrayList<>();
            Map<Long, Integer> heldPairs = new HashMap<>();
            int crossings = 0;
            for (int step = 0; step < 800; step++) {
                String where = where0 + " step " + step;
                int key = random.nextInt(keys) * 0x9E3779B1;
                boolean wasInline = cache.chainLength(key) <= CompactLine.HOME_SLOTS;
                long value = random.nextInt(values);
                long p = pair(key, value);
                int op = random.nextInt(100);
                if (op < 40) {
                    boolean reusable = random.nextInt(4) != 0;
                    boolean created = cache.create(key, value, reusable);
                    // At the bound the create's own pass may reclaim the pair first (never a held one).
                    if (cache.size() < maxEntries - 1 || heldPairs.containsKey(p) || !model.containsKey(p)) {
                        assertEquals(!model.containsKey(p), created, () -> where + ": create of " + Long.toHexString(p));
                    }
                    if (created) {
                        model.put(p, reusable);
                    }
                } else if (op < 65) {
                    long h = cache.deleteOrGetHandle(key, value);
                    if (h == NO) {
                        assertFalse(heldPairs.containsKey(p), () -> where + ": deleteOrGet removed a held pair");
                        model.remove(p);
                    } else {
                        assertTrue(model.containsKey(p), where);
                        hold(held, heldPairs, cache, h);
                    }
                } else if (op < 75) {
                    long h = cache.getHandle(key, value);
                    assertEquals(model.containsKey(p), h != NO, () -> where + ": get of " + Long.toHexString(p));
                    if (h != NO) {
                        hold(held, heldPairs, cache, h);
                    }
                } else if (op < 82) {
                    Set<Long> found = new HashSet<>();
                    long h = cache.findFirstHandle(key);
                    while (h != NO) {
                        assertTrue(found.add(cache.value(h)), where);
                        h = cache.findNextHandle(h);
                    }
                    Set<Long> expected = new HashSet<>();
                    for (long v = 0; v < values; v++) {
                        if (Boolean.TRUE.equals(model.get(pair(key, v)))) {
                            expected.add(v);
                        }
                    }
                    assertEquals(expected, found, () -> where + ": findFirst/findNext of key " + key);
                } else if (op < 92) {
                    if (!held.isEmpty()) {
                        long h = held.remove(random.nextInt(held.size()));
                        long hp = pair(cache.key(h), cache.value(h));
                        if (random.nextBoolean()) {
                            boolean r = random.nextBoolean();
                            cache.setReusable(h, r);
                            if (model.containsKey(hp)) {
                                model.put(hp, r);
                            }
                        }
                        if (random.nextBoolean()) {
                            cache.touch(h);
                        }
                        cache.release(h);
                        heldPairs.merge(hp, -1, (a, b) -> a + b == 0 ? null : a + b);
                    }
                } else if (shrinking) {
                    cache.shrink(random.nextInt(6));
                }
                Map<Long, Boolean> now = actual(cache);
                if (exact) {
                    assertEquals(model, now, () -> where + ": the pairs");
                } else {
                    for (Long q : now.keySet()) {
                        assertTrue(model.containsKey(q), () -> where + ": a pair from nowhere " + Long.toHexString(q));
                    }
                    for (Long q : heldPairs.keySet()) {
                        if (model.containsKey(q)) {
                            assertTrue(now.containsKey(q), () -> where + ": a held pair was reclaimed");
                        }
                    }
                    model.keySet().retainAll(now.keySet());
                    for (Map.Entry<Long, Boolean> e : now.entrySet()) {
                        assertEquals(model.get(e.getKey()), e.getValue(), where + " reusable flag");
                    }
                }
                if (wasInline != cache.chainLength(key) <= CompactLine.HOME_SLOTS) {
                    crossings++;
                }
                cache.checkChains();
                // every cached pair is found by get, and every key's reusable ones by findFirst
                for (Long q : now.keySet()) {
                    long h = cache.getHandle((int) (q >>> 32), (int) (long) q);
                    assertNotEquals(NO, h, () -> where + ": present pair missed by get: " + Long.toHexString(q));
                    cache.release(h);
                    if (random.nextInt(8) == 0 && cache.size() < maxEntries) { // at the bound a create's pass may reclaim it first
                        assertFalse(cache.create((int) (q >>> 32), (int) (long) q, true), where + ": duplicate created");
                    }
                }
            }
            for (long h : held) {
                cache.release(h);
            }
            return crossings;
        }
    }

    private static void hold(List<Long> held, Map<Long, Integer> heldPairs, CompactMbCache cache, long h) {
        held.add(h);
        heldPairs.merge(pair(cache.key(h), cache.value(h)), 1, Integer::sum);
    }
}
