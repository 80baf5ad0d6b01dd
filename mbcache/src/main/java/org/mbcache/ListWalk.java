package org.mbcache;

import org.mbcache.internal.Lifecycle;

/**
 * The walks over a {@link ListTable}'s chains that {@link MbCache} runs: the lookups of kernel
 * {@code __entry_find} and {@code mb_cache_entry_get} (optimistic, then under the bucket's bit if a
 * writer was in the bucket), the critical sections of {@code mb_cache_entry_create} (the duplicate
 * check, the request list, the insertion with the chain cap's reclaim) and of
 * {@code mb_cache_entry_delete_or_get}. Static methods over the table, so that a lookup follows no
 * reference the façade's own would not; the façade keeps the counting, listing and releasing that
 * come after a critical section.
 *
 * <h2>The walk protocol</h2>
 * A lookup first reads the chain without the bit ({@link ListTable#tryFindReusable},
 * {@link ListTable#tryGet}): it takes its reference by increment-if-not-zero and then validates the
 * version it read, so a hit it answers was in its chain when its count went up. Only where that
 * read met a writer ({@link ListTable#RETRY_LOCKED}) does the walk take the bit and read the chain
 * again, newest first, with the same decisions. A create checks for its pair optimistically as
 * well ({@link ListTable#versionWithout}), and then decides under the bit; an entry goes into its
 * chain, and leaves it, only under the bit.
 *
 * <p>The reference-count side: only a claim (a CAS of the count from 1, the cache's own
 * reference, to 0: {@link #deleteOrAcquire}, the chain cap, a reclaim pass) or {@code close()}'s
 * kill takes an entry out of its chain, and each runs under the entry's bucket bit and unhashes the
 * entry before the bit is let go. So an entry found in its chain under the bit has a count above
 * zero, and nobody else can find it dead there.
 *
 * <h2>Memory order</h2>
 * This class chooses no access mode of its own. The chain arrays and the request list are plain
 * fields written only by the bit's holder and read under the bit: {@link ListTable#lock} is an
 * acquire and {@link ListTable#unlock} a release, so each holder sees everything the previous one
 * wrote. The optimistic reads are {@link ListTable}'s, with the seqlock argument of
 * {@link BucketLockWord}. The entries' state words are changed by CAS (volatile) whether or not
 * the bit is held, because releases and flag updates run outside it. A new entry is published by
 * the unlock that follows its insertion, after its constructor ran.
 *
 * <h2>Class initialization</h2>
 * No static state beyond constants: the class has no static initializer, so its first use (a
 * cache's first operation) cannot fail in one and leave it unusable for the life of the JVM; the
 * sentinel answer {@link ListTable#DELETED} is made with the table's class, when a cache is built.
 *
 * <h2>Failure atomicity</h2>
 * A critical section here that allocates (a grown chain or request array) does so before it
 * changes anything, so an {@link OutOfMemoryError} leaves the bucket as it was; {@code unlock} is
 * one load and one store.
 */
final class ListWalk {

    /** Static methods only. */
    private ListWalk() {}

    /** What {@link #hashUnlessCached} and {@link #restoreUnlessCached} answer for a pair already cached. */
    static final long ALREADY_CACHED = -1;
    /** What {@link #restoreUnlessCached} answers for a chain at the cap: nothing created. */
    static final long CHAIN_FULL = -2;

    /**
     * Kernel {@code __entry_find}: the newest reusable live entry with {@code key} in bucket
     * {@code bucket}, below {@code after} in the chain if {@code after} is still there, else from the
     * chain's newest; referenced for the caller, or {@code null}. Optimistic first; under the
     * bucket's bit only if a writer was in the bucket. The caller counts the lookup.
     *
     * @param after the entry to continue below ({@code findNext}), or {@code null} ({@code findFirst})
     */
    static ListEntry find(ListTable table, int bucket, int key, ListEntry after) {
        ListEntry found = table.tryFindReusable(bucket, key, after);
        return found != ListTable.RETRY_LOCKED ? found : lookupLocked(table, bucket, key, 0, false, after);
    }

    /**
     * Kernel {@code mb_cache_entry_get}: the live entry with exactly this pair in bucket
     * {@code bucket}, referenced for the caller, or {@code null}. Optimistic first, as {@link #find};
     * under the bit, an entry whose acquire fails (its count reached zero) is a miss. The caller
     * counts the lookup.
     */
    static ListEntry get(ListTable table, int bucket, int key, long value) {
        ListEntry found = table.tryGet(bucket, key, value);
        return found != ListTable.RETRY_LOCKED ? found : lookupLocked(table, bucket, key, value, true, null);
    }

    /**
     * {@link #get} ({@code byPair}) or {@link #find} (by key, below {@code after}) under the
     * bucket's bit, for a lookup whose optimistic read met a writer.
     */
    private static ListEntry lookupLocked(ListTable table, int bucket, int key, long value, boolean byPair,
                                          ListEntry after) {
        table.lock(bucket);
        try {
            if (byPair) {
                int index = table.indexOf(bucket, key, value);
                return index >= 0 && table.entryAt(bucket, index).tryAcquire() ? table.entryAt(bucket, index) : null;
            }
            int from = table.length(bucket);
            if (after != null) {
                int at = table.indexOfEntry(bucket, after);
                if (at >= 0) {
                    from = at;
                }
            }
            return table.findReusable(bucket, key, from);
        } finally {
            table.unlock(bucket);
        }
    }

    /**
     * Steps 1-2 of the request-list create (kernel {@code mb_cache_entry_create} with the 2019
     * request list; contract section 5): {@code false} if the pair is cached or requested (a
     * duplicate), else the pair is now requested in bucket {@code bucket} and the caller must
     * either hash it ({@link #hashRequested}) or withdraw it ({@link ListTable#withdrawRequest}).
     *
     * <p>A pair that the optimistic read finds in its chain is refused there, without the bit: the
     * create linearizes at that validated read, where the pair was cached, so a refused duplicate
     * writes no line another thread writes. A pair the read found absent is not looked for in the
     * chain again under the bit if the bit was taken from the version the read validated: then no
     * critical section ran in between, and the chain is the one read. (The request list, which the
     * read does not see, is always checked.) That spares a create one scan of its chain, which
     * counts where a flood keeps the chain at its cap. The version repeats after 2^31 critical
     * sections of the bucket: a create stalled across exactly that many, one of which inserted its
     * pair, would insert the pair twice (the contract, section 5, says why that bound is accepted).
     */
    static boolean requestPair(ListTable table, int bucket, int key, long value) {
        long versionWithout = table.versionWithout(bucket, key, value);
        if (versionWithout == ListTable.CONTAINED) {
            return false;
        }
        long lockedAt = table.lock(bucket);
        try {
            if (table.hasRequest(bucket, key, value)
                    || (lockedAt != versionWithout && table.indexOf(bucket, key, value) >= 0)) {
                return false;
            }
            table.addRequest(bucket, key, value);
        } finally {
            table.unlock(bucket);
        }
        return true;
    }

    /**
     * Step 4 of the request-list create: one critical section swaps the pair's request for its
     * entry, so that no twin can slip in between. Throws the closed cache's exception, hashing
     * nothing, if {@code close()} dropped the request with the chain or has begun.
     *
     * @return the chain cap's outcome, as {@link #hashNewest}
     */
    static long hashRequested(ListTable table, int bucket, ListEntry entry, int chainCap, Lifecycle lifecycle) {
        table.lock(bucket);
        try {
            boolean requested = table.removeRequest(bucket, entry.key, entry.value);
            if (!requested || lifecycle.isClosed()) {
                throw Lifecycle.closedWhileCreating(); // close() dropped the request with the chain, or will
            }
            return hashNewest(table, bucket, entry, chainCap);
        } finally {
            table.unlock(bucket);
        }
    }

    /**
     * The critical section of a {@link CreateStrategy#ALLOCATE_FIRST} create (mainline
     * {@code mb_cache_entry_create}), after allocating: checks the chain for the pair and hashes the
     * entry, reclaiming for the chain cap. Throws the closed cache's exception, hashing nothing, if
     * {@code close()} has begun.
     *
     * @return {@link #ALREADY_CACHED}, or the chain cap's outcome as {@link #hashNewest}
     */
    static long hashUnlessCached(ListTable table, int bucket, ListEntry entry, int chainCap, Lifecycle lifecycle) {
        return hashChecked(table, bucket, entry, chainCap, lifecycle, false);
    }

    /**
     * A restore's critical section ({@code MbCache.readSnapshot}): as {@link #hashUnlessCached}, but
     * the requests of concurrent request-list creates count as cached too, and it never reclaims: a
     * chain at the cap is {@link #CHAIN_FULL}, so that a restore evicts no pair.
     *
     * @return {@link #ALREADY_CACHED} (cached or requested), {@link #CHAIN_FULL}, or 0: hashed
     */
    static long restoreUnlessCached(ListTable table, int bucket, ListEntry entry, int chainCap, Lifecycle lifecycle) {
        return hashChecked(table, bucket, entry, chainCap, lifecycle, true);
    }

    /**
     * The critical section of {@link #hashUnlessCached} ({@code restore} false) and
     * {@link #restoreUnlessCached} ({@code restore} true): the duplicate check, the closed check,
     * for a restore the cap, and the insertion, under one hold of the bit.
     */
    private static long hashChecked(ListTable table, int bucket, ListEntry entry, int chainCap, Lifecycle lifecycle,
                                    boolean restore) {
        table.lock(bucket);
        try {
            if ((restore && table.hasRequest(bucket, entry.key, entry.value))
                    || table.indexOf(bucket, entry.key, entry.value) >= 0) {
                return ALREADY_CACHED;
            }
            if (lifecycle.isClosed()) {
                throw Lifecycle.closedWhileCreating();
            }
            if (restore && table.length(bucket) >= chainCap) {
                return CHAIN_FULL;
            }
            return hashNewest(table, bucket, entry, chainCap); // for a restore 0: below the cap, nothing reclaimed
        } finally {
            table.unlock(bucket);
        }
    }

    /**
     * The insertion of kernel {@code mb_cache_entry_create} ({@code hlist_bl_add_head}): hashes a
     * new entry as the newest of its chain, first reclaiming for the chain cap
     * ({@link ListTable#reclaimForRoom}). Bucket bit held. Allocates (a grown chain) before it
     * changes anything.
     *
     * @return 0 if the chain was below the cap; else the length the create found in the upper 32
     *     bits and the entries the cap reclaimed in the lower, which the caller takes off the entry
     *     count and leaves dead on the LRU list
     */
    private static long hashNewest(ListTable table, int bucket, ListEntry entry, int chainCap) {
        table.ensureRoom(bucket);
        int length = table.length(bucket);
        long capOutcome = 0;
        if (length >= chainCap) {
            capOutcome = ((long) length << 32) | table.reclaimForRoom(bucket, chainCap);
        }
        table.addNewest(bucket, entry);
        return capOutcome;
    }

    /**
     * The critical section of kernel {@code mb_cache_entry_delete_or_get} (the 2022 fix of the
     * journal-corruption race): removes the pair from bucket {@code bucket} if nobody but the cache
     * holds it ({@link ListTable#DELETED}: the caller counts it and leaves it dead on the LRU list),
     * else takes a reference for the caller (the entry). The kernel takes a reference as
     * {@code get} does and claims with a CAS of the count from 2 to 0; this claims with one CAS from
     * 1 to 0, the same decision without the reference taken and given back. The entry is unhashed
     * under the bit, so no other thread finds it dead in its chain. A miss ({@code null}) is checked
     * against a racing close under the bit ({@link Lifecycle#missUnlessClosed}), and then the only
     * way this throws.
     */
    static ListEntry deleteOrAcquire(ListTable table, int bucket, int key, long value, Lifecycle lifecycle) {
        table.lock(bucket);
        try {
            int index = table.indexOf(bucket, key, value);
            if (index < 0) {
                lifecycle.missUnlessClosed();
                return null;
            }
            ListEntry entry = table.entryAt(bucket, index);
            if (!entry.tryClaim()) {
                // Somebody holds it: hand it over, referenced. (In its chain under the bit, so its
                // count is above zero and the acquire succeeds.)
                if (entry.tryAcquire()) {
                    return entry;
                }
                lifecycle.missUnlessClosed();
                return null;
            }
            table.removeAt(bucket, index);
            return ListTable.DELETED;
        } finally {
            table.unlock(bucket);
        }
    }

    /** The length of bucket {@code bucket}'s chain, live entries only, read under its bit (tests). */
    static int chainLength(ListTable table, int bucket) {
        table.lock(bucket);
        try {
            return table.length(bucket);
        } finally {
            table.unlock(bucket);
        }
    }
}
