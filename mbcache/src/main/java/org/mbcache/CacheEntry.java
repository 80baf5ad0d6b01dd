package org.mbcache;

/**
 * One cached (key, value) pair, handed to a caller with a reference taken for it.
 *
 * <p>Every entry returned by {@link DedupCache#findFirst}, {@link DedupCache#findNext},
 * {@link DedupCache#get} or {@link DedupCache#deleteOrGet} carries one reference that the caller
 * owns and must give back exactly once, with {@link DedupCache#release} or {@link #close()} (or by
 * passing it to {@link DedupCache#findNext}). While any caller holds a reference, the cache never
 * removes the entry: neither reclaim nor {@code deleteOrGet} takes an entry somebody uses.
 *
 * <p>The cache counts references; it does not know who holds them. It rejects a release that would
 * give back more references than were handed out in all, but if one holder releases twice while
 * another still holds the entry, the count looks exactly as if both had released once, and the entry
 * can then be removed under the second holder. Release exactly once per entry handed out (the
 * contract, section 3).
 *
 * <p>Two entries handed out for one cached pair are {@linkplain Object#equals equal}, with one hash
 * code; a backend may hand out the same object each time ({@link MbCache}) or a new one per lookup
 * ({@link CompactMbCache}, which keeps no object per entry). Compare entries with {@code equals}.
 *
 * <pre>{@code
 * try (CacheEntry e = cache.get(hash, block)) {   // e may be null: try-with-resources skips it
 *     if (e != null) { ... }
 * }
 * }</pre>
 */
public interface CacheEntry extends AutoCloseable {

    /**
     * The 32-bit key (a hash of the content). Immutable.
     *
     * @return the key
     */
    int key();

    /**
     * The 64-bit value (the block or object id). Immutable.
     *
     * @return the value
     */
    long value();

    /**
     * Whether {@link DedupCache#findFirst}/{@link DedupCache#findNext} may hand this entry out (ext4's
     * {@code MBE_REUSABLE_B}). A volatile read of a flag that other threads may change at any time.
     *
     * @return whether the entry is reusable now
     */
    boolean reusable();

    /**
     * Sets or clears the reusable flag. The update is atomic with the entry's other flag and its
     * reference count, so a concurrent {@link DedupCache#touch} is never lost (kernel fix
     * a44e84a9b776). The caller should hold a reference to the entry.
     *
     * @param reusable the new value of the flag
     * @throws IllegalStateException if the entry's cache has been closed
     */
    void setReusable(boolean reusable);

    /**
     * Releases the caller's reference to its cache: the same as {@code cache.release(this)}.
     *
     * @throws IllegalStateException if more references to the entry are released than were handed
     *     out in all, or its cache has been closed
     */
    @Override
    void close();
}
