package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mbcache.internal.Snapshots;

/**
 * What the contract tests cannot see of {@link CompactMbCache}: the primitive API and its handles,
 * slot reuse, chains past the record's inline capacity, the chain cap, the clock and background
 * reclaim's continuation, the slot bound and the footprint.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CompactMbCacheTest {

    private static final int KEY = 0x5EED_CAFE;

    private static CompactMbCache cache(int bucketBits, long maxEntries) {
        return CompactMbCache.builder().bucketBits(bucketBits).maxEntries(maxEntries).executor(Runnable::run)
                .hashSeed(42).build();
    }

    @Test
    void thePrimitiveApiHandsOutHandlesWithKeyValueAndFlags() throws InterruptedException {
        try (CompactMbCache cache = cache(4, 1024)) {
            assertTrue(cache.create(KEY, 7, true));
            long handle = cache.findFirstHandle(KEY);
            assertNotEquals(CompactMbCache.NO_ENTRY, handle);
            assertEquals(KEY, cache.key(handle));
            assertEquals(7, cache.value(handle));
            assertTrue(cache.reusable(handle));
            cache.setReusable(handle, false);
            assertFalse(cache.reusable(handle));
            assertEquals(CompactMbCache.NO_ENTRY, cache.findFirstHandle(KEY));
            long same = cache.getHandle(KEY, 7);
            assertEquals(handle, same);
            cache.release(same);
            cache.touch(handle);
            assertTrue(cache.waitUnused(handle, 0, TimeUnit.SECONDS));
            cache.release(handle);
            assertThrows(IllegalStateException.class, () -> cache.release(handle), "over-release");
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, 7));
            assertEquals(0, cache.size());
            assertThrows(IllegalArgumentException.class, () -> cache.release(-5L));
            assertThrows(IllegalArgumentException.class, () -> cache.release(1L << 50 | 1));
        }
    }

    @Test
    void aStaleHandleCannotTouchTheSlotsNextPair() {
        try (CompactMbCache cache = cache(0, 1024)) {
            cache.create(KEY, 1, true);
            long stale = cache.getHandle(KEY, 1);
            cache.release(stale);
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, 1));
            FreedSlots.reuseNext(cache); // out of the delay ring: the free list hands the same slot out again
            cache.create(KEY, 2, true);
            long fresh = cache.getHandle(KEY, 2);
            assertEquals(CompactSlots.slotOf(stale), CompactSlots.slotOf(fresh), "the slot was reused");
            assertNotEquals(stale, fresh, "with a new generation");
            assertThrows(IllegalStateException.class, () -> cache.release(stale));
            assertThrows(IllegalStateException.class, () -> cache.findNextHandle(stale));
            assertThrows(IllegalStateException.class, () -> cache.value(stale));
            cache.setReusable(stale, false); // ignored
            assertTrue(cache.reusable(fresh));
            assertFalse(cache.reusable(stale));
            cache.release(fresh); // the stale release took nothing from it
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, 2));
            assertEquals(0, cache.size());
        }
    }

    @Test
    void touchAndWaitUnusedOfAStaleHandleLeaveTheSlotsNextPairAlone() throws InterruptedException {
        try (CompactMbCache cache = cache(0, 1024)) {
            cache.create(KEY, 1, true);
            long stale = cache.getHandle(KEY, 1);
            cache.release(stale);
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, 1));
            cache.touch(stale); // nothing to mark: its pair is gone
            assertTrue(cache.waitUnused(stale, 0, TimeUnit.SECONDS), "nobody holds a pair that is gone");
            cache.waitUnused(stale);
            FreedSlots.reuseNext(cache); // out of the delay ring: the free list hands the same slot out again
            cache.create(KEY, 2, true);
            long fresh = cache.getHandle(KEY, 2);
            assertEquals(CompactSlots.slotOf(stale), CompactSlots.slotOf(fresh), "the slot was reused");
            long other = cache.getHandle(KEY, 2); // a second holder: the new pair is in use
            cache.touch(stale);
            assertTrue(cache.waitUnused(stale, 0, TimeUnit.SECONDS), "the new pair's holders are not the stale handle's");
            cache.release(other);
            cache.release(fresh);
            cache.shrink(1); // one slot looked at, and freed: the stale touch gave the new pair no second chance
            assertEquals(0, cache.size());
        }
    }

    @Test
    void aReleasedHandleWhosePairLeftTheCacheIsStaleBeforeItsSlotIsReused() {
        try (CompactMbCache cache = cache(0, 1024)) {
            cache.create(KEY, 555, true);
            cache.create(KEY + 1, 666, true);
            long released = cache.getHandle(KEY, 555);
            cache.release(released);
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY + 1, 666));
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, 555)); // its slot is free now
            assertThrows(IllegalStateException.class, () -> cache.value(released));
            assertThrows(IllegalStateException.class, () -> cache.key(released));
            assertFalse(cache.reusable(released));
        }
    }

    @Test
    void aReleasedHandleWhosePairLeftBeforeCloseStaysStaleAfterIt() {
        CompactMbCache cache = cache(0, 1024);
        cache.create(KEY, 555, true);
        cache.create(KEY + 1, 666, true);
        cache.create(KEY + 2, 777, true);
        long first = cache.getHandle(KEY, 555);
        long second = cache.getHandle(KEY + 1, 666);
        long held = cache.getHandle(KEY + 2, 777);
        cache.release(first);
        cache.release(second);
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, 555));
        assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY + 1, 666)); // its value word: the free list's link
        cache.close();
        assertThrows(IllegalStateException.class, () -> cache.value(second));
        assertThrows(IllegalStateException.class, () -> cache.key(second));
        assertFalse(cache.reusable(second));
        assertEquals(777, cache.value(held), "a pair held across close stays readable");
        assertEquals(KEY + 2, cache.key(held));
    }

    @Test
    void aSlotPutBackUnusedKeepsItsGenerationSoAStaleHandleStaysStaleAcrossItsNextPair() throws IOException {
        try (CompactMbCache cache = CompactMbCache.builder().bucketBits(1).maxEntries(1 << 14).chainCap(2)
                .executor(Runnable::run).memoryPressureReclaim(false).hashSeed(42).build()) {
            int key = keyInBucket(cache, 0);
            int full = keyInBucket(cache, 1);
            cache.create(full, 1, true);
            cache.create(full, 2, true); // bucket 1 at its cap: a restore skips every pair of it
            cache.create(key, 555, true);
            long stale = cache.getHandle(key, 555);
            cache.release(stale);
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(key, 555));
            FreedSlots.reuseNext(cache); // out of the delay ring: its slot tops the free list
            // 65,535 restored pairs that each take that slot and put it back unused
            assertEquals(0, cache.readSnapshot(new ByteArrayInputStream(snapshotOfOneKey(full, 65_535))));
            assertTrue(cache.create(key, 777, true)); // the slot's one next pair
            long holder = cache.getHandle(key, 777);
            assertEquals(CompactSlots.slotOf(stale), CompactSlots.slotOf(holder), "the slot was reused");
            assertThrows(IllegalStateException.class, () -> cache.value(stale));
            assertThrows(IllegalStateException.class, () -> cache.release(stale));
            cache.release(holder); // the stale release took nothing from it
            assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(key, 777));
        }
    }

    private static int keyInBucket(CompactMbCache cache, int bucket) {
        for (int key = 1; ; key++) {
            if (cache.bucketOf(key) == bucket) {
                return key;
            }
        }
    }

    /** A snapshot of {@code pairs} pairs {@code (key, 100 + i)}. */
    private static byte[] snapshotOfOneKey(int key, int pairs) throws IOException {
        int[] written = {0};
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Snapshots.write(out, (keys, values, flags, from, max) -> {
            int n = Math.min(max, pairs - written[0]);
            for (int i = 0; i < n; i++, written[0]++) {
                keys[from + i] = key;
                values[from + i] = 100 + written[0];
                flags[from + i] = 0;
            }
            return n;
        });
        return out.toByteArray();
    }

    @Test
    void twoLookupsOfOnePairHandOutEqualViewsWithOneHashCode() {
        try (CompactMbCache cache = cache(0, 1024)) {
            cache.create(KEY, 1, true);
            cache.create(KEY, 2, true);
            try (CacheEntry found = cache.findFirst(KEY); CacheEntry got = cache.get(KEY, 2);
                 CacheEntry other = cache.get(KEY, 1)) {
                assertEquals(found, got);
                assertEquals(found.hashCode(), got.hashCode());
                assertNotEquals(found, other);
            }
        }
    }

    @Test
    void lookupsThroughDedupCacheKeepNoObjectPerEntry() {
        try (CompactMbCache cache = cache(8, 100_000)) {
            for (int key = 0; key < 50_000; key++) {
                cache.create(key, key, true);
            }
            long before = cache.footprintBytes();
            for (int key = 0; key < 50_000; key++) {
                try (CacheEntry entry = cache.findFirst(key)) {
                    assertEquals(key, entry.value());
                }
            }
            assertEquals(before, cache.footprintBytes());
        }
    }

    @Test
    void theEntryObjectOfAReusedSlotIsANewOne() {
        try (CompactMbCache cache = cache(0, 1024)) {
            cache.create(KEY, 1, true);
            CacheEntry first = cache.get(KEY, 1);
            assertEquals(first, cache.findFirst(KEY));
            cache.release(first);
            cache.release(first);
            assertEquals(null, cache.deleteOrGet(KEY, 1));
            cache.create(KEY, 2, true);
            try (CacheEntry second = cache.get(KEY, 2)) {
                assertNotEquals(first, second);
                assertEquals(2, second.value());
                assertEquals(1, first.value(), "a released entry keeps its pair");
            }
        }
    }

    @Test
    void chainsLongerThanTheRecordKeepTheirOrderAndAreFound() {
        try (CompactMbCache cache = cache(0, 1024)) {
            for (long value = 0; value < 40; value++) {
                assertTrue(cache.create(KEY + (int) (value % 3), value, true));
            }
            assertEquals(40, cache.chainLength(KEY));
            for (long value = 0; value < 40; value++) {
                assertFalse(cache.create(KEY + (int) (value % 3), value, true), "duplicate " + value);
                long handle = cache.getHandle(KEY + (int) (value % 3), value);
                assertNotEquals(CompactMbCache.NO_ENTRY, handle);
                cache.release(handle);
            }
            List<Long> walk = new ArrayList<>();
            for (long h = cache.findFirstHandle(KEY); h != CompactMbCache.NO_ENTRY; h = cache.findNextHandle(h)) {
                walk.add(cache.value(h));
            }
            List<Long> expected = new ArrayList<>();
            for (long value = 39; value >= 0; value--) {
                if (value % 3 == 0) {
                    expected.add(value);
                }
            }
            assertEquals(expected, walk, "newest first");
            for (long value = 0; value < 40; value += 2) {
                assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY + (int) (value % 3), value));
            }
            assertEquals(20, cache.size());
            assertEquals(20, cache.shrink(Long.MAX_VALUE));
        }
    }

    @Test
    void lookupsWalkNewestFirstWhileRemovalsAtEveryPositionMoveEntriesAcrossTheRecord() {
        try (CompactMbCache cache = cache(0, 1024)) {
            List<Long> chain = new ArrayList<>(); // KEY's values, oldest first: the one-bucket chain
            long next = 0;
            for (int length = 2 * CompactLine.HOME_SLOTS + 6; length >= 1; length--) {
                while (chain.size() < length) {
                    assertTrue(cache.create(KEY, next, true));
                    chain.add(next++);
                }
                for (int pos = 0; pos < length; pos++) {
                    String where = "length " + length + ", position " + pos;
                    long value = chain.remove(pos);
                    assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, value), where);
                    checkWalk(cache, chain, where + " removed");
                    assertTrue(cache.create(KEY, next, true), where);
                    chain.add(next++);
                    checkWalk(cache, chain, where + " removed, then one created");
                }
                long newest = chain.remove(chain.size() - 1);
                assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(KEY, newest));
            }
        }
    }

    /**
     * The chain's pairs, by findFirst/findNext (newest first, each step searching the chain for the
     * entry it holds) and by get, are {@code chain}'s, and no other.
     */
    private static void checkWalk(CompactMbCache cache, List<Long> chain, String where) {
        assertEquals(chain.size(), cache.chainLength(KEY), where);
        List<Long> walk = new ArrayList<>();
        for (long h = cache.findFirstHandle(KEY); h != CompactMbCache.NO_ENTRY; h = cache.findNextHandle(h)) {
            walk.add(cache.value(h));
        }
        List<Long> newestFirst = new ArrayList<>(chain);
        Collections.reverse(newestFirst);
        assertEquals(newestFirst, walk, where + ": findFirst/findNext, newest first");
        for (long value : chain) {
            long h = cache.getHandle(KEY, value);
            assertNotEquals(CompactMbCache.NO_ENTRY, h, where + ": get of " + value);
            cache.release(h);
        }
    }

    /**
     * The walk a lookup falls back to when its optimistic read meets a writer (find's walk under the
     * bucket's bit, which a quiet cache never reaches): findFirst answers the newest, findNext the
     * next older from the entry it is handed, and get every pair, in chains from one reference to
     * past the record's 15, so across the record and into the overflow array.
     */
    @Test
    void lookupsThatFindTheBucketLockedWalkItUnderTheBitNewestFirstIntoTheOverflowArray() throws Exception {
        ExecutorService looker = Executors.newSingleThreadExecutor();
        try (CompactMbCache cache = cache(0, 1024)) {
            CompactTable table = tableOf(cache);
            for (long length = 1; length <= 2 * CompactLine.HOME_SLOTS + 6; length++) {
                assertTrue(cache.create(KEY, length - 1, true)); // KEY's values 0 to length - 1, oldest first
                String where = "length " + length;
                long first = underTheBit(cache, table, looker, () -> 0, h -> cache.findFirstHandle(KEY));
                assertEquals(length - 1, cache.value(first), where + ": findFirst, the newest");
                cache.release(first);
                for (long value = 0; value < length; value++) {
                    long pair = value;
                    long h = underTheBit(cache, table, looker, () -> 0, none -> cache.getHandle(KEY, pair));
                    assertNotEquals(CompactMbCache.NO_ENTRY, h, where + ": get of " + value);
                    cache.release(h);
                    long next = underTheBit(cache, table, looker, () -> cache.getHandle(KEY, pair), cache::findNextHandle);
                    assertEquals(value == 0 ? CompactMbCache.NO_ENTRY : value - 1,
                            next == CompactMbCache.NO_ENTRY ? CompactMbCache.NO_ENTRY : cache.value(next),
                            where + ": findNext of " + value + ", the next older");
                    if (next != CompactMbCache.NO_ENTRY) {
                        cache.release(next);
                    }
                }
            }
            assertEquals(2 * CompactLine.HOME_SLOTS + 6, cache.size());
            assertEquals(cache.size(), cache.shrink(Long.MAX_VALUE), "every reference taken was given back");
        } finally {
            looker.shutdownNow();
        }
    }

    private static CompactTable tableOf(CompactMbCache cache) throws ReflectiveOperationException {
        java.lang.reflect.Field field = CompactMbCache.class.getDeclaredField("table");
        field.setAccessible(true);
        return (CompactTable) field.get(cache);
    }

    /**
     * The answer of {@code lookup} (on bucket 0 of a one-bucket cache nobody else uses) as the
     * looker thread runs it while this thread holds the bucket's bit: its optimistic read meets an
     * odd version, and it walks the chain under the bit itself. The version shows it did (this
     * thread's critical section and the lookup's: two, four steps); a lookup that read only after
     * the unlock, optimistically, is given back and tried again. Each try's {@code argument} is taken
     * on this thread first (a findNext gives back the handle it is handed).
     */
    private static long underTheBit(CompactMbCache cache, CompactTable table, ExecutorService looker,
                                    java.util.function.LongSupplier argument, java.util.function.LongUnaryOperator lookup)
            throws Exception {
        for (int attempt = 0; attempt < 1_000; attempt++) {
            long handed = argument.getAsLong();
            long before = BucketLockWord.versionOf(table.laVersion(0));
            table.lock(0);
            Future<Long> answer;
            try {
                answer = looker.submit(() -> lookup.applyAsLong(handed));
                Thread.sleep(1); // the looker reads the odd version meanwhile, most times
            } finally {
                table.unlock(0);
            }
            long handle = answer.get();
            if (((BucketLockWord.versionOf(table.laVersion(0)) - before) & 0xFFFF_FFFFL) == 4) {
                return handle;
            }
            if (handle != CompactMbCache.NO_ENTRY) {
                cache.release(handle);
            }
        }
        throw new AssertionError("the lookup never found the bucket locked");
    }

    @Test
    void theChainCapReclaimsTheOldestUnheldAndSparesAReferencedOne() {
        try (CompactMbCache cache = CompactMbCache.builder().bucketBits(0).maxEntries(1024).chainCap(4)
                .executor(Runnable::run).build()) {
            for (long value = 0; value < 4; value++) {
                cache.create(KEY, value, true);
            }
            long held = cache.getHandle(KEY, 0);
            long touched = cache.getHandle(KEY, 1);
            cache.touch(touched);
            cache.release(touched);
            cache.create(KEY, 4, true);
            assertEquals(4, cache.chainLength(KEY));
            assertNotEquals(CompactMbCache.NO_ENTRY, cache.getHandle(KEY, 0), "held");
            long again = cache.getHandle(KEY, 1);
            assertNotEquals(CompactMbCache.NO_ENTRY, again, "referenced: a second chance");
            cache.release(again);
            assertEquals(1, cache.stats().chainCapReclaims());
            cache.release(held);
            cache.release(held);
        }
    }

    @Test
    void backgroundReclaimContinuesUntilTheCountIsAtTheBound() {
        java.util.ArrayDeque<Runnable> queued = new java.util.ArrayDeque<>();
        // A fixed seed: creates into a chain at the cap evict, which would leave fewer passes, and under
        // this seed no chain of keys 0..299 in 16 buckets reaches it.
        CompactMbCache cache = CompactMbCache.builder().bucketBits(4).maxEntries(160).executor(queued::add)
                .hashSeed(42).build();
        try (cache) {
            for (int key = 0; key < 300; key++) {
                cache.create(key, key, true);
            }
            assertEquals(1, queued.size(), "one pass pending");
            int passes = 0;
            while (!queued.isEmpty()) {
                queued.poll().run();
                passes++;
            }
            assertTrue(cache.size() <= 160, "size " + cache.size());
            assertTrue(passes >= 14, "passes of 10: " + passes);
        }
    }

    @Test
    void anExecutorThatThrowsGetsThePassRunOnTheCaller() {
        try (CompactMbCache cache = CompactMbCache.builder().bucketBits(4).maxEntries(64)
                .executor(task -> {
                    throw new RejectedExecutionException("injected");
                }).build()) {
            for (int key = 0; key < 1000; key++) {
                cache.create(key, key, true);
                assertTrue(cache.size() <= 128);
            }
            assertTrue(cache.stats().backgroundReclaimPasses() > 0);
        }
    }

    @Test
    void theClockFreesInTheTablesOrderFromItsHand() throws IOException {
        try (CompactMbCache cache = cache(4, 1024)) {
            for (int key = 0; key < 100; key++) {
                cache.create(key, key, true);
            }
            List<Integer> order = snapshotKeys(cache); // the hand's order: the table's, from the hand
            assertEquals(10, cache.shrink(10));
            for (int i = 0; i < 100; i++) {
                int key = order.get(i);
                long h = cache.getHandle(key, key);
                assertEquals(i >= 10, h != CompactMbCache.NO_ENTRY, "key " + key + ", " + i + "th in the hand's order");
                if (h != CompactMbCache.NO_ENTRY) {
                    cache.release(h);
                }
            }
        }
    }

    @Test
    void aTableWhosePoolIsHandedOutToItsEndKeepsReclaiming() {
        // maxEntries 32: 6 buckets and 512 pool slots, a meta space of 640 indices, ten pages of 64:
        // churn hands out the whole pool (the delay ring holds 512 freed slots back), and the end
        // then sits on a page boundary, where a pass's look-ahead must not read past the directory.
        try (CompactMbCache cache = CompactMbCache.builder().maxEntries(32).hashSeed(42).executor(Runnable::run)
                .memoryPressureReclaim(false).build()) {
            for (int i = 0; i < 5_000; i++) {
                cache.create(i * 0x9E37_79B1, i, true);
            }
            assertTrue(FreedSlots.end(cache) <= FreedSlots.capacity(cache) / 7 * 8, "the end stays within the meta space");
            cache.shrink(Long.MAX_VALUE);
            assertEquals(0, cache.size());
            cache.checkChains();
        }
    }

    @Test
    void slotsFreedAreReusedBeforeTheTableGrows() {
        try (CompactMbCache cache = cache(6, 1 << 12)) {
            for (int round = 0; round < 20; round++) {
                for (int key = 0; key < 1000; key++) {
                    cache.create(key, round, true);
                }
                cache.shrink(Long.MAX_VALUE);
            }
            long footprint = cache.footprintBytes();
            for (int key = 0; key < 1000; key++) {
                cache.create(key, 99, true);
            }
            assertEquals(footprint, cache.footprintBytes(), "no new page");
            Set<Long> handles = new HashSet<>();
            for (int key = 0; key < 1000; key++) {
                long h = cache.getHandle(key, 99);
                assertTrue(handles.add((long) CompactSlots.slotOf(h)), "one slot per pair");
                cache.release(h);
            }
        }
    }

    @Test
    void aCreateBeyondEverySlotHeldIsRefused() {
        try (CompactMbCache cache = cache(2, 16)) { // 2^12 slots
            List<Long> held = new ArrayList<>();
            IllegalStateException full = null;
            for (int key = 0; key < 5000 && full == null; key++) {
                try {
                    cache.create(key, key, true);
                } catch (IllegalStateException e) {
                    full = e;
                    break;
                }
                held.add(cache.getHandle(key, key));
            }
            assertNotNull(full, "the slot bound");
            held.forEach(cache::release);
            assertTrue(cache.create(-1, -1, true), "room again once released");
        }
    }

    @Test
    void randomOperationsKeepEveryLiveSlotInItsChain() {
        java.util.SplittableRandom random = new java.util.SplittableRandom(7);
        try (CompactMbCache cache = CompactMbCache.builder().bucketBits(2).maxEntries(32).executor(Runnable::run)
                .hashSeed(3).build()) {
            List<Long> held = new ArrayList<>();
            for (int step = 0; step < 200_000; step++) {
                int key = random.nextInt(8);
                long value = random.nextInt(16);
                switch (random.nextInt(6)) {
                    case 0, 1 -> cache.create(key, value, random.nextBoolean());
                    case 2 -> {
                        long h = cache.deleteOrGetHandle(key, value);
                        if (h != CompactMbCache.NO_ENTRY) {
                            cache.release(h);
                        }
                    }
                    case 3 -> {
                        long h = cache.getHandle(key, value);
                        if (h != CompactMbCache.NO_ENTRY) {
                            if (held.size() < 4) {
                                held.add(h);
                            } else {
                                cache.touch(h);
                                cache.release(h);
                            }
                        }
                    }
                    case 4 -> {
                        if (!held.isEmpty()) {
                            cache.release(held.remove(random.nextInt(held.size())));
                        }
                    }
                    default -> cache.shrink(random.nextInt(8));
                }
                cache.checkChains();
            }
        }
    }

    @Test
    void concurrentRandomOperationsKeepEveryLiveSlotInItsChain() throws Exception {
        try (CompactMbCache cache = CompactMbCache.builder().bucketBits(2).maxEntries(32).executor(Runnable::run)
                .hashSeed(3).build()) {
            Thread[] threads = new Thread[2];
            java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
            for (int t = 0; t < threads.length; t++) {
                int seed = t;
                threads[t] = new Thread(() -> {
                    java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
                    try {
                        for (int step = 0; step < 300_000; step++) {
                            int key = random.nextInt(8);
                            long value = random.nextInt(16);
                            switch (random.nextInt(5)) {
                                case 0, 1 -> cache.create(key, value, true);
                                case 2 -> {
                                    long h = cache.deleteOrGetHandle(key, value);
                                    if (h != CompactMbCache.NO_ENTRY) {
                                        cache.release(h);
                                    }
                                }
                                case 3 -> {
                                    long h = cache.findFirstHandle(key);
                                    if (h != CompactMbCache.NO_ENTRY) {
                                        cache.release(h);
                                    }
                                }
                                default -> cache.shrink(random.nextInt(4));
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                threads[t].start();
            }
            for (Thread thread : threads) {
                thread.join();
            }
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            cache.checkChains();
        }
    }

    @Test
    void theBuilderRefusesOtherCreateStrategiesAndBadOptions() {
        assertThrows(IllegalArgumentException.class,
                () -> CompactMbCache.builder().createStrategy(CreateStrategy.ALLOCATE_FIRST));
        assertThrows(IllegalArgumentException.class, () -> CompactMbCache.builder().bucketBits(31));
        assertThrows(IllegalArgumentException.class, () -> CompactMbCache.builder().maxEntries(0));
        assertThrows(IllegalArgumentException.class, () -> CompactMbCache.builder().chainCap(0));
        try (CompactMbCache cache = CompactMbCache.create(3)) {
            assertEquals(64, cache.maxEntries());
            assertEquals(KernelPortOptions.defaultChainCap(64, 3), cache.chainCap());
            assertEquals(CreateStrategy.REQUEST_LIST, cache.createStrategy());
        }
    }

    @Test
    void theSameSeedPicksTheSameBucketsAsTheKernelPort() {
        try (CompactMbCache compact = cache(10, 1024);
             MbCache port = MbCache.builder().bucketBits(10).hashSeed(42).build()) {
            for (int key = 0; key < 1000; key++) {
                assertEquals(port.bucketOf(key * 7919), compact.bucketOf(key * 7919));
            }
        }
    }

    @Test
    void memoryPressureShrinksACompactCache() {
        try (CompactMbCache cache = cache(4, 1024)) {
            for (int key = 0; key < 100; key++) {
                cache.create(key, key, true);
            }
            assertTrue(MemoryPressureRegistry.INSTANCE.isRegistered(cache.shrinker()));
            cache.onMemoryPressure();
            assertEquals(50, cache.size());
        }
    }

    @Test
    void aCacheBuiltWithoutMemoryPressureReclaimIsNeverRegistered() {
        try (CompactMbCache cache = CompactMbCache.builder().bucketBits(4).memoryPressureReclaim(false).build()) {
            assertFalse(MemoryPressureRegistry.INSTANCE.isRegistered(cache.shrinker()));
        }
    }

    /** The keys of a snapshot, in its order. */
    private static List<Integer> snapshotKeys(CompactMbCache cache) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        cache.writeSnapshot(out);
        List<Integer> keys = new ArrayList<>();
        Snapshots.readChecked(new ByteArrayInputStream(out.toByteArray()), Long.MAX_VALUE).createNewest(Long.MAX_VALUE, (key, value, reusable) -> keys.add(key));
        return keys;
    }

    @Test
    void aSnapshotListsPairsFromTheClockHandInTheOrderItSweeps() throws IOException {
        try (CompactMbCache cache = cache(4, 1024)) {
            for (int key = 0; key < 10; key++) {
                assertTrue(cache.create(key, key, true));
            }
            List<Integer> order = snapshotKeys(cache);
            assertEquals(3, cache.shrink(3)); // frees the first three; the hand stops before the fourth's slot
            assertEquals(order.subList(3, 10), snapshotKeys(cache));
            assertTrue(cache.create(100, 100, true));
            List<Integer> withNew = snapshotKeys(cache);
            assertEquals(8, withNew.size());
            assertEquals(order.subList(3, 10), withNew.stream().filter(key -> key != 100).toList());
            assertEquals(1, cache.shrink(1));
            assertFalse(org.mbcache.contract.Pairs.isCached(cache, withNew.get(0), withNew.get(0)),
                    "the snapshot's first pair is the next one reclaimed");
        }
    }

    @Test
    void aRestoredCacheOfTheSameSeedAndBucketsRebuildsTheOrderWhereEveryChainFitsItsLine() throws IOException {
        try (CompactMbCache cache = cache(4, 1024); CompactMbCache restored = cache(4, 1024)) {
            for (int key = 0; key < 10; key++) {
                assertTrue(cache.create(key, key, key % 2 == 0));
            }
            cache.shrink(4);
            List<Integer> order = snapshotKeys(cache); // from the hand, which a restored cache starts at the table's start
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            assertEquals(6, cache.writeSnapshot(out));
            assertEquals(6, restored.readSnapshot(new ByteArrayInputStream(out.toByteArray())));
            List<Integer> rebuilt = snapshotKeys(restored);
            int start = rebuilt.indexOf(order.get(0));
            List<Integer> rotated = new ArrayList<>(rebuilt.subList(start, 6));
            rotated.addAll(rebuilt.subList(0, start));
            assertEquals(order, rotated, "the same cyclic order, from the restored cache's own hand");
            assertEquals(1, restored.shrink(1));
            assertFalse(org.mbcache.contract.Pairs.isCached(restored, rebuilt.get(0), rebuilt.get(0)),
                    "the restored cache reclaims its snapshot's first pair first");
        }
    }

    @Test
    void aSnapshotThatACloseOvertakesFailsRatherThanEndingShort() {
        CompactMbCache cache = cache(4, 1024);
        for (int key = 0; key < 10; key++) {
            cache.create(key, key, true);
        }
        OutputStream closing = new OutputStream() {
            @Override
            public void write(int b) {
                cache.close();
            }

            @Override
            public void write(byte[] bytes, int offset, int length) {
                cache.close();
            }
        };
        assertThrows(IllegalStateException.class, () -> cache.writeSnapshot(closing));
    }

    @Test
    void aSnapshotStartedFromTheStreamOfAnotherIsASecondWalk() throws IOException {
        try (CompactMbCache cache = cache(4, 1024)) {
            for (int key = 0; key < 10; key++) {
                cache.create(key, key, true);
            }
            List<Integer> inner = new ArrayList<>();
            OutputStream nesting = new OutputStream() {
                @Override
                public void write(int b) {}

                @Override
                public void write(byte[] bytes, int offset, int length) {
                    if (inner.isEmpty()) {
                        try {
                            inner.addAll(snapshotKeys(cache));
                        } catch (IOException e) {
                            throw new AssertionError(e);
                        }
                    }
                }
            };
            List<Integer> outer = snapshotKeys(cache);
            assertEquals(10, cache.writeSnapshot(nesting));
            assertEquals(outer, inner);
        }
    }

    @Test
    void anyBucketCountHoldsEveryPairAndOverflowedChainsAreFound() {
        for (long buckets : new long[] {1, 3, 7, 1000}) {
            // A fixed seed: creates into a chain at the cap evict older pairs, and under this seed no
            // chain of the 3,000 keys reaches it in any of these tables.
            try (CompactMbCache cache = new CompactMbCache(CompactMbCache.builder().maxEntries(1 << 14)
                    .executor(Runnable::run).memoryPressureReclaim(false).hashSeed(42), buckets)) {
                for (int key = 0; key < 3000; key++) {
                    assertTrue(cache.create(key * 31, key, key % 2 == 0));
                    assertTrue(cache.bucketOf(key * 31) >= 0 && cache.bucketOf(key * 31) < buckets);
                }
                cache.checkChains();
                for (int key = 0; key < 3000; key++) {
                    long h = cache.getHandle(key * 31, key);
                    assertNotEquals(CompactMbCache.NO_ENTRY, h, "pair " + key + " in " + buckets + " buckets");
                    cache.release(h);
                    long first = cache.findFirstHandle(key * 31);
                    assertEquals(key % 2 == 0, first != CompactMbCache.NO_ENTRY);
                    if (first != CompactMbCache.NO_ENTRY) {
                        cache.release(first);
                    }
                    assertEquals(CompactMbCache.NO_ENTRY, cache.getHandle(key * 31, key + 1));
                    assertEquals(CompactMbCache.NO_ENTRY, cache.findFirstHandle(-1 - key));
                }
                for (int key = 0; key < 3000; key += 3) {
                    assertEquals(CompactMbCache.NO_ENTRY, cache.deleteOrGetHandle(key * 31, key));
                }
                cache.checkChains();
                for (int key = 0; key < 3000; key++) {
                    CacheEntry entry = cache.get(key * 31, key);
                    assertEquals(key % 3 != 0, entry != null);
                    if (entry != null) {
                        entry.close();
                    }
                }
            }
        }
    }

    @Test
    void defaultSizingKeepsAboutSixABucket() {
        assertEquals(166_667, CompactTableSizes.defaultBuckets(1_000_000));
        assertEquals(1, CompactTableSizes.defaultBuckets(1));
        assertEquals(1 << 26, CompactTableSizes.defaultBuckets(Long.MAX_VALUE));
        try (CompactMbCache cache = CompactMbCache.sizedFromMaxEntries(CompactMbCache.builder().maxEntries(1_000_000)
                .memoryPressureReclaim(false))) {
            assertEquals(18, cache.bucketBits());
            assertEquals(KernelPortOptions.defaultChainCapOfBuckets(1_000_000, 166_667), cache.chainCap());
        }
        assertThrows(IllegalArgumentException.class, () -> CompactMbCache.sizedFromMaxEntries(CompactMbCache.builder()));
    }

    @Test
    void aPowerOfTwoBucketCountPicksMbCachesBuckets() {
        try (CompactMbCache compact = new CompactMbCache(CompactMbCache.builder().hashSeed(5L)
                .memoryPressureReclaim(false), 1 << 9);
                MbCache port = MbCache.builder().bucketBits(9).hashSeed(5L).build()) {
            for (int key = 0; key < 10_000; key++) {
                assertEquals(port.bucketOf(key * 7919), compact.bucketOf(key * 7919));
            }
        }
    }

}
