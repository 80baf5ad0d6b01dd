package org.mbcache.contract;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.mbcache.CacheEntry;
import org.mbcache.CompactMbCache;
import org.mbcache.CacheStats;
import org.mbcache.DedupCache;
import org.mbcache.MbCache;
import org.mbcache.caffeine.CaffeineDedupCache;
import org.mbcache.contract.SnapshotRecords.Record;
import org.mbcache.internal.Snapshots;
import org.mbcache.testing.Backend;
import org.mbcache.testing.MemoryPressureSignal;

/**
 * Snapshots ({@link DedupCache#writeSnapshot(OutputStream)}, {@link DedupCache#readSnapshot(InputStream)}
 * and their file forms), one behaviour per test, against every {@link Backend}. What a refused
 * snapshot does is in {@code org.mbcache.SnapshotFormatTest}; the fuzzing in
 * {@code org.mbcache.SnapshotFuzzTest}.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
@ParameterizedClass(name = "{0}")
@EnumSource(Backend.class)
class SnapshotContractTest {

    /*
     * These tests count pairs exactly. A heap-pressure pass (every open kernel-port cache answers the
     * JVM's collection-usage threshold, which a busy test JVM may cross) could free any unheld pair
     * in the middle of one; the passes have tests of their own (MemoryPressureRegistryTest).
     */
    static {
        MemoryPressureSignal.silence();
    }

    private static final int BUCKET_BITS = 4;
    private static final long ROOMY = 4096;

    /** The backend under test. */
    @Parameter
    Backend backend;

    private DedupCache cache;
    private final List<DedupCache> others = new ArrayList<>();

    @BeforeEach
    void openCache() {
        cache = newCache(ROOMY);
    }

    @AfterEach
    void closeCaches() {
        cache.close();
        others.forEach(DedupCache::close);
    }

    private DedupCache newCache(long maxEntries) {
        DedupCache opened = backend.open(BUCKET_BITS, maxEntries, ForkJoinPool.commonPool());
        others.add(opened);
        return opened;
    }

    /**
     * The key of the {@code i}-th pair {@link #fill} creates: a bijection that scatters consecutive
     * {@code i}, so that the pairs spread over the buckets like content hashes (a restore skips the
     * pairs of a chain at its cap, so a test that counts restored pairs must not crowd a bucket).
     */
    private static int keyOf(int i) {
        int x = i * 0x9E37_79B9;
        return x ^ (x >>> 16);
    }

    /** Creates {@code count} pairs, key {@link #keyOf keyOf(i)}, value {@code 1000 + i}, every third not reusable. */
    private static void fill(DedupCache target, int count) {
        for (int i = 0; i < count; i++) {
            assertTrue(target.create(keyOf(i), 1000 + i, i % 3 != 0));
        }
    }

    private static long restore(DedupCache target, byte[] snapshot) throws IOException {
        return target.readSnapshot(new ByteArrayInputStream(snapshot));
    }

    private static boolean reusableOf(DedupCache target, int key, long value) {
        try (CacheEntry entry = target.get(key, value)) {
            assertNotNull(entry, "pair (" + key + ", " + value + ") is not cached");
            return entry.reusable();
        }
    }

    @Test
    void writeSnapshotReturnsTheNumberOfPairsWritten() throws IOException {
        fill(cache, 100);
        assertEquals(100, cache.writeSnapshot(new ByteArrayOutputStream()));
    }

    @Test
    void aSnapshotOfAnEmptyCacheRestoresNothing() throws IOException {
        byte[] snapshot = SnapshotRecords.snapshotOf(cache);
        assertEquals(SnapshotRecords.HEADER_BYTES + SnapshotRecords.TRAILER_BYTES, snapshot.length);
        DedupCache restored = newCache(ROOMY);
        assertEquals(0, restore(restored, snapshot));
        assertEquals(0, restored.size());
    }

    @Test
    void aRoundTripRestoresEveryPairWithItsReusableFlag() throws IOException {
        fill(cache, 500);
        DedupCache restored = newCache(ROOMY);
        assertEquals(500, restore(restored, SnapshotRecords.snapshotOf(cache)));
        assertEquals(500, restored.size());
        for (int i = 0; i < 500; i++) {
            assertEquals(i % 3 != 0, reusableOf(restored, keyOf(i), 1000 + i), "reusable flag of pair " + i);
        }
    }

    /**
     * The kernel port's order is its LRU list, which a restore rebuilds exactly. Caffeine's is
     * TinyLFU's (its window of recent keys comes first in its coldest order, and a restore refills
     * that window with other keys), so there only the pairs survive a round trip, not their order.
     */
    @Test
    void aRoundTripKeepsTheReclaimOrder() throws IOException {
        assumeTrue(backend != Backend.CAFFEINE, "Caffeine's eviction order is not rebuilt by creates in that order");
        assumeTrue(backend != Backend.COMPACT, "the compact table's order is its keyed hash's, rebuilt only under the same seed");
        fill(cache, 500);
        byte[] snapshot = SnapshotRecords.snapshotOf(cache);
        DedupCache restored = newCache(ROOMY);
        restore(restored, snapshot);
        assertEquals(SnapshotRecords.pairs(snapshot), SnapshotRecords.pairs(SnapshotRecords.snapshotOf(restored)));
    }

    /**
     * A key's values come back in their order: the restored cache's {@code findFirst} and
     * {@code findNext} answer as the written one's did (the compact table, whose order is its slots',
     * where a chain's newest values sit in pool slots once its line is full and a home slot freed
     * and taken again holds a newer value than the slots after it, writes a key's values together).
     * No reclaim pass runs here: in {@code MbCache} one that gives a value a second chance moves it
     * behind the key's others in the list, whose order a restore rebuilds.
     */
    @Test
    void aRoundTripKeepsEachKeysValuesInTheirOrder() throws IOException {
        int key = 7;
        for (int v = 1; v <= 10; v++) {
            assertTrue(cache.create(key, v, true));
            assertTrue(cache.create(keyOf(v), 1000 + v, true));
        }
        assertNull(cache.deleteOrGet(key, 3));
        assertNull(cache.deleteOrGet(key, 5));
        for (int v = 11; v <= 14; v++) {
            assertTrue(cache.create(key, v, true));
        }
        List<Long> written = valuesNewestFirst(cache, key);
        assertEquals(List.of(14L, 13L, 12L, 11L, 10L, 9L, 8L, 7L, 6L, 4L, 2L, 1L), written);
        DedupCache restored = newCache(ROOMY);
        restore(restored, SnapshotRecords.snapshotOf(cache));
        assertEquals(written, valuesNewestFirst(restored, key));
    }

    private static List<Long> valuesNewestFirst(DedupCache target, int key) {
        List<Long> values = new ArrayList<>();
        for (CacheEntry entry = target.findFirst(key); entry != null; entry = target.findNext(entry)) {
            values.add(entry.value());
        }
        return values;
    }

    @Test
    void aSnapshotWritesEachPairOnce() throws IOException {
        fill(cache, 500);
        List<Record> pairs = SnapshotRecords.pairs(SnapshotRecords.snapshotOf(cache));
        assertEquals(500, pairs.size());
        assertEquals(500, new HashSet<>(pairs).size());
    }

    @Test
    void aSnapshotRestoresIntoAnyOtherBackend() throws IOException {
        fill(cache, 300);
        byte[] snapshot = SnapshotRecords.snapshotOf(cache);
        for (Backend other : Backend.values()) {
            DedupCache restored = other.open(BUCKET_BITS, ROOMY, ForkJoinPool.commonPool());
            others.add(restored);
            assertEquals(300, restore(restored, snapshot), "restored into " + other);
            assertEquals(Set.copyOf(SnapshotRecords.records(snapshot)),
                    Set.copyOf(SnapshotRecords.records(SnapshotRecords.snapshotOf(restored))), "pairs in " + other);
        }
    }

    @Test
    void readSnapshotKeepsPairsAlreadyCachedAsTheyAreAndDoesNotCountThem() throws IOException {
        fill(cache, 10); // pair 1 (key keyOf(1), value 1001) is reusable in the snapshot
        byte[] snapshot = SnapshotRecords.snapshotOf(cache);
        DedupCache target = newCache(ROOMY);
        target.create(keyOf(1), 1001, false);
        target.create(99_999, 1, true);
        assertEquals(9, restore(target, snapshot));
        assertEquals(11, target.size());
        assertFalse(reusableOf(target, keyOf(1), 1001), "the cached pair's flag was changed");
        assertTrue(Pairs.isCached(target, 99_999, 1));
    }

    @Test
    void restoredPairsAreCountedAsRestoresAndNotAsCreates() throws IOException {
        fill(cache, 10);
        byte[] snapshot = SnapshotRecords.snapshotOf(cache);
        DedupCache target = newCache(ROOMY);
        target.create(99_999, 1, true);
        assertEquals(10, restore(target, snapshot));
        CacheStats stats = target.stats();
        assertEquals(10, stats.restores());
        assertEquals(1, stats.creates());
    }

    @Test
    void readSnapshotTwiceCreatesNothingTheSecondTime() throws IOException {
        fill(cache, 50);
        byte[] snapshot = SnapshotRecords.snapshotOf(cache);
        DedupCache target = newCache(ROOMY);
        assertEquals(50, restore(target, snapshot));
        assertEquals(0, restore(target, snapshot));
        assertEquals(50, target.size());
    }

    @Test
    void readSnapshotOfMorePairsThanMaxEntriesKeepsTheNewest() throws IOException {
        fill(cache, 300);
        byte[] snapshot = SnapshotRecords.snapshotOf(cache);
        List<Record> pairs = SnapshotRecords.pairs(snapshot);
        DedupCache small = newCache(100);
        assertEquals(100, restore(small, snapshot));
        assertEquals(100, small.size());
        for (Record kept : pairs.subList(200, 300)) {
            assertTrue(Pairs.isCached(small, kept.key(), kept.value()), "newest pair missing: " + kept);
        }
    }

    @Test
    void readSnapshotIntoAPartlyFullCacheEvictsNoPairAlreadyCached() throws IOException {
        fill(cache, 300);
        byte[] snapshot = SnapshotRecords.snapshotOf(cache);
        DedupCache small = newCache(100);
        for (int i = 0; i < 40; i++) {
            small.create(keyOf(-1 - i), i, true);
        }
        assertEquals(60, restore(small, snapshot));
        assertEquals(100, small.size());
        for (int i = 0; i < 40; i++) {
            assertTrue(Pairs.isCached(small, keyOf(-1 - i), i), "pair cached before the restore was lost: " + i);
        }
    }

    @Test
    void readSnapshotAfterOtherThreadsDeletedPairsEvictsNoPairCachedBefore() throws Exception {
        long max = 65_536;
        // A fixed seed: a restore skips the pairs of a chain at its cap (32), and under this seed no
        // chain of the snapshot's keys 0..65,535 gets near it, so the count checks the budget alone
        // whatever the rare seed that crowds a chain would do.
        DedupCache target = backend.open(14, max, Runnable::run, 1L);
        others.add(target);
        // Threads that ended, each having deleted fewer pairs than the kernel ports count in one
        // batch of their striped count: the shared estimate a create decides on still reads high.
        List<long[]> before = new ArrayList<>();
        for (int t = 0; t < 12; t++) {
            int base = 1_000_000 * (t + 1);
            Thread writer = new Thread(() -> {
                for (int i = 0; i < 128; i++) {
                    target.create(base + i, base + i, true);
                }
                for (int i = 0; i < 63; i++) {
                    target.deleteOrGet(base + i, base + i);
                }
            });
            writer.start();
            writer.join();
            for (int i = 63; i < 128; i++) {
                before.add(new long[] {base + i, base + i});
            }
        }
        DedupCache source = newCache(2 * max);
        for (int i = 0; i < max; i++) {
            assertTrue(source.create(i, i, true));
        }
        byte[] snapshot = SnapshotRecords.snapshotOf(source);

        long created = restore(target, snapshot);

        assertEquals(max - before.size(), created);
        for (long[] pair : before) {
            assertTrue(Pairs.isCached(target, (int) pair[0], pair[1]), "pair cached before the restore was lost: " + pair[0]);
        }
        assertEquals(before.size() + created, target.size());
    }

    /**
     * An empty cache of the backend under test to restore into: 2^14 buckets and a fixed seed, so
     * that the pairs of {@link #snapshotOfPairs} spread thin and no chain comes near its cap (a
     * restore skips the pairs of a chain at its cap).
     */
    private DedupCache restoreTarget(long maxEntries) {
        DedupCache target = backend.open(14, maxEntries, Runnable::run, 1L);
        others.add(target);
        return target;
    }

    /** A snapshot of {@code count} pairs {@code (keyOf(i), i)} from {@code i = from} up, of a cache that held nothing else. */
    private byte[] snapshotOfPairs(int from, int count) throws IOException {
        DedupCache source = newCache(4L * count);
        for (int i = from; i < from + count; i++) {
            assertTrue(source.create(keyOf(i), i, true));
        }
        return SnapshotRecords.snapshotOf(source);
    }

    /**
     * The bytes of {@code snapshot}; its first read waits (at most the test's time) until
     * {@code proceed} is released, after counting down {@code reading}.
     */
    private static InputStream pausedAtItsFirstRead(byte[] snapshot, CountDownLatch reading, CountDownLatch proceed) {
        return new FilterInputStream(new ByteArrayInputStream(snapshot)) {
            private boolean paused;

            private void pauseOnce() throws IOException {
                if (!paused) {
                    paused = true;
                    reading.countDown();
                    try {
                        assertTrue(proceed.await(10, TimeUnit.SECONDS), "the other restore did not end");
                    } catch (InterruptedException e) {
                        throw new java.io.InterruptedIOException();
                    }
                }
            }

            @Override
            public int read() throws IOException {
                pauseOnce();
                return super.read();
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                pauseOnce();
                return super.read(b, off, len);
            }
        };
    }

    @Test
    void restoresRunningTogetherStayWithinMaxEntriesTogether() throws Exception {
        long max = 1000;
        DedupCache target = restoreTarget(max);
        byte[] first = snapshotOfPairs(0, (int) max);
        byte[] second = snapshotOfPairs((int) max, (int) max);
        CountDownLatch firstReading = new CountDownLatch(1);
        CountDownLatch secondDone = new CountDownLatch(1);
        CompletableFuture<Long> firstRestore = CompletableFuture.supplyAsync(() -> {
            try {
                return target.readSnapshot(pausedAtItsFirstRead(first, firstReading, secondDone));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, runnable -> new Thread(runnable, "first-restore").start());
        assertTrue(firstReading.await(10, TimeUnit.SECONDS), "the first restore did not start reading");

        long createdBySecond;
        try {
            createdBySecond = restore(target, second); // the first has its budget and has created nothing yet
        } finally {
            secondDone.countDown();
        }
        long createdByFirst = firstRestore.get(10, TimeUnit.SECONDS);

        assertTrue(createdByFirst + createdBySecond <= max,
                "the restores created " + createdByFirst + " + " + createdBySecond + " pairs in a cache of " + max);
        assertTrue(target.size() <= max, "size " + target.size() + " over maxEntries " + max);
        assertEquals(createdByFirst + createdBySecond, target.size());
    }

    @Test
    void aRestoreWhoseStreamFailedLeavesItsBudgetToTheNextRestore() throws IOException {
        long max = 1000;
        DedupCache target = restoreTarget(max);
        byte[] snapshot = snapshotOfPairs(0, (int) max);
        InputStream failing = new InputStream() {
            private int at;

            @Override
            public int read() throws IOException {
                if (at == snapshot.length / 2) {
                    throw new IOException("the disk went away");
                }
                return snapshot[at++] & 0xFF;
            }
        };
        assertThrows(IOException.class, () -> target.readSnapshot(failing));

        assertEquals(max, restore(target, snapshot));
    }

    /** The chain cap of {@code target}: per bucket in the kernel ports, per key in Caffeine's backend. */
    private static int chainCapOf(DedupCache target) {
        if (target instanceof MbCache kernelPort) {
            return kernelPort.chainCap();
        }
        if (target instanceof CompactMbCache compact) {
            return compact.chainCap();
        }
        return ((CaffeineDedupCache) target).chainCap();
    }

    /** A valid snapshot of {@code count} pairs, all under {@code key}, values from {@code firstValue} up. */
    private static byte[] oneKeySnapshot(int key, long firstValue, int count) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long[] next = {firstValue};
        Snapshots.write(out, (keys, values, flags, from, max) -> {
            int n = (int) Math.min(max, firstValue + count - next[0]);
            for (int i = 0; i < n; i++) {
                keys[from + i] = key;
                values[from + i] = next[0]++;
                flags[from + i] = Snapshots.RECORD_REUSABLE;
            }
            return n;
        });
        return out.toByteArray();
    }

    @Test
    void readSnapshotOfManyValuesUnderOneKeyEvictsNoPairThroughTheChainCap() throws IOException {
        int cap = chainCapOf(cache);
        assertTrue(cache.create(7, 1, true));
        assertTrue(cache.create(7, 2, false));
        int offered = cap + 50;
        long created = restore(cache, oneKeySnapshot(7, 1000, offered));
        assertTrue(Pairs.isCached(cache, 7, 1), "a pair cached before the restore was evicted");
        assertTrue(Pairs.isCached(cache, 7, 2), "a pair cached before the restore was evicted");
        assertEquals(0, cache.stats().chainCapReclaims(), "the restore reclaimed for the chain cap");
        int cached = 0;
        for (int i = 0; i < offered; i++) {
            if (Pairs.isCached(cache, 7, 1000 + i)) {
                cached++;
            }
        }
        assertEquals(cached, created, "the count includes pairs that are not cached");
        assertEquals(cap - 2, created, "the restore stops at the cap");
        assertEquals(cap, cache.size());
    }

    @Test
    void readSnapshotIntoAFullCacheCreatesNothing() throws IOException {
        fill(cache, 50);
        byte[] snapshot = SnapshotRecords.snapshotOf(cache);
        DedupCache small = newCache(10);
        for (int i = 0; i < 10; i++) {
            small.create(keyOf(-1 - i), i, true);
        }
        assertEquals(0, restore(small, snapshot));
        assertEquals(10, small.size());
    }

    @Test
    void aSnapshotLeavesHeldEntriesHeld() throws IOException {
        fill(cache, 100);
        CacheEntry held = cache.get(keyOf(1), 1001);
        try {
            List<Record> pairs = SnapshotRecords.pairs(SnapshotRecords.snapshotOf(cache));
            assertTrue(pairs.contains(new Record(keyOf(1), 1001, 0)), "a held entry is missing from the snapshot");
            CacheEntry stillHeld = cache.deleteOrGet(keyOf(1), 1001);
            assertNotNull(stillHeld, "the held entry was not held any more after the snapshot");
            cache.release(stillHeld);
        } finally {
            cache.release(held);
        }
    }

    @Test
    void aSnapshotUnderConcurrentLoadHoldsEveryPairCachedThroughout() throws Exception {
        DedupCache loaded = newCache(1 << 14);
        Set<Record> stable = new HashSet<>();
        for (int i = 0; i < 3000; i++) {
            loaded.create(i, i, true);
            stable.add(new Record(i, i, 0));
        }
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> load = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            int thread = t;
            load.add(new Thread(() -> {
                long n = 0;
                while (!stop.get()) {
                    int key = 1_000_000 + thread * 1_000_000 + (int) (n % 5000);
                    if (!loaded.create(key, n % 5000, n % 2 == 0)) {
                        CacheEntry left = loaded.deleteOrGet(key, n % 5000);
                        if (left != null) {
                            loaded.release(left);
                        }
                    }
                    // Lookups of stable pairs set their referenced flags, so passes move them.
                    try (CacheEntry hit = loaded.get((int) (n % 3000), n % 3000)) {
                        if (hit != null) {
                            loaded.touch(hit);
                        }
                    }
                    if (n % 512 == 0) {
                        loaded.shrink(64); // second chances move stable pairs behind the walk
                    }
                    n++;
                }
            }, "snapshot-load-" + t));
        }
        load.forEach(Thread::start);
        try {
            for (int round = 0; round < 20; round++) {
                List<Record> pairs = SnapshotRecords.pairs(SnapshotRecords.snapshotOf(loaded));
                // A churned pair deleted and created again during the walk may be written twice
                // (two entries); a stable one is one entry, written once.
                List<Record> stableWritten = pairs.stream().filter(stable::contains).toList();
                assertEquals(stableWritten.size(), new HashSet<>(stableWritten).size(),
                        "a pair cached throughout was written twice, round " + round);
                Set<Record> missing = new HashSet<>(stable);
                pairs.forEach(missing::remove);
                // A stable pair may be reclaimed by the load's shrink calls: only those still cached count.
                missing.removeIf(pair -> !Pairs.isCached(loaded, pair.key(), pair.value()));
                assertTrue(missing.isEmpty(), "pairs cached throughout missing, round " + round + ": " + missing);
            }
        } finally {
            stop.set(true);
            for (Thread thread : load) {
                thread.join(TimeUnit.SECONDS.toMillis(5));
            }
        }
    }

    @Test
    void writeSnapshotDoesNotCloseTheStream() throws IOException {
        AtomicBoolean closed = new AtomicBoolean();
        OutputStream out = new ByteArrayOutputStream() {
            @Override
            public void close() {
                closed.set(true);
            }
        };
        cache.writeSnapshot(out);
        assertFalse(closed.get());
    }

    @Test
    void readSnapshotDoesNotCloseTheStream() throws IOException {
        AtomicBoolean closed = new AtomicBoolean();
        InputStream in = new ByteArrayInputStream(SnapshotRecords.snapshotOf(cache)) {
            @Override
            public void close() {
                closed.set(true);
            }
        };
        newCache(ROOMY).readSnapshot(in);
        assertFalse(closed.get());
    }

    @Test
    void writeSnapshotToAPathReplacesTheFileAndLeavesNoTemporaryFile(@TempDir Path directory) throws IOException {
        Path file = directory.resolve("cache.snapshot");
        Files.write(file, new byte[] {1, 2, 3});
        fill(cache, 200);
        assertEquals(200, cache.writeSnapshot(file));
        assertArrayEquals(SnapshotRecords.snapshotOf(cache), Files.readAllBytes(file));
        try (Stream<Path> listed = Files.list(directory)) {
            assertEquals(List.of(file), listed.toList());
        }
    }

    @Test
    void readSnapshotFromAPathRestoresWhatWriteSnapshotToAPathWrote(@TempDir Path directory) throws IOException {
        Path file = directory.resolve("cache.snapshot");
        fill(cache, 200);
        cache.writeSnapshot(file);
        DedupCache restored = newCache(ROOMY);
        assertEquals(200, restored.readSnapshot(file));
        assertEquals(Set.copyOf(SnapshotRecords.records(SnapshotRecords.snapshotOf(cache))),
                Set.copyOf(SnapshotRecords.records(SnapshotRecords.snapshotOf(restored))));
    }

    @Test
    void aFailedWriteSnapshotToAPathLeavesTheOldFileAndNoTemporaryFile(@TempDir Path directory) throws IOException {
        Path file = directory.resolve("cache.snapshot");
        Files.write(file, new byte[] {1, 2, 3});
        DedupCache closed = newCache(ROOMY);
        closed.close();
        assertThrows(IllegalStateException.class, () -> closed.writeSnapshot(file));
        assertArrayEquals(new byte[] {1, 2, 3}, Files.readAllBytes(file));
        try (Stream<Path> listed = Files.list(directory)) {
            assertEquals(List.of(file), listed.toList());
        }
    }

    @Test
    void writeSnapshotToARootIsAnIoExceptionNamingIt() {
        Path root = Path.of("/").toAbsolutePath().getRoot();
        IOException thrown = assertThrows(IOException.class, () -> cache.writeSnapshot(root));
        assertTrue(thrown.getMessage().contains(root.toString()), thrown.getMessage());
    }

    @Test
    void writeSnapshotOnAClosedCacheIsAnIllegalStateException() {
        cache.close();
        assertThrows(IllegalStateException.class, () -> cache.writeSnapshot(new ByteArrayOutputStream()));
    }

    @Test
    void readSnapshotOnAClosedCacheIsAnIllegalStateException() {
        byte[] snapshot = SnapshotRecords.snapshotOf(cache);
        cache.close();
        assertThrows(IllegalStateException.class, () -> restore(cache, snapshot));
    }

    @Test
    void readSnapshotOfACacheClosedWhileItReadsIsAnIllegalStateException() {
        byte[] empty = SnapshotRecords.snapshotOf(cache);
        DedupCache target = newCache(ROOMY);
        InputStream closingAtTheEnd = new ByteArrayInputStream(empty) {
            @Override
            public synchronized int read() {
                int next = super.read();
                if (next == -1) {
                    target.close(); // as another thread's close() might, just before the restore's creates
                }
                return next;
            }
        };
        assertThrows(IllegalStateException.class, () -> target.readSnapshot(closingAtTheEnd));
    }

    @Test
    void nullStreamsAndPathsAreNullPointerExceptions() {
        assertThrows(NullPointerException.class, () -> cache.writeSnapshot((OutputStream) null));
        assertThrows(NullPointerException.class, () -> cache.readSnapshot((InputStream) null));
        assertThrows(NullPointerException.class, () -> cache.writeSnapshot((Path) null));
        assertThrows(NullPointerException.class, () -> cache.readSnapshot((Path) null));
    }
}
