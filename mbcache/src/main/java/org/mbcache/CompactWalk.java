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
     * in the bucket. With {@code valueRead} (the caller reads the found slot's value, as the
     * {@code DedupCache} lookups do) the bucket's home values are loaded as soon as the key filter
     * lets the key through, so that their miss overlaps the line's instead of following the search;
     * a lookup by pair, whose match reads the value, loads them whatever {@code valueRead} says.
     */
    static long find(CompactTable table, int key, long value, boolean byPair, int afterSlot, boolean valueRead) {
        return find(table, key, value, byPair, afterSlot, true, valueRead || byPair);
    }

    /**
     * {@link #find} from the newest, of a key whose bucket's line the caller has just loaded (a
     * batch's look-ahead, {@link CompactBatchLookup}): the same answer, without asking the bucket's
     * key filter first. The filter saves a miss the line's load, and it costs a load of its own in
     * another array (another page: at table sizes out of the processor caches, another TLB miss);
     * with the line in the cache it saves nothing. The key filter is only ever a shortcut to a miss:
     * a walk that skips it reads the line, which decides.
     */
    static long findInLoadedLine(CompactTable table, int key, long value, boolean byPair) {
        return find(table, key, value, byPair, 0, false, byPair);
    }

    /** {@link #find}, the key filter asked first with {@code askKeyFilter} ({@link #tryFind}). */
    private static long find(CompactTable table, int key, long value, boolean byPair, int afterSlot,
                             boolean askKeyFilter, boolean touchValues) {
        long keyed = table.keyedHash(key);
        int bucket = table.bucketOfHash(keyed);
        long found = tryFind(table, bucket, keyed, key, value, byPair, afterSlot, true, askKeyFilter, touchValues);
        return found != RETRY ? found : findLocked(table, bucket, key, value, byPair, afterSlot);
    }

    /**
     * The entries of {@code key} in bucket {@code b}'s chain, oldest first, read optimistically (as
     * {@link #walkChain} reads: bounded, validated): their slots into {@code slots}, meta words into
     * {@code metas} and values into {@code values}, live ones only (count above zero); returns how
     * many, or -1 where a writer
     * was in the bucket, the chain read cannot be the one of the version read, or the arrays are too
     * short (the caller reads under the bucket's bit instead). A slot in the chain at a validated
     * version held the pair its meta word shows ({@link CompactSlots}' step 1), so a value read
     * after the meta word and before the validation is that pair's.
     */
    static int entriesOfKey(CompactTable table, int b, int key, int[] slots, long[] metas, long[] values) {
        long head = table.laVersion(b);
        if (BucketLockWord.locked(head)) {
            return -1;
        }
        int order = CompactLine.orderOf(head);
        int home = CompactLine.lineLength(order);
        int[] record = null;
        int base = 0;
        int refs = 0;
        int pool = 0;
        if (CompactLine.overflowed(head)) {
            int entry = table.records.lpEntry(b);
            record = table.records.laPage(entry);
            if (record == null) {
                return -1;
            }
            base = CompactChainRecords.baseOf(entry, record);
            int capacity = CompactChainRecords.capacityOf(record);
            pool = record[base + CompactChainRecords.POOL_COUNT];
            if (pool <= 0 || pool > CompactChainRecords.refCapacity(capacity)) {
                return -1;
            }
            refs = base + CompactChainRecords.refBase(capacity);
        }
        int end = table.end();
        int found = 0;
        for (int pos = 0, pooled = 0, homed = 0, length = home + pool; pos < length; pos++) {
            boolean inPool = record != null && CompactChainRecords.isPoolAt(record, base, pos);
            int slot = inPool ? (pooled < pool ? record[refs + pooled++] : 0)
                    : (homed < home ? CompactLine.homeSlot(b, CompactLine.positionAt(order, home - 1 - homed++)) : 0);
            if (slot <= 0 || slot >= end || !CompactLine.isSlot(slot)) {
                return -1;
            }
            long[] page = table.laMetaPage(slot);
            if (page == null) {
                return -1;
            }
            long meta = lvMeta(page, table.metaIndex(slot));
            if (count(meta) != 0 && keyOf(meta) == key) {
                if (found == slots.length) {
                    return -1;
                }
                slots[found] = slot;
                metas[found] = meta;
                values[found++] = table.lpValue(slot);
            }
        }
        return table.validate(b, head) ? found : -1;
    }

    /** {@link #find} under the bucket's bit. */
    private static long findLocked(CompactTable table, int bucket, int key, long value, boolean byPair, int afterSlot) {
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
                int slot = table.refAt(bucket, pos);
                found = CompactSlots.tryAcquireMatching(table, table.metaPage(slot), slot, key, value, byPair);
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
        return tryFind(table, bucket, keyed, key, value, true, 0, false, false, false);
    }

    /**
     * The optimistic walk of {@link #find}: a handle, {@link CompactMbCache#NO_ENTRY}, or
     * {@link #RETRY}. Without {@code acquire} (the create's duplicate check, by pair) it takes no
     * reference and answers {@link #CONTAINED}, {@link #RETRY}, or the version under which the pair
     * was absent. {@code keyed} is the key's {@link CompactTable#keyedHash}, which gives its pool
     * filter bit. With {@code touchValues}, the bucket's home values are loaded (only loaded) once
     * the key filter has let the key through ({@link #find}).
     *
     * <p>A lookup with {@code askKeyFilter} first asks the bucket's key filter, which answers most
     * misses without the line ({@link CompactTable#keyFilterMayHold}; the create's duplicate check,
     * which needs the version, and a batch's lookup, whose line is loaded already, read the line).
     * Where the header's pool filter turns the key away, every entry of the key is in the
     * bucket's line, in the order list's order: the walk reads the line alone
     * ({@link #walkLine}), one header load and the meta words beside it. Otherwise it walks the
     * merged chain ({@link #walkChain}).
     *
     * <p>The walk only reads: it answers its candidate as a handle (slot and the generation it read),
     * and the reference is taken after the version validates, on that occupant only
     * ({@link CompactSlots#tryAcquireMatching(CompactTable, long[], int, int, long, boolean, int)}:
     * the CAS compares the whole word, so it succeeds only while the slot holds the pair it checked,
     * unclaimed, hence still in its chain). A lookup therefore never holds a reference it gives back:
     * a {@code deleteOrGet} or a reclaim that finds the entry held finds a holder the lookup hands
     * the entry to. Where the occupant changed between the validation and the CAS (claimed, freed,
     * no longer reusable), the lookup retries under the bucket's bit.
     */
    private static long tryFind(CompactTable table, int bucket, long keyed, int key, long value, boolean byPair,
                                int afterSlot, boolean acquire, boolean askKeyFilter, boolean touchValues) {
        int mix = table.filterMixOfHash(keyed);
        if (askKeyFilter && !table.keyFilterMayHold(bucket, mix)) {
            return NO_ENTRY; // no chain of the bucket holds the key (CompactTable.keyFilterMayHold)
        }
        if (touchValues) {
            table.consume(table.touchHomeValues(bucket));
        }
        long head = table.laVersion(bucket);
        if (BucketLockWord.locked(head)) {
            return RETRY;
        }
        long handle = chainMayHoldMore(table, bucket, head, mix, key, afterSlot)
                ? walkChain(table, bucket, head, key, value, byPair, afterSlot, acquire)
                : walkLine(table, bucket, head, key, value, byPair, afterSlot, acquire);
        if (handle == RETRY || handle == NO_ENTRY) {
            return handle == RETRY || !table.validate(bucket, head) ? RETRY
                    : acquire ? NO_ENTRY : BucketLockWord.versionOf(head);
        }
        if (!table.validate(bucket, head)) {
            return RETRY;
        }
        if (!acquire) {
            return handle; // CONTAINED
        }
        // The candidate was the answer at the validated version: reference that occupant, or retry.
        int slot = CompactSlots.slotOf(handle);
        long acquired = CompactSlots.tryAcquireMatching(table, table.metaPage(slot), slot, key, value, byPair,
                CompactSlots.generationOf(handle));
        return acquired != NO_ENTRY ? acquired : RETRY;
    }

    /**
     * Whether {@link #tryFind} walks the merged chain rather than the line: the header's pool filter
     * lets the key through, and the line (read plainly, validated by the caller) has no live word of
     * the key without {@link CompactSlots#POOL_TWIN} ({@link CompactPoolTwins}), or the walk starts
     * below a slot outside the line.
     */
    private static boolean chainMayHoldMore(CompactTable table, int bucket, long head, int mix, int key, int afterSlot) {
        return CompactLine.poolMayHold(head, mix)
                && (afterSlot != 0 && !CompactLine.isHomeOf(bucket, afterSlot)
                        || !CompactPoolTwins.lineHoldsEveryEntryOf(table.linePage(bucket), table.lineBase(bucket), key));
    }

    /**
     * {@link #tryFind}'s walk of the line: the order list of {@code head}, newest first, from below
     * {@code afterSlot} where that is in it, over the positions whose word holds the key
     * ({@link CompactLine#keyPositions}, all seven loaded at once); the first match (a handle;
     * {@link #CONTAINED} without {@code acquire}) or {@link CompactMbCache#NO_ENTRY}, not validated.
     *
     * <p>Where at most one word holds the key (nearly every lookup: keys repeat rarely) and no
     * {@code afterSlot} is given, that word's slot is the only candidate, whatever its place in the
     * order list: it is tried without walking the list. A live slot of the bucket's line that holds
     * a key of the bucket is in its order list under a header that validates (a home slot lent to
     * another bucket's chain holds a key of that bucket; a free or resting one has count zero, which
     * no match takes), so skipping the list changes no answer. It changes how fast the answer comes:
     * the walk's exit and skips are branches on the loaded line that the processor cannot predict,
     * and each wrong guess throws away its work ahead into the next lookup, so that consecutive hits
     * never overlap their misses; the one branch left here goes the same way almost always.
     */
    private static long walkLine(CompactTable table, int bucket, long head, int key, long value, boolean byPair,
                                 int afterSlot, boolean acquire) {
        long[] page = table.linePage(bucket);
        int keyPositions = CompactLine.keyPositions(page, table.lineBase(bucket), key);
        if ((keyPositions & keyPositions - 1) == 0 && afterSlot == 0) {
            int only = CompactLine.homeSlot(bucket, Integer.numberOfTrailingZeros(keyPositions));
            return keyPositions == 0 ? NO_ENTRY : tryMatch(table, page, only, key, value, byPair, acquire);
        }
        int order = CompactLine.orderOf(head);
        if (afterSlot != 0 && CompactLine.isHomeOf(bucket, afterSlot)) {
            for (int rest = order; rest != 0; rest >>>= 3) {
                if (CompactLine.homeSlot(bucket, rest & 7) == afterSlot) {
                    order = rest >>> 3;
                    break;
                }
            }
        }
        if (keyPositions == 0) {
            return NO_ENTRY;
        }
        for (; order != 0; order >>>= 3) {
            int position = order & 7;
            if ((keyPositions & 1 << position) == 0) {
                continue; // the key compared in place: the slot's CAS loop only for a candidate
            }
            long handle = tryMatch(table, page, CompactLine.homeSlot(bucket, position), key, value, byPair, acquire);
            if (handle != NO_ENTRY) {
                return handle;
            }
        }
        return NO_ENTRY;
    }

    /**
     * {@link #tryFind}'s walk of the merged chain (the order list of {@code head} and the bucket's
     * record, {@link CompactChainRecords}), newest first, from below {@code afterSlot} where that is
     * in it: the first match or {@link CompactMbCache#NO_ENTRY}, not validated, or {@link #RETRY}
     * where the record read cannot be the chain of {@code head} (not overflowed, missing, a count
     * beyond its capacity, an interleave that does not add up, or a reference naming no slot: a
     * writer was in the bucket).
     */
    private static long walkChain(CompactTable table, int bucket, long head, int key, long value, boolean byPair,
                                  int afterSlot, boolean acquire) {
        int entry = table.records.lpEntry(bucket);
        int[] record = CompactLine.overflowed(head) ? table.records.laPage(entry) : null;
        if (record == null) {
            return RETRY;
        }
        int base = CompactChainRecords.baseOf(entry, record);
        int capacity = CompactChainRecords.capacityOf(record);
        int pool = record[base + CompactChainRecords.POOL_COUNT];
        if (pool <= 0 || pool > CompactChainRecords.refCapacity(capacity)) {
            return RETRY;
        }
        int order = CompactLine.orderOf(head);
        int length = pool + CompactLine.lineLength(order);
        int refs = base + CompactChainRecords.refBase(capacity);
        boolean skipping = afterSlot != 0 && chainHolds(bucket, record, refs, pool, order, afterSlot);
        int end = table.end();
        for (int pos = length - 1, rest = order; pos >= 0; pos--) {
            int slot;
            if (CompactChainRecords.isPoolAt(record, base, pos)) {
                slot = --pool < 0 ? 0 : record[refs + pool];
            } else {
                slot = rest == 0 ? 0 : CompactLine.homeSlot(bucket, rest & 7);
                rest >>>= 3;
            }
            if (slot <= 0 || slot >= end || !CompactLine.isSlot(slot)) {
                return RETRY;
            }
            if (skipping) {
                skipping = slot != afterSlot;
                continue;
            }
            long[] page = table.laMetaPage(slot);
            if (page == null) {
                return RETRY;
            }
            if (keyOf(lvMeta(page, table.metaIndex(slot))) != key) {
                continue;
            }
            long handle = tryMatch(table, page, slot, key, value, byPair, acquire);
            if (handle != NO_ENTRY) {
                return handle;
            }
        }
        return NO_ENTRY;
    }

    /** Whether the merged chain {@link #walkChain} reads names {@code slot} (racy reads: bounded, not trusted). */
    private static boolean chainHolds(int bucket, int[] record, int refs, int pool, int order, int slot) {
        if (CompactLine.isHomeOf(bucket, slot)) {
            for (int rest = order; rest != 0; rest >>>= 3) {
                if (CompactLine.homeSlot(bucket, rest & 7) == slot) {
                    return true;
                }
            }
            return false;
        }
        for (int j = 0; j < pool; j++) {
            if (record[refs + j] == slot) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------------------------------------
    // A batch's look-ahead into the pool (CompactBatchLookup): what walkChain would load after the
    // line, one dependent level a round, so that each round's misses overlap across the batch's
    // keys. Plain racy loads whose values mean nothing: a reference is followed only below the
    // record's capacity and count, into a pool slot below the table's end whose page is there, so
    // they never fault.
    // ---------------------------------------------------------------------------------------------

    /**
     * The first round after the line's: the directory entry of bucket {@code b}'s chain record
     * (loaded), where its line (read plainly, loaded a round before) says the chain has pool entries
     * that {@code key}, of this {@link CompactTable#filterMix}, may be among, as {@link #walkChain}
     * would walk them ({@link #chainMayHoldMore}); else 0.
     */
    static int poolRecordEntry(CompactTable table, int b, int key, int mix) {
        long[] page = table.linePage(b);
        int base = table.lineBase(b);
        long head = page[base];
        return CompactLine.overflowed(head) && CompactLine.poolMayHold(head, mix)
                && !CompactPoolTwins.lineHoldsEveryEntryOf(page, base, key) ? table.records.lpEntry(b) : 0;
    }

    /**
     * The second round: loads, and only loads, the chain record a {@link #poolRecordEntry} names:
     * its pool count and its first pool reference (0 names none).
     *
     * @return a sum of the words loaded, to be consumed ({@link CompactTable#consume})
     */
    static long touchRecord(CompactTable table, int entry) {
        int[] record = table.records.laPage(entry);
        if (record == null) {
            return 0;
        }
        int base = CompactChainRecords.baseOf(entry, record);
        return record[base + CompactChainRecords.POOL_COUNT]
                + record[base + CompactChainRecords.refBase(CompactChainRecords.capacityOf(record))];
    }

    /**
     * The third round: loads, and only loads, the meta words of the pool entries the chain record a
     * {@link #poolRecordEntry} names holds (0 names none).
     *
     * @return a sum of the words loaded, to be consumed ({@link CompactTable#consume})
     */
    static long touchPoolEntries(CompactTable table, int entry) {
        int[] record = table.records.laPage(entry);
        if (record == null) {
            return 0;
        }
        int base = CompactChainRecords.baseOf(entry, record);
        int capacity = CompactChainRecords.capacityOf(record);
        int pool = Math.min(record[base + CompactChainRecords.POOL_COUNT], CompactChainRecords.refCapacity(capacity));
        int refs = base + CompactChainRecords.refBase(capacity);
        int end = table.end();
        long sum = 0;
        for (int j = 0; j < pool; j++) {
            int slot = record[refs + j];
            if (slot > 0 && !table.isHome(slot) && slot < end && CompactLine.isSlot(slot)) {
                long[] page = table.laMetaPage(slot);
                sum += page == null ? 0 : page[table.metaIndex(slot)];
            }
        }
        return sum;
    }

    /**
     * One slot of an optimistic walk, read only: where it matches ({@link CompactSlots#matches}),
     * with {@code acquire} the candidate's handle (its slot and the generation read), which
     * {@link #tryFind} references once the version validates; without, {@link #CONTAINED} (the
     * create's duplicate check, by pair). Else {@link CompactMbCache#NO_ENTRY}.
     */
    private static long tryMatch(CompactTable table, long[] page, int slot, int key, long value, boolean byPair,
                                 boolean acquire) {
        long meta = lvMeta(page, table.metaIndex(slot));
        if (!CompactSlots.matches(table, slot, meta, key, value, acquire ? byPair : true)) {
            return NO_ENTRY;
        }
        return acquire ? CompactSlots.handleOf(slot, meta) : CONTAINED;
    }

    /** The chain position of a live pair, newest first, or -1. Bit held. */
    static int positionOfPair(CompactTable table, int bucket, int key, long value) {
        for (int pos = table.length(bucket) - 1; pos >= 0; pos--) {
            int slot = table.refAt(bucket, pos);
            if (CompactSlots.matches(table, slot, lvMeta(table.metaPage(slot), table.metaIndex(slot)), key, value, true)) {
                return pos;
            }
        }
        return -1;
    }

    /**
     * Reclaims the chain's oldest unheld entries until one more fits under {@code chainCap}, in at
     * most two walks of the chain: in the first, a referenced entry nobody holds loses its flag and
     * is passed over (a held one keeps its flag: the cap cannot take it anyway), and an entry
     * touched since the walk looked at it is passed over too; in the second, the oldest unheld
     * entries go whatever their flag. Held entries are never touched. Bit held; allocation-free. With
     * {@code keepRecord} (the create's new entry is a pool entry, whose room
     * {@link CompactTable#ensureRoom} reserved), the chain keeps its record even where the last of
     * its pool entries goes.
     *
     * @return the entries reclaimed
     */
    static int reclaimForRoom(CompactTable table, int bucket, int chainCap, boolean keepRecord) {
        int reclaimed = 0;
        for (int round = 0; round < 2 && table.length(bucket) >= chainCap; round++) {
            int pos = 0;
            while (pos < table.length(bucket) && table.length(bucket) >= chainCap) {
                int slot = table.refAt(bucket, pos);
                long[] page = table.metaPage(slot);
                int at = table.metaIndex(slot);
                long meta = lvMeta(page, at);
                if (round == 0 && (meta & REFERENCED) != 0) {
                    clearReferencedUnlessHeld(table, slot, page, at, meta);
                    pos++;
                } else if (CompactSlots.tryClaim(table, slot, page, at, meta, round == 0)) {
                    table.removeAt(bucket, pos, keepRecord);
                    table.free(slot);
                    reclaimed++;
                } else {
                    pos++;
                }
            }
        }
        return reclaimed;
    }

    /**
     * A create's line reclaim, run where the cache is at its bound and the bucket has no free home
     * slot (the contract, section 4): where its line holds seven entries, claims the oldest of the
     * chain's home entries that nobody holds, is not referenced and whose slot the in-place clock
     * lets be refilled now ({@link CompactTable#mayRefillInPlace}), takes it out of the chain and
     * retires its slot ({@link CompactTable#retireInPlace}: generation advanced, no delay ring), for
     * the create to refill in the same critical section; a referenced entry met on the
     * way, oldest first, is passed over, and loses its flag unless somebody holds it (as in
     * {@link #reclaimForRoom}). The slot, or 0 (nothing changed but
     * flags; nothing at all where the line is not full). Bit held; allocation-free.
     *
     * <p>Why a slot may be refilled only so often: a slot refilled here skips the delay ring, and
     * nothing else would stop two keys created in turn in one line (they need no seed to collide:
     * among a few hundred hot keys, two share a bucket) from refilling its seven slots once every
     * seven creates, wrapping a kept handle's 17-bit generation within 2^17 x 7 creates. The
     * in-place clock ({@link CompactDelayRing#mayRefillInPlace}) never lets a refill here take a
     * slot's generation more than three steps ahead of a count of the cache's reuses: it comes back
     * to a kept handle's only after hundreds of millions of reuses, while a line's oldest entries
     * (epochs old in a cache of a million entries or more) may be refilled.
     */
    static int reclaimInLine(CompactTable table, int bucket) {
        if (!table.lineFull(bucket)) {
            return 0; // a line with a slot resting in the delay ring gets it back: no entry need go
        }
        for (int pos = 0, length = table.length(bucket); pos < length; pos++) {
            int slot = table.refAt(bucket, pos);
            if (!CompactLine.isHomeOf(bucket, slot)) {
                continue;
            }
            long[] page = table.metaPage(slot);
            int at = table.metaIndex(slot);
            long meta = lvMeta(page, at);
            if (!table.mayRefillInPlace(generation(meta))) {
                continue;
            }
            if ((meta & REFERENCED) != 0) {
                clearReferencedUnlessHeld(table, slot, page, at, meta);
            } else if (CompactSlots.tryClaim(table, slot, page, at, meta, true)) {
                table.removeAt(bucket, pos);
                table.retireInPlace(slot);
                return slot;
            }
        }
        return 0;
    }

    /**
     * A reclaim's second chance for a referenced entry met on its way: the flag cleared, unless
     * somebody holds the entry (a held entry cannot be reclaimed, so its flag is kept for the time
     * it can be: a cap or line reclaim does not spend a touch it has no use for). A holder that
     * releases between the look and the clear only leaves the flag cleared, as a pass would.
     */
    private static void clearReferencedUnlessHeld(CompactTable table, int slot, long[] page, int at, long meta) {
        if (!CompactSlots.heldByAnyCaller(table, slot, meta)) {
            CompactSlots.setFlag(page, at, generation(meta), REFERENCED, false);
        }
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
        int bucket = table.bucketOf(key);
        table.lock(bucket);
        try {
            int pos = positionOfPair(table, bucket, key, value);
            if (pos < 0) {
                return NO_ENTRY;
            }
            int slot = table.refAt(bucket, pos);
            long[] page = table.metaPage(slot);
            int at = table.metaIndex(slot);
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
     * Checks that every live slot is in its key's chain, every chain reference is a live slot of
     * the chain's bucket, and a chain's home slots of its own line are exactly those its order list
     * names (what {@link #walkLine}'s single-match path relies on: a live slot of the line holding a
     * key of the bucket is in the order list), and a bucket holds a chain record only while its chain
     * is in the pool; the first breach as an {@link AssertionError}. Quiet tables only; for tests.
     */
    static void checkChains(CompactTable table) {
        for (int slot = 1; slot < table.end(); slot++) {
            if (!CompactLine.isSlot(slot)) {
                continue;
            }
            long meta = lvMeta(table.metaPage(slot), table.metaIndex(slot));
            if (count(meta) != 0 && table.positionOf(table.bucketOf(keyOf(meta)), slot) < 0) {
                throw new AssertionError("live slot " + slot + " (key " + keyOf(meta) + ") is not in its chain");
            }
        }
        for (int bucket = 0; bucket < table.bucketCount(); bucket++) {
            int ownHome = 0;
            for (int pos = 0; pos < table.length(bucket); pos++) {
                int slot = table.refAt(bucket, pos);
                long meta = lvMeta(table.metaPage(slot), table.metaIndex(slot));
                if (count(meta) == 0 || table.bucketOf(keyOf(meta)) != bucket) {
                    throw new AssertionError("bucket " + bucket + " position " + pos + " holds slot " + slot
                            + " (count " + count(meta) + ", key " + keyOf(meta) + ")");
                }
                ownHome |= CompactLine.isHomeOf(bucket, slot) ? 1 << (slot & 7) : 0;
            }
            int listed = CompactLine.positionsIn(CompactLine.orderOf(table.laVersion(bucket)));
            if (ownHome != listed) {
                throw new AssertionError("bucket " + bucket + "'s order list names line positions "
                        + Integer.toBinaryString(listed) + ", its chain holds " + Integer.toBinaryString(ownHome));
            }
            if (!CompactLine.overflowed(table.laVersion(bucket)) && table.records.lpEntry(bucket) != 0) {
                throw new AssertionError("bucket " + bucket + " keeps a chain record with no pool entry in its chain");
            }
        }
    }
}
