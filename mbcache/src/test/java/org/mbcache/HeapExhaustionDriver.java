package org.mbcache;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.SplittableRandom;
import org.mbcache.caffeine.CaffeineDedupCache;

/**
 * The program {@link HeapExhaustionTest} runs in a fresh JVM with a small heap: it fills the heap
 * with ballast until an allocation fails, then drives a cache with random operations (snapshots
 * written and restored among them), each of which may meet an {@link OutOfMemoryError} at
 * whatever allocation it reaches first: the ballast is loosened by a random amount up to 2 KiB
 * after each failure, and tightened again after each success.
 *
 * <p>Then it drops the ballast and checks that the cache is whole: every reference it still holds
 * released, no pair held by anybody else (each cached pair's {@code deleteOrGet} removes it), every
 * pair creatable again once all were deleted (no request or entry left behind), the chains well
 * formed (the compact layout) and, on the kernel port, the size what the lookups find and the
 * statistics' books balanced. Prints {@value #DONE} and the failures it met, or throws.
 *
 * <p>Everything the driver itself needs while the heap is full is allocated before: its
 * bookkeeping is primitive arrays, and a warm-up without ballast runs every operation first, so no
 * class is loaded or initialized under pressure.
 */
final class HeapExhaustionDriver {
    static final String DONE = "heap-exhaustion-driver: done";

    private static final int KEYS = 128;
    private static final int VALUES_PER_KEY = 16;
    private static final int PAIRS = KEYS * VALUES_PER_KEY;
    private static final int MAX_ENTRIES = 256;
    private static final int HELD = 48;
    private static final int OPERATIONS = 400;

    private HeapExhaustionDriver() {}

    /**
     * Runs the driver.
     *
     * @param args {@code BACKEND SEED}: {@code mbcache}, {@code mbcache-allocfirst}, {@code compact} or
     *     {@code caffeine}
     */
    public static void main(String[] args) {
        DedupCache cache = open(args[0]);
        new HeapExhaustionDriver().run(cache, Long.parseLong(args[1]));
    }

    static DedupCache open(String backend) {
        switch (backend) {
            case "mbcache":
                return MbCache.builder().bucketBits(4).maxEntries(MAX_ENTRIES).executor(Runnable::run)
                        .memoryPressureReclaim(false).hashSeed(1).build();
            case "mbcache-allocfirst":
                return MbCache.builder().bucketBits(4).maxEntries(MAX_ENTRIES).executor(Runnable::run)
                        .createStrategy(CreateStrategy.ALLOCATE_FIRST).memoryPressureReclaim(false).hashSeed(1).build();
            case "compact":
                return CompactMbCache.builder().bucketBits(4).maxEntries(MAX_ENTRIES).executor(Runnable::run)
                        .memoryPressureReclaim(false).hashSeed(1).build();
            case "caffeine":
                return CaffeineDedupCache.builder().maxEntries(MAX_ENTRIES).executor(Runnable::run).build();
            default:
                throw new IllegalArgumentException("unknown backend: " + backend);
        }
    }

    private final CacheEntry[] held = new CacheEntry[HELD];
    private int heldCount;
    /** 1 KiB pieces to fill a 16 MiB heap, then 16-byte ones to fill the gaps each operation leaves. */
    private final byte[][] ballast = new byte[128 * 1024][];
    private int ballastCount;
    private long failures;
    private long creates;
    /** A snapshot of the cache at its bound, read again and again (reset, never reallocated). */
    private ByteArrayInputStream snapshot;
    /** Where snapshots are written: counts the bytes, keeps none, allocates nothing. */
    private final OutputStream sink = new OutputStream() {
        @Override
        public void write(int b) {
            written++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            written += len;
        }
    };
    private long written;
    private long restored;

    private void run(DedupCache cache, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        for (int pair = 0; pair < MAX_ENTRIES; pair++) {
            cache.create(keyOf(pair), pair, true);
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        snapshot(cache, bytes);
        snapshot = new ByteArrayInputStream(bytes.toByteArray());
        for (int i = 0; i < 20_000; i++) {
            operate(cache, random); // warm-up: every path loaded, compiled and initialized
        }
        releaseAll(cache);
        long createsBefore = cache.stats().creates();
        creates = 0;
        restored = 0;
        written = 0;
        fill();
        for (int i = 0; i < OPERATIONS; i++) {
            try {
                operate(cache, random);
                tighten();
            } catch (Error expected) {
                if (!metAFullHeap(expected)) {
                    throw expected;
                }
                failures++;
                loosen(random.nextInt(2048));
            }
        }
        int pieces = ballastCount;
        loosen(Long.MAX_VALUE);
        System.gc();
        check(cache, createsBefore);
        System.out.println(DONE + " failures=" + failures + " (pairs restored " + restored + ", snapshot bytes written "
                + written + ", ballast at the end " + pieces + " pieces)");
    }

    /**
     * Whether the error is an {@link OutOfMemoryError} or was caused by one. The JDK may report an
     * allocation's failure as another error: the code it generates for method handles wraps what
     * fails there in an {@link InternalError}, and an operation of the Caffeine backend has met a
     * full heap as an {@code InternalError} caused by an {@code OutOfMemoryError}, now and then.
     * The cache must come out of those whole too: {@link #check} decides.
     */
    private static boolean metAFullHeap(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof OutOfMemoryError) {
                return true;
            }
        }
        return false;
    }

    /**
     * One random operation; the driver's bookkeeping follows the contract's word on what a throwing
     * call did. A snapshot first makes room in the heap for its buffers (a random amount up to 96 KiB
     * of ballast), and a restore in the cache too, so that either may fail anywhere from its first
     * buffer on.
     */
    private void operate(DedupCache cache, SplittableRandom random) {
        int pair = random.nextInt(PAIRS);
        int key = keyOf(pair);
        long value = pair;
        switch (random.nextInt(11)) {
            case 9:
                loosen(random.nextInt(96 * 1024));
                snapshot(cache, sink);
                break;
            case 10:
                cache.shrink(MAX_ENTRIES / 2);
                loosen(random.nextInt(96 * 1024));
                snapshot.reset();
                restore(cache, snapshot);
                break;
            case 0:
            case 1:
                if (cache.create(key, value, random.nextBoolean())) {
                    creates++;
                    if (random.nextBoolean()) {
                        hold(cache, cache.get(key, value)); // a first lookup: the compact layout's entry object
                    }
                }
                break;
            case 2:
                hold(cache, cache.findFirst(key));
                break;
            case 3:
                if (heldCount > 0) {
                    // findNext releases the entry it is given, whatever happens
                    CacheEntry entry = takeHeld(random.nextInt(heldCount));
                    hold(cache, cache.findNext(entry));
                }
                break;
            case 4:
                hold(cache, cache.get(key, value));
                break;
            case 5:
                if (heldCount > 0) {
                    // a release whose wake-up failed did release
                    cache.release(takeHeld(random.nextInt(heldCount)));
                }
                break;
            case 6:
                if (heldCount > 0) {
                    CacheEntry entry = held[random.nextInt(heldCount)];
                    if (random.nextBoolean()) {
                        cache.touch(entry);
                    } else {
                        entry.setReusable(random.nextBoolean());
                    }
                }
                break;
            case 7:
                hold(cache, cache.deleteOrGet(key, value));
                break;
            default:
                cache.shrink(1 + random.nextInt(32));
                break;
        }
    }

    private static void snapshot(DedupCache cache, OutputStream out) {
        try {
            cache.writeSnapshot(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // never: neither stream throws
        }
    }

    private void restore(DedupCache cache, ByteArrayInputStream in) {
        try {
            restored += cache.readSnapshot(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // never: the snapshot is whole
        }
    }

    private static int keyOf(int pair) {
        return (pair % KEYS) * 0x9E37_79B9;
    }

    private void hold(DedupCache cache, CacheEntry entry) {
        if (entry == null) {
            return;
        }
        if (heldCount == HELD) {
            cache.release(entry);
        } else {
            held[heldCount++] = entry;
        }
    }

    private CacheEntry takeHeld(int i) {
        CacheEntry entry = held[i];
        held[i] = held[--heldCount];
        held[heldCount] = null;
        return entry;
    }

    private void releaseAll(DedupCache cache) {
        while (heldCount > 0) {
            cache.release(takeHeld(heldCount - 1));
        }
    }

    /** Fills the heap: 1 KiB pieces until one fails, then {@link #tighten()}. */
    private void fill() {
        allocateUntilFull(1024);
        tighten();
    }

    /**
     * Allocates the smallest arrays there are (16 bytes) until one fails, so that (the JVM run without
     * thread-local allocation buffers) no byte is left free for the next operation but the garbage it
     * makes itself.
     */
    private void tighten() {
        allocateUntilFull(0);
    }

    private void allocateUntilFull(int pieceLength) {
        try {
            while (ballastCount < ballast.length) {
                ballast[ballastCount] = new byte[pieceLength];
                ballastCount++;
            }
        } catch (OutOfMemoryError full) {
            // no room for another piece of this size
        }
    }

    /** Frees the newest pieces until at least {@code bytes} (as array lengths, plus 16 a piece) are free. */
    private void loosen(long bytes) {
        long freed = 0;
        while (freed < bytes && ballastCount > 0) {
            freed += ballast[--ballastCount].length + 16;
            ballast[ballastCount] = null;
        }
    }

    private void check(DedupCache cache, long createsBefore) {
        releaseAll(cache);
        CacheStats stats = cache.stats();
        if (stats.creates() - createsBefore < creates) {
            throw new AssertionError("creates that returned true: " + creates + ", counted: " + (stats.creates() - createsBefore));
        }
        // The Caffeine backend's counts are exact only where Caffeine itself did not fail (docs/operations.md)
        boolean exactCounts = !(cache instanceof CaffeineDedupCache);
        long removed = stats.deletes() + stats.entriesReclaimed() + stats.chainCapReclaims();
        if (exactCounts && stats.creates() + stats.restores() - removed != cache.size()) {
            throw new AssertionError("the books do not balance: " + stats + ", size " + cache.size());
        }
        if (cache instanceof CompactMbCache) {
            ((CompactMbCache) cache).checkChains();
        }
        long found = 0;
        for (int pair = 0; pair < PAIRS; pair++) {
            CacheEntry entry = cache.get(keyOf(pair), pair);
            if (entry != null) {
                found++;
                cache.release(entry);
            }
        }
        if (exactCounts && found != cache.size()) {
            throw new AssertionError("lookups find " + found + " pairs, size() says " + cache.size());
        }
        for (int pair = 0; pair < PAIRS; pair++) {
            CacheEntry busy = cache.deleteOrGet(keyOf(pair), pair);
            if (busy != null) {
                throw new AssertionError("pair " + pair + " is held by nobody the driver knows of: a leaked reference");
            }
        }
        if (exactCounts && cache.size() != 0) {
            throw new AssertionError("size " + cache.size() + " after every pair was deleted");
        }
        for (int pair = 0; pair < PAIRS; pair++) {
            if (!cache.create(keyOf(pair), pair, true)) {
                throw new AssertionError("pair " + pair + " refused by an empty cache: a request or entry was left behind");
            }
        }
        if (cache.size() > 2L * MAX_ENTRIES + 1) {
            throw new AssertionError("size " + cache.size() + " past twice the bound");
        }
        cache.close();
    }
}
