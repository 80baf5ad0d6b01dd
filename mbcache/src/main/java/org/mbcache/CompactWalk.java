package org.mbcache;

import static org.mbcache.CompactMbCache.NO_ENTRY;
import static org.mbcache.CompactSlots.REFERENCED;
import static org.mbcache.CompactSlots.count;
import static org.mbcache.CompactSlots.generation;
import static org.mbcache.CompactSlots.keyOf;
import static org.mbcache.CompactSlots.lvMeta;

/**
 * The walks over a {@link CompactTable}'s chains: the lookups of kernel {@code __entry_find} and
 * {@code mb_cache_entry_get} (optimistic, then under the bucket's bit if a writer was in the
 * bucket), the create's duplicate check, {@code deleteOrGet}'s critical section, and the chain
 * cap's reclaim. Static methods over the table,
 * so that a lookup follows no reference the façade's own would not. The slot word's side of each
 * step (the match, the acquire CAS, the claim) is {@link CompactSlots}'; its argument for the
 * optimistic walk (steps 2 and 3 of "Slot reuse") is the one these walks follow.
 */
final class CompactWalk {

    private CompactWalk() {}

    /** {@link #versionWithout}: the chain was read under a writer; check it under the bit. */
    static final long RETRY = -2L;
    /** {@link #versionWithout}: the pair is cached. */
    static final long CONTAINED = -3L;
    /** {@link #deleteOrAcquire}: the pair was removed and its slot freed. */
    static final long DELETED = -4L;

    /**
     * A lookup: by key, the newest reusable entry below {@code afterSlot} if that is in the chain
     * (else from the newest), or by pair ({@code byPair}); the handle, referenced for the caller,
     * or {@link CompactMbCache#NO_ENTRY}. Optimistic first, under the bucket's bit if a writer was
     * in the bucket.
     */
    static long find(CompactTable table, int key, long value, boolean byPair, int afterSlot) {
        long keyed = table.keyedHash(key);
        int bucket = table.bucketOfHash(keyed);
        long found = tryFind(table, bucket, keyed, key, value, byPair, afterSlot, true);
        return found != RETRY ? found : findLocked(table, bucket, table.fingerprintOfHash(keyed), key, value, byPair, afterSlot);
    }

    /** {@link #find} under the bucket's bit. */
    private static long findLocked(CompactTable table, int bucket, int print, int key, long value, boolean byPair,
                                   int afterSlot) {
        table.lock(bucket);
        try {
            int from = table.length(bucket);
            if (afterSlot != 0) {
                int at = table.positionOf(bucket, afterSlot);
                if (at >= 0) {
                    from = at;
                }
            }
            long found = NO_ENTRY;
            for (int pos = from - 1; pos >= 0 && found == NO_ENTRY; pos--) {
                int ref = table.refAt(bucket, pos);
                if (table.fingerprintOfRef(ref) == print) {
                    int slot = table.slotOfRef(ref);
                    found = CompactSlots.tryAcquireMatching(table, table.slotPage(slot), slot, key, value, byPair);
                }
            }
            return found;
        } finally {
            table.unlock(bucket);
        }
    }

    /**
     * The create's optimistic duplicate check: {@link #CONTAINED}, {@link #RETRY}, or the even
     * version under which the chain was read and found without the pair. {@code keyed} is the key's
     * {@link CompactTable#keyedHash}.
     */
    static long versionWithout(CompactTable table, int bucket, long keyed, int key, long value) {
        return tryFind(table, bucket, keyed, key, value, true, 0, false);
    }

    /**
     * The optimistic walk of {@link #find}: a handle, {@link CompactMbCache#NO_ENTRY}, or
     * {@link #RETRY}. Without {@code acquire} (the create's duplicate check, by pair) it takes no
     * reference and answers {@link #CONTAINED}, {@link #RETRY}, or the version under which the pair
     * was absent. {@code keyed} is the key's {@link CompactTable#keyedHash}, which gives its filter
     * bits and fingerprint.
     *
     * <p>Newest first: the record's inline references, then, only if the walk gets that far, the
     * overflow array, loaded there and not before ({@link #overflowCovering}), so that a hit among a
     * chain's newest 15 reads the record alone (see CompactTable's "Memory ordering").
     *
     * <p>A reference taken under a version that then fails to validate is given back
     * ({@link CompactSlots#release}) before the retry. That release is refused only where
     * {@code close()} killed the slot meanwhile (the walk's own reference kept the count above one
     * until then); the retry under the bit then finds the chain emptied and misses, which the
     * façade answers as a closed cache.
     */
    private static long tryFind(CompactTable table, int bucket, long keyed, int key, long value, boolean byPair,
                                int afterSlot, boolean acquire) {
        long head = table.laVersion(bucket);
        if (table.turnsAway(bucket, head, table.filterMixOfHash(keyed))) {
            return acquire ? NO_ENTRY : BucketLockWord.versionOf(head);
        }
        int print = table.fingerprintOfHash(keyed);
        int length = table.length(bucket);
        if (BucketLockWord.locked(head)) { // length() is in [0, 2^slotBits) whatever was read: never negative
            return RETRY;
        }
        int first = CompactTable.firstInline(length);
        int[] spill = null;
        int from = length;
        if (afterSlot != 0) {
            for (int pos = length - 1; pos >= 0; pos--) {
                if (pos < first && spill == null && (spill = overflowCovering(table, bucket, first)) == null) {
                    return RETRY;
                }
                if (table.slotOfRef(refAt(table, bucket, length, first, spill, pos)) == afterSlot) {
                    from = pos;
                    break;
                }
            }
        }
        for (int pos = from - 1; pos >= 0; pos--) {
            if (pos < first && spill == null && (spill = overflowCovering(table, bucket, first)) == null) {
                return RETRY;
            }
            int ref = refAt(table, bucket, length, first, spill, pos);
            if (table.fingerprintOfRef(ref) != print) {
                continue;
            }
            int slot = table.slotOfRef(ref);
            long[] page = table.laSlotPage(slot);
            if (page == null) {
                return RETRY;
            }
            long handle = acquire ? CompactSlots.tryAcquireMatching(table, page, slot, key, value, byPair)
                    : CompactSlots.matches(page, table.valueIndex(slot), lvMeta(page, table.valueIndex(slot)), key, value, true)
                    ? CONTAINED : NO_ENTRY;
            if (handle == NO_ENTRY) {
                continue;
            }
            if (table.validate(bucket, head)) {
                return handle;
            }
            if (acquire) { // the occupant it incremented (CompactSlots, "Slot reuse", step 3)
                CompactSlots.release(table, slot, page, table.valueIndex(slot), CompactSlots.generationOf(handle));
            }
            return RETRY;
        }
        return !table.validate(bucket, head) ? RETRY : acquire ? NO_ENTRY : BucketLockWord.versionOf(head);
    }

    /**
     * An optimistic read's overflow array, loaded when its walk first gets below the chain's first
     * inline position {@code first} (computed from the length it read): the array if it holds at
     * least {@code first} references, else {@code null} (a stale or torn read: a writer was in the
     * bucket; the caller retries). A reference taken from it is validated as any other.
     */
    private static int[] overflowCovering(CompactTable table, int bucket, int first) {
        int[] spill = table.lpOverflow(bucket);
        return spill != null && spill.length >= first ? spill : null;
    }

    /**
     * An optimistic read's reference at {@code pos} of a chain of the {@code length} it read: the
     * record's inline reference {@code length - 1 - pos} (0 the newest; below {@code INLINE}, as
     * {@code pos >= first}) from the chain's first inline position {@code first} up, below it
     * {@code spill[pos]} (the array {@link #overflowCovering} gave, which holds {@code first}).
     */
    private static int refAt(CompactTable table, int bucket, int length, int first, int[] spill, int pos) {
        return pos >= first ? table.inlineRef(bucket, length - 1 - pos) : spill[pos];
    }

    /** The chain position of a live pair, newest first, or -1. Bit held. */
    static int positionOfPair(CompactTable table, int bucket, int key, int print, long value) {
        for (int pos = table.length(bucket) - 1; pos >= 0; pos--) {
            int ref = table.refAt(bucket, pos);
            if (table.fingerprintOfRef(ref) == print) {
                int slot = table.slotOfRef(ref);
                long[] page = table.slotPage(slot);
                int at = table.valueIndex(slot);
                if (CompactSlots.matches(page, at, lvMeta(page, at), key, value, true)) {
                    return pos;
                }
            }
        }
        return -1;
    }

    /**
     * Reclaims the chain's oldest unheld entries until one more fits under {@code chainCap}: a
     * referenced one loses its flag and is passed over once. Bit held; allocation-free.
     *
     * @return the entries reclaimed
     */
    static int reclaimForRoom(CompactTable table, int bucket, int chainCap) {
        int reclaimed = 0;
        for (int round = 0; round < 2 && table.length(bucket) >= chainCap; round++) {
            int pos = 0;
            while (pos < table.length(bucket) && table.length(bucket) >= chainCap) {
                int slot = table.slotOfRef(table.refAt(bucket, pos));
                long[] page = table.slotPage(slot);
                int at = table.valueIndex(slot);
                long meta = lvMeta(page, at);
                if ((meta & REFERENCED) == 0 && CompactSlots.tryClaim(table, slot, page, at, meta)) {
                    table.removeAt(bucket, pos);
                    table.free(slot);
                    reclaimed++;
                    continue;
                }
                if ((meta & REFERENCED) != 0) {
                    CompactSlots.setFlag(page, at, generation(meta), REFERENCED, false);
                }
                pos++;
            }
        }
        return reclaimed;
    }

    /**
     * The critical section of {@code deleteOrGet}: removes the pair if nobody but the cache holds
     * it and frees its slot ({@link #DELETED}), else takes a reference for the caller (the handle),
     * or {@link CompactMbCache#NO_ENTRY} if it is not cached. The slot is freed under the bit: a
     * {@code close()} that returns after this found the chain without the pair, so it took the bit
     * after this, and a handle of the pair reads stale (its generation moved) after the close as
     * before it.
     */
    static long deleteOrAcquire(CompactTable table, int key, long value) {
        long keyed = table.keyedHash(key);
        int bucket = table.bucketOfHash(keyed);
        int print = table.fingerprintOfHash(keyed);
        table.lock(bucket);
        try {
            int pos = positionOfPair(table, bucket, key, print, value);
            if (pos < 0) {
                return NO_ENTRY;
            }
            int slot = table.slotOfRef(table.refAt(bucket, pos));
            long[] page = table.slotPage(slot);
            int at = table.valueIndex(slot);
            if (CompactSlots.tryClaim(table, slot, page, at, lvMeta(page, at))) {
                table.removeAt(bucket, pos);
                table.free(slot);
                return DELETED;
            }
            return CompactSlots.tryAcquireMatching(table, page, slot, key, value, true);
        } finally {
            table.unlock(bucket);
        }
    }

    /** The length of {@code key}'s chain, read under its bucket's bit (tests). */
    static int chainLength(CompactTable table, int key) {
        int bucket = table.bucketOf(key);
        table.lock(bucket);
        try {
            return table.length(bucket);
        } finally {
            table.unlock(bucket);
        }
    }

    /**
     * Checks that every live slot is in its key's chain and every chain reference is a live slot of
     * the chain's bucket; the first breach as an {@link AssertionError}. Quiet tables only; for tests.
     */
    static void checkChains(CompactTable table) {
        for (int slot = 1; slot < table.end(); slot++) {
            long meta = lvMeta(table.slotPage(slot), table.valueIndex(slot));
            if (count(meta) != 0 && table.positionOf(table.bucketOf(keyOf(meta)), slot) < 0) {
                throw new AssertionError("live slot " + slot + " (key " + keyOf(meta) + ") is not in its chain");
            }
        }
        for (int bucket = 0; bucket < table.bucketCount(); bucket++) {
            for (int pos = 0; pos < table.length(bucket); pos++) {
                int slot = table.slotOfRef(table.refAt(bucket, pos));
                long meta = lvMeta(table.slotPage(slot), table.valueIndex(slot));
                if (count(meta) == 0 || table.bucketOf(keyOf(meta)) != bucket) {
                    throw new AssertionError("bucket " + bucket + " position " + pos + " holds slot " + slot
                            + " (count " + count(meta) + ", key " + keyOf(meta) + ")");
                }
            }
        }
    }
}
