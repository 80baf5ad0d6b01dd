package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mbcache.internal.Snapshots;

/**
 * {@link CompactSnapshotWalk}: the clock's order, each key's values together and in their order,
 * every pair cached throughout exactly once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CompactSnapshotWalkTest {

    /** A pair of a snapshot, in its order. */
    private record Pair(int key, long value) {}

    private static CompactMbCache cache(int bucketBits, long maxEntries, int chainCap) {
        return CompactMbCache.builder().bucketBits(bucketBits).maxEntries(maxEntries).chainCap(chainCap)
                .executor(Runnable::run).hashSeed(7).build();
    }

    private static byte[] snapshotOf(CompactMbCache cache) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        cache.writeSnapshot(out);
        return out.toByteArray();
    }

    private static List<Pair> pairs(byte[] snapshot) throws IOException {
        List<Pair> pairs = new ArrayList<>();
        Snapshots.readChecked(new ByteArrayInputStream(snapshot), Long.MAX_VALUE)
                .createNewest(Long.MAX_VALUE, (key, value, reusable) -> pairs.add(new Pair(key, value)));
        return pairs;
    }

    /** The key's values, newest first, as {@code findFirstHandle} and {@code findNextHandle} walk them. */
    private static List<Long> valuesNewestFirst(CompactMbCache cache, int key) {
        List<Long> values = new ArrayList<>();
        for (long h = cache.findFirstHandle(key); h != CompactMbCache.NO_ENTRY; h = cache.findNextHandle(h)) {
            values.add(cache.value(h));
        }
        return values;
    }

    /** The values of each key in the order the snapshot lists them, newest first. */
    private static Map<Integer, List<Long>> valuesByKeyNewestFirst(List<Pair> pairs) {
        Map<Integer, List<Long>> byKey = new LinkedHashMap<>();
        for (Pair pair : pairs) {
            byKey.computeIfAbsent(pair.key(), k -> new ArrayList<>()).add(0, pair.value());
        }
        return byKey;
    }

    @Test
    void aKeysValuesAreWrittenTogetherOldestFirstWhereTheWalkMeetsTheFirstOfThem() throws IOException {
        try (CompactMbCache cache = cache(2, 1 << 10, 64)) {
            for (int v = 1; v <= 12; v++) { // one bucket of four: its line fills, the rest goes to the pool
                assertTrue(cache.create(7, v, true));
            }
            assertTrue(cache.create(8, 100, true));
            List<Pair> pairs = pairs(snapshotOf(cache));
            List<Pair> sevens = pairs.stream().filter(pair -> pair.key() == 7).toList();
            assertEquals(12, sevens.size());
            for (int v = 1; v <= 12; v++) {
                assertEquals(new Pair(7, v), sevens.get(v - 1), "oldest first");
            }
            int first = pairs.indexOf(sevens.get(0));
            assertEquals(sevens, pairs.subList(first, first + 12), "together");
        }
    }

    /**
     * A key with one value in its line and an older one in the pool, the line's in a home slot freed
     * and taken again, which the walk meets first: its line alone does not say the key has one
     * value (the pool filter does), and the two are written oldest first.
     */
    @Test
    void aNewerValueInAHomeSlotTakenAgainIsWrittenAfterTheKeysOlderValueInThePool() throws IOException {
        try (CompactMbCache cache = cache(2, 64, 64)) { // the smallest delay ring: 512 places
            int key = keyInBucket(cache, 0, 1_000);
            int[] others = new int[CompactLine.HOME_SLOTS];
            for (int i = 0, k = 2_000; i < others.length; i++, k++) {
                others[i] = keyInBucket(cache, 0, k);
                k = others[i];
                assertTrue(cache.create(others[i], 1, true)); // the line's positions 1 to 7, in order
            }
            assertTrue(cache.create(key, 10, true)); // the line is full: a pool slot
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(others[0], 1)); // position 1, resting
            for (int i = 0; i < 2_000; i++) { // a ring's length of frees elsewhere: position 1 may be taken again
                int other = keyInBucket(cache, 1, 10_000 + i * 7);
                assertTrue(cache.create(other, 2, true));
                assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(other, 2));
            }
            assertTrue(cache.create(key, 20, true));
            long newer = cache.getHandle(key, 20);
            assertEquals(1, newer & 7, "the newer value in the home slot freed: line position 1");
            cache.release(newer);
            assertEquals(List.of(20L, 10L), valuesNewestFirst(cache, key));
            byte[] snapshot = snapshotOf(cache);
            assertEquals(List.of(new Pair(key, 10), new Pair(key, 20)),
                    pairs(snapshot).stream().filter(pair -> pair.key() == key).toList());
            try (CompactMbCache restored = cache(2, 64, 64)) {
                restored.readSnapshot(new ByteArrayInputStream(snapshot));
                assertEquals(List.of(20L, 10L), valuesNewestFirst(restored, key));
            }
        }
    }

    /** The first key from {@code from} up whose bucket is {@code bucket}. */
    private static int keyInBucket(CompactMbCache cache, int bucket, int from) {
        int key = from;
        while (cache.bucketOf(key) != bucket) {
            key++;
        }
        return key;
    }

    @Test
    void keysWithOneValueKeepTheClocksOrder() throws IOException {
        try (CompactMbCache cache = cache(4, 1 << 10, 64)) {
            for (int key = 0; key < 100; key++) {
                cache.create(key, key, true);
            }
            List<Pair> order = pairs(snapshotOf(cache));
            assertEquals(10, cache.shrink(10));
            for (int i = 0; i < 100; i++) {
                Pair pair = order.get(i);
                long h = cache.getHandle(pair.key(), pair.value());
                assertEquals(i >= 10, h != CompactMbCache.NO_ENTRY, "the " + i + "th pair of the snapshot");
                if (h != CompactMbCache.NO_ENTRY) {
                    cache.release(h);
                }
            }
        }
    }

    /**
     * Single-threaded histories of creates, deletes and passes over a few keys in a small table
     * (chains through line and pool, home slots freed and taken again, the hand anywhere): each
     * snapshot lists every cached pair once, each key's values in the order lookups walk them, and a
     * restore into a new cache gives each key's values back in that order.
     */
    @Test
    void randomHistoriesRoundTripEveryKeysValuesInTheirOrder() throws IOException {
        Random random = new Random(2026);
        for (int history = 0; history < 300; history++) {
            try (CompactMbCache cache = cache(2, 1 << 10, 64); CompactMbCache restored = cache(2, 1 << 10, 64)) {
                int keys = 1 + random.nextInt(6);
                List<Pair> cached = new ArrayList<>();
                long nextValue = 1;
                for (int op = 0, ops = 10 + random.nextInt(60); op < ops; op++) {
                    int choice = random.nextInt(10);
                    if (choice < 7 || cached.isEmpty()) {
                        Pair pair = new Pair(random.nextInt(keys), nextValue++);
                        assertTrue(cache.create(pair.key(), pair.value(), true));
                        cached.add(pair);
                    } else if (choice < 9) {
                        Pair pair = cached.remove(random.nextInt(cached.size()));
                        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(pair.key(), pair.value()));
                    } else {
                        long freed = cache.shrink(1 + random.nextInt(3));
                        cached.removeIf(pair -> !isCached(cache, pair));
                        assertTrue(freed >= 0);
                    }
                }
                byte[] snapshot = snapshotOf(cache);
                List<Pair> written = pairs(snapshot);
                assertEquals(new HashSet<>(cached), new HashSet<>(written), "history " + history);
                assertEquals(cached.size(), written.size(), "each once, history " + history);
                Map<Integer, List<Long>> byKey = valuesByKeyNewestFirst(written);
                for (Map.Entry<Integer, List<Long>> key : byKey.entrySet()) {
                    assertEquals(valuesNewestFirst(cache, key.getKey()), key.getValue(),
                            "key " + key.getKey() + " in the snapshot, history " + history);
                }
                restored.readSnapshot(new ByteArrayInputStream(snapshot));
                for (int key : byKey.keySet()) {
                    assertEquals(valuesNewestFirst(cache, key), valuesNewestFirst(restored, key),
                            "key " + key + " restored, history " + history);
                }
            }
        }
    }

    private static boolean isCached(CompactMbCache cache, Pair pair) {
        long h = cache.getHandle(pair.key(), pair.value());
        if (h == CompactMbCache.NO_ENTRY) {
            return false;
        }
        cache.release(h);
        return true;
    }

    /**
     * Keys with several values each and keys with one, cached throughout, while other threads create
     * and delete more values of the same keys and touch the stable ones: every stable pair is
     * written exactly once (a key alone when the walk met it may have more values when the walk
     * meets one of those, which must not write it again), and each key's stable values in their
     * order.
     */
    @Test
    void underLoadEveryStablePairOfAKeyWithManyValuesIsWrittenOnceAndInItsOrder() throws Exception {
        // About 6 keys a bucket (chains of 20 to 40, a few up to 90): a cap no chain reaches, so nothing is reclaimed.
        try (CompactMbCache cache = cache(5, 1 << 16, 256)) {
            Set<Pair> stable = new HashSet<>();
            for (int v = 0; v < 5; v++) {
                for (int key = 0; key < 100; key++) {
                    assertTrue(cache.create(key, v, true));
                    stable.add(new Pair(key, v));
                }
            }
            for (int key = 100; key < 200; key++) {
                assertTrue(cache.create(key, 0, true));
                stable.add(new Pair(key, 0));
            }
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> load = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int thread = t;
                load.add(new Thread(() -> {
                    long n = 0;
                    while (!stop.get()) {
                        int key = (int) (n % 200);
                        long value = 1_000 + thread * 1_000_000 + (n / 200) % 2;
                        if (!cache.create(key, value, true)) {
                            long held = cache.deleteOrGetHandle(key, value);
                            if (held != CompactMbCache.NO_ENTRY) {
                                cache.release(held);
                            }
                        }
                        long hit = cache.getHandle(key, n % 5);
                        if (hit != CompactMbCache.NO_ENTRY) {
                            cache.touch(hit);
                            cache.release(hit);
                        }
                        n++;
                    }
                }, "compact-snapshot-load-" + t));
            }
            load.forEach(Thread::start);
            try {
                for (int round = 0; round < 300; round++) {
                    List<Pair> written = pairs(snapshotOf(cache));
                    List<Pair> stableWritten = written.stream().filter(stable::contains).toList();
                    assertEquals(stable, new HashSet<>(stableWritten), "round " + round);
                    assertEquals(stable.size(), stableWritten.size(), "each stable pair once, round " + round);
                    Map<Integer, Long> last = new HashMap<>();
                    for (Pair pair : stableWritten) {
                        Long before = last.put(pair.key(), pair.value());
                        assertTrue(before == null || before < pair.value(),
                                "key " + pair.key() + ": " + before + " then " + pair.value() + ", round " + round);
                    }
                }
            } finally {
                stop.set(true);
                for (Thread thread : load) {
                    thread.join(TimeUnit.SECONDS.toMillis(5));
                }
            }
        }
    }
}
