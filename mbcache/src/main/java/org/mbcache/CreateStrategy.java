package org.mbcache;

/**
 * How {@link MbCache#create(int, long, boolean)} guards against a duplicate (key, value) pair.
 *
 * <p>Both strategies give the same answers; they differ in what a refused duplicate costs. The
 * choice exists so the benchmark can reproduce, on the JVM, the before/after table of the 2019
 * kernel patch "mbcache: Speed up cache entry creation" (the contract, section 5).
 */
public enum CreateStrategy {

    /**
     * Mainline {@code mb_cache_entry_create()}: allocate and initialise the entry first, then lock the
     * bucket, look for a duplicate in the chain, and throw the new entry away if there is one. One
     * critical section per create; a refused duplicate still costs an allocation.
     */
    ALLOCATE_FIRST,

    /**
     * The 2019 patch: lock the bucket and look for the pair in the bucket's in-progress request list
     * and chain first; refuse a duplicate before allocating anything. Otherwise record a request,
     * unlock, allocate outside the lock, then lock again to swap the request for the entry. A
     * concurrent create of the same pair sees the request and is refused. The default.
     */
    REQUEST_LIST
}
