package org.mbcache;

import static org.mbcache.CompactLine.keyFilterBits;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The key filters of a {@link CompactTable}'s buckets: 32 bits a bucket, two of them set per key of
 * the bucket's chain ({@link CompactLine#keyFilterBits}, from the key's
 * {@link CompactTable#filterMix}), in {@code int[]} pages of {@code 2^pageBits} (at most 128 KiB:
 * no humongous objects). Four bytes a bucket, so the filters stay in the processor caches where the
 * buckets' lines do not: a lookup asks its bucket's filter first and answers a key the filter lacks
 * as a miss without reading the line.
 *
 * <p><b>Why a miss from the filter is right.</b> The filter covers every key of the chain: a create
 * sets its key's bits ({@link #add}, a release store) inside its critical section, before the entry
 * can be found; a rebuild ({@link #set}) clears only keys that left, inside the critical section
 * that removed them. A lookup's load ({@link #mayHold}, an acquire) that lacks a key's bits
 * linearizes the miss there: a create of the key takes effect at its filter store (a reader that
 * finds the filter without the bits is before it; one that reads the line meanwhile sees the odd
 * version and retries under the bit, after it), a removal at its lock CAS (every optimistic reader
 * after it retries), so the filter never turns away a key a linearization order has present. A
 * thread that learned of a create by any synchronization after the create returned sees its bits.
 */
final class CompactKeyFilters {

    private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);

    private final int[][] pages;
    private final int pageBits;
    private final int pageMask;

    /** All-empty filters for {@code buckets} buckets, in pages of {@code 2^pageBits} ints. */
    CompactKeyFilters(int buckets, int pageBits) {
        this.pageBits = pageBits;
        this.pageMask = (1 << pageBits) - 1;
        pages = new int[(int) ((buckets + (long) pageMask) >>> pageBits)][];
        for (int p = 0; p < pages.length; p++) {
            pages[p] = new int[Math.min(1 << pageBits, buckets - (p << pageBits))];
        }
    }

    /**
     * Whether bucket {@code b}'s filter has both bits of a key of this {@link CompactTable#filterMix}
     * (acquire): {@code false} means the key is in no chain of the bucket at the moment of the load.
     */
    boolean mayHold(int b, int mix) {
        int bits = keyFilterBits(mix);
        return ((int) INTS.getAcquire(pages[b >>> pageBits], b & pageMask) & bits) == bits;
    }

    /** Loads, and only loads, bucket {@code b}'s filter (plain, racy: for {@link CompactTable#touchLine}'s look-ahead). */
    int touch(int b) {
        return pages[b >>> pageBits][b & pageMask];
    }

    /** Adds a key's bits to bucket {@code b}'s filter (release). Bucket bit held. */
    void add(int b, int mix) {
        int[] page = pages[b >>> pageBits];
        INTS.setRelease(page, b & pageMask, page[b & pageMask] | keyFilterBits(mix));
    }

    /** Replaces bucket {@code b}'s filter (release): a rebuild from the keys left, or 0. Bucket bit held. */
    void set(int b, int filter) {
        INTS.setRelease(pages[b >>> pageBits], b & pageMask, filter);
    }

    /** The bytes the pages and their directory take. */
    long footprintBytes() {
        long bytes = 16L + 4L * pages.length;
        for (int[] page : pages) {
            bytes += 16L + 4L * page.length;
        }
        return bytes;
    }
}
