package org.mbcache;

import static org.mbcache.CompactMbCache.NO_ENTRY;

import java.util.Arrays;
import java.util.Objects;
import org.mbcache.internal.Lifecycle;

/**
 * {@link CompactMbCache#findFirstHandles} and {@link CompactMbCache#getHandles}: many keys'
 * {@code findFirstHandle}, or many pairs' {@code getHandle}, in one call, their cache misses
 * overlapped.
 *
 * <p><b>Contract.</b> For each {@code i} in {@code [0, keys.length)}, {@code handles[i]} is what
 * {@code findFirstHandle(keys[i])} returns: the handle of the newest reusable entry of the key,
 * referenced for the caller, or {@link CompactMbCache#NO_ENTRY}; the call returns how many were
 * found. By pair, {@code handles[i]} is what {@code getHandle(keys[i], values[i])} returns: the
 * handle of the entry with exactly that pair, reusable or not, or {@code NO_ENTRY}. Each key is one
 * lookup of its own, the walk of {@code findFirstHandle} (or {@code getHandle}), tagged as those
 * methods tag their handles, and counted in the statistics as one hit or miss; a key twice in a
 * batch is looked up twice, and a hit gives the caller two references, two handles to release. The
 * lookups are not one atomic step: each sees the cache as it is when that key is walked. What a
 * single lookup does once per key, the batch does once per call: the check that the cache is open
 * (before the first key; and after the last if any key missed, as a single lookup checks its miss,
 * since a {@code close()} that ran meanwhile emptied the cache), and the count (every lookup made,
 * when the call returns or throws). {@code handles} past {@code keys.length} is not written, nor is
 * any array past it read. The arguments are checked before any reference is taken:
 * {@link NullPointerException} for a null array, {@link IllegalArgumentException} if
 * {@code values} or {@code handles} is shorter than {@code keys}, then
 * {@link IllegalStateException} if the cache is closed. A lookup that throws part-way (a
 * {@code close()} racing the batch; a pair held by more callers than a cold slot counts) leaves
 * the caller nothing to release: the references the call took are given back first (where the
 * cache is closed meanwhile there is nothing to give back: {@code close()} dropped every count),
 * {@code handles[0, keys.length)} is set to {@code NO_ENTRY}, and the exception is rethrown.
 *
 * <p><b>Why batching.</b> Once the table is out of the processor caches, a hit costs its line's
 * miss, and the locked instructions of the reference count wait for the loads before them, so one
 * lookup's miss cannot overlap the next one's as a plain map's {@code get}s do. Here the keys go in
 * groups of {@value #GROUP}, and each group's misses are started before any of its keys is walked,
 * in rounds of independent plain loads, each issued back to back so that the processor has them all
 * in flight at once: every key's bucket's line ({@link CompactTable#touchLineWords}; by pair, the
 * line's values too), then, those arrived, for each chain whose line says it has pool entries the
 * key may be among, one dependent level a round: the chain record's directory entry, the record,
 * and the meta words of its pool entries ({@link CompactWalk#touchPoolEntries}). A round loads one
 * level only, so that no key's next miss waits in line behind a branch on another key's loaded
 * word: within a round the keys' misses overlap, where a key's whole chain of misses in one loop
 * would leave the next key's for later. (A look-ahead that slid over the batch, touching a key
 * some keys before its walk, would gain nothing: a locked instruction waits for every load before
 * it, so each walk's reference CAS would wait for the touch issued just before it.) The sums go to
 * {@link CompactTable#consume}, so that the compiler keeps the loads. Then each key is walked as by
 * {@code findFirstHandle} (the optimistic walk of {@link CompactWalk#find}, validated as always:
 * the touched values mean nothing and are not used), finding what it reads in the cache, but
 * without asking the key filter first ({@link CompactWalk#findInLoadedLine}): the filter, in an
 * array of its own, would cost each key another miss (and TLB miss) to save a line already loaded. A group is
 * small enough that its lines are still in the L1 cache when it is walked. A table of fewer than
 * {@link #LOOK_AHEAD_MIN_BUCKETS} buckets is walked without the rounds: its lines stay in the
 * processor caches, and the rounds would only add their own work to each lookup.
 *
 * <p><b>Allocation-free.</b> No object, array or lambda per call or per key: the caller's arrays
 * are the only storage, and the failure path releases and fills in place.
 */
final class CompactBatchLookup {

    /** Keys touched before their walks: their lines fit in L1 together, and overlap in flight. */
    static final int GROUP = 16;

    /**
     * The fewest buckets whose table the batch looks ahead in: 2^16 lines and their values,
     * 7.5 MiB, about 390,000 entries at the sized load. A smaller table sits in the processor caches
     * between lookups, its walks' loads hit anyway, and the look-ahead's rounds would only add their
     * own work.
     */
    static final int LOOK_AHEAD_MIN_BUCKETS = 1 << 16;

    private CompactBatchLookup() {}

    /**
     * The batch by key (see the class comment): the arguments checked, then each group of
     * {@link #GROUP} keys touched and walked as by {@code cache.findFirstHandle}.
     *
     * @return how many keys were found
     */
    static int findFirstHandles(CompactMbCache cache, CompactTable table, Lifecycle lifecycle, int[] keys,
                                long[] handles) {
        return lookUp(cache, table, lifecycle, keys, null, handles);
    }

    /**
     * The batch by pair: as {@link #findFirstHandles}, each pair walked as by
     * {@code cache.getHandle(keys[i], values[i])}.
     *
     * @return how many pairs were found
     */
    static int getHandles(CompactMbCache cache, CompactTable table, Lifecycle lifecycle, int[] keys, long[] values,
                          long[] handles) {
        Objects.requireNonNull(values, "values");
        return lookUp(cache, table, lifecycle, keys, values, handles);
    }

    /**
     * Both batches: by key where {@code values} is null, else by pair. The arguments are checked
     * before any reference is taken.
     */
    private static int lookUp(CompactMbCache cache, CompactTable table, Lifecycle lifecycle, int[] keys,
                              long[] values, long[] handles) {
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(handles, "handles");
        if (values != null && values.length < keys.length) {
            throw new IllegalArgumentException("values is shorter than keys: " + values.length + " < " + keys.length);
        }
        if (handles.length < keys.length) {
            throw new IllegalArgumentException("handles is shorter than keys: " + handles.length + " < " + keys.length);
        }
        lifecycle.ensureOpen();
        boolean lookAhead = table.buckets >= LOOK_AHEAD_MIN_BUCKETS;
        int found = 0;
        int done = 0;
        try {
            while (done < keys.length) {
                int end = Math.min(keys.length, done + GROUP);
                if (lookAhead) {
                    table.consume(touch(table, keys, done, end, values != null, handles != values ? handles : null));
                }
                for (; done < end; done++) {
                    long handle = values == null ? cache.lookUpForBatch(keys[done], 0, false, lookAhead)
                            : cache.lookUpForBatch(keys[done], values[done], true, lookAhead);
                    handles[done] = handle;
                    found += handle != NO_ENTRY ? 1 : 0;
                }
            }
            if (found < keys.length) {
                lifecycle.missUnlessClosed();
            }
        } catch (Throwable failure) {
            giveBack(cache, lifecycle, handles, done, failure);
            Arrays.fill(handles, 0, keys.length, NO_ENTRY);
            throw failure;
        } finally {
            cache.countBatch(found, done - found);
        }
        return found;
    }

    /**
     * The sum of the rounds of look-ahead over the keys of {@code keys[from, to)} (see the class
     * comment): their buckets' lines, then, for the chains whose line says they have pool entries the
     * key may be among, the chain records' directory entries, the records, and the pool entries'
     * meta words, one dependent level a round. A key's line holds the meta words its walk compares
     * and CASes, so the first round is all the misses a hit in a home slot has; the others, the rest
     * of a hit in a pool slot's. The first round loads the line alone, not the key filter, which is
     * in an array of its own (another page, so a TLB miss as well as a cache miss at the table sizes
     * where the look-ahead runs): the walks that follow skip it
     * ({@link CompactWalk#findInLoadedLine}). The directory entries the second round loads wait in
     * {@code scratch[from, to)} for the rounds after it, where the caller's {@code handles} can hold
     * them (the walks overwrite them); where the caller passed one array as both {@code values} and
     * {@code handles} ({@code scratch} null), each round finds its key's entry again instead, in
     * the cache by then, so that no value is overwritten before its walk reads it.
     */
    private static long touch(CompactTable table, int[] keys, int from, int to, boolean byPair, long[] scratch) {
        long sum = 0;
        for (int i = from; i < to; i++) {
            int bucket = table.bucketOf(keys[i]);
            sum += table.touchLineWords(bucket) + (byPair ? table.touchHomeValues(bucket) : 0);
        }
        for (int i = from; i < to; i++) {
            int entry = poolRecordEntry(table, keys[i]);
            if (scratch != null) {
                scratch[i] = entry;
            }
            sum += entry;
        }
        for (int i = from; i < to; i++) {
            sum += CompactWalk.touchRecord(table, scratch != null ? (int) scratch[i] : poolRecordEntry(table, keys[i]));
        }
        for (int i = from; i < to; i++) {
            sum += CompactWalk.touchPoolEntries(table, scratch != null ? (int) scratch[i] : poolRecordEntry(table, keys[i]));
        }
        return sum;
    }

    /** {@link CompactWalk#poolRecordEntry} of {@code key}'s bucket and filter mix. */
    private static int poolRecordEntry(CompactTable table, int key) {
        long keyed = table.keyedHash(key);
        return CompactWalk.poolRecordEntry(table, table.bucketOfHash(keyed), key, table.filterMixOfHash(keyed));
    }

    /**
     * Releases the handles of {@code handles[0, taken)}, the lookups done before {@code failure}.
     * A release that fails on an open cache is added to {@code failure} as suppressed; on a closed
     * one it is expected ({@code close()} dropped the counts) and dropped.
     */
    private static void giveBack(CompactMbCache cache, Lifecycle lifecycle, long[] handles, int taken, Throwable failure) {
        for (int i = 0; i < taken; i++) {
            if (handles[i] == NO_ENTRY) {
                continue;
            }
            try {
                cache.release(handles[i]);
            } catch (Throwable releaseFailure) {
                if (lifecycle.isOpen()) {
                    failure.addSuppressed(releaseFailure);
                }
            }
            handles[i] = NO_ENTRY;
        }
    }
}
