package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.mbcache.internal.Lifecycle;

/**
 * The meta word of a {@link CompactTable} slot and every CAS loop that changes it: the compact
 * layout's reference-counting protocol, as {@code MbCache}'s entry class is for its state word.
 * Static methods over a slot's meta page and index ({@link CompactTable#metaPage},
 * {@link CompactTable#metaIndex}); the table is passed for the value, the hot-mode cells and the contention
 * vote ({@link HotReferences}, whose {@link HotReferences.Host} is {@link CompactHotSlots}).
 *
 * <h2>The word</h2>
 * A slot is two {@code long}s: its value, in the table's value space, and its meta word, in its
 * bucket's line (a home slot) or the pool ({@link CompactTable}), the key in the upper 32 bits and the
 * state in the lower 32: the reference count in bits 0-8 (so at most 510 callers hold one pair
 * at once while it is cold: the next acquire switches it to hot mode, {@link #tryAcquireMatching}),
 * {@link #POOL_TWIN} (9, on home entries only: {@link CompactPoolTwins}), {@link #REFERENCED} (10),
 * {@link #REUSABLE} (11), {@link #WAITERS} (12), {@link #FROZEN} (13), {@link #HOT} (14) and the
 * slot's generation in bits 15-31 (17 bits, advanced each time the slot
 * is freed, {@link CompactTable#free}). Count zero means free (or
 * claimed, or killed by close). A count above zero means "in its chain": the cache's reference plus
 * one per caller. Only a claim (count 1 to 0, under the bucket's bit, which then unhashes the slot)
 * or {@code close()} ({@link #kill}) takes the cache's own reference. A contended slot switches to
 * hot mode ({@link HotReferences}, whose argument covers slot reuse too: a claim retires a hot
 * slot's cells before the slot can be freed, and cells are found by slot, key and generation).
 * A handle is the slot index in the low 31 bits ({@link #slotOf}), the generation in bits 31-47 ({@link #handleOf})
 * and, once it leaves the cache, the cache's tag above ({@link CompactHandles}).
 *
 * <h2>Slot reuse</h2>
 * The hazard the list layout does not have: its dead entries stay dead, a slot here is freed and
 * given to a new pair. The argument that a lookup never hands out the wrong pair, and never leaks
 * or steals a reference, has four steps.
 * <ol>
 *   <li>A slot leaves its chain and becomes free only in a critical section of its bucket (the
 *       claim, the unhashing and the free in one critical section), its generation advanced as it
 *       is freed ({@link CompactTable#free}; a slot a
 *       create took and puts back unused, {@link CompactTable#freeUnused}, keeps its generation,
 *       so the generation counts the pairs a slot held). {@code deleteOrGet} frees inside its
 *       critical section: {@code close()} takes every bucket's bit, so once it has returned, a
 *       handle of a pair deleted before it reads stale (DeleteVsClose). A slot becomes live (count
 *       0 to 1, with that generation, {@link #soMeta}) only in a critical section of the bucket it
 *       is hashed into. So a slot in a chain at version v (even) held the same pair for as long as
 *       the version stayed v.</li>
 *   <li>An optimistic lookup ({@link CompactWalk}) reads the version (acquire; odd: retry locked),
 *       then a slot (a line position from the header it read, or a reference from the chain
 *       array, followed only if it names a slot: never a line's header), then the slot's meta
 *       word (volatile), and checks key, count above zero and the flag or value it looks for
 *       ({@link #matches}). It takes no reference yet: its candidate is the slot and the generation
 *       it read.</li>
 *   <li>Then it validates the version (acquire fence, load again). Changed: it retries under the
 *       bit, holding nothing. Unchanged: no critical section ran, so by step 1 the slot held the
 *       pair it checked, in the chain, at that version, and the lookup's answer is that pair. Only
 *       now does it take the reference: a CAS of the meta word to count + 1, on the occupant of the
 *       generation it read only ({@link #tryAcquireMatching(CompactTable, long[], int, int, long,
 *       boolean, int)}). The CAS compares the whole word, key and generation included, and every
 *       CAS loop here but the claim refuses count zero, so it increments that occupant while it is
 *       unclaimed (a claim zeroes the count in the critical section that unhashes the slot, and the
 *       free that follows advances the generation), hence still in its chain; where the occupant
 *       was claimed, freed, reused or no longer matches, the lookup retries under the bit. So a
 *       lookup never holds a reference it gives back: a {@code deleteOrGet} or a reclaim pass that
 *       finds the entry held finds a holder the entry is handed to, never a lookup that will answer
 *       a miss. (A stale index makes a lookup retry, nothing more.)</li>
 *   <li>A handle carries the generation. Every operation on a handle (release, touch, setReusable,
 *       findNext, waitUnused) checks it in the same CAS loop that changes the word, so a handle
 *       kept after its release cannot change the slot's next occupant: it is refused or ignored,
 *       unless the slot held a multiple of 2^17 pairs in between (the generation wraps; then it
 *       acts on the new occupant as a double release does on an entry object).</li>
 * </ol>
 * How long the wrap takes: a freed slot, home or pool, passes through the table's delay ring
 * ({@link CompactDelayRing}: an eighth of the meta space rounded up to a power of two, at least 512
 * and at most 8192 places) before it is used again, so it is handed out again only after about a
 * ring's length of further frees of the cache, wherever they happen; one key deleted and created in
 * a loop cycles through its line's free home slots and then pool slots, ring-size + 1 slots, instead
 * of one. A stale handle can match a new occupant only after 2^17 pairs in its slot, about 2^17 x
 * ring-size frees of the cache: 2^30 (1.07 billion) with the full ring of 8192 (from a meta space of
 * 2^16 indices, about 11,000 {@code maxEntries}, up), 2^26 (67 million) with the smallest (512). At a
 * million creates and deletes a second on one key that is about 18 minutes, or 67 s in the smallest
 * cache. The exception is a table whose callers hold all but a few slots: with no free slot
 * outside the ring (free pool slots, then free home slots of other buckets, looked for a ring's
 * length of buckets at a time, are taken first), every
 * create drains the ring (oldest first, {@link CompactTable#drainDelayRing}), so the key cycles
 * through the free slots only, and
 * the wrap takes 2^17 times their number of frees (131,072 cycles with one free slot: nothing can
 * spread reuse over slots that callers hold; at least 2^16 times where passes reuse in place, below).
 * A slot a create's line reclaim refills at once ({@link CompactWalk#reclaimInLine}), or a reclaim
 * pass gives straight back to its bucket ({@link CompactTable#freeFromPass}), skips the ring too,
 * within a budget that comes back with the cache's reuses (the in-place clock,
 * {@link CompactDelayRing#mayRefillInPlace}): a refill in place
 * never takes a slot's generation more than three steps ahead of a count of the cache's reuses
 * (four steps every sixteen rings of them; only frees through the ring, one a ring's length of
 * frees, move it further), so it wraps only after about 0.8 x 2^16 rings of reuses, 4.3 x 10^8 with
 * the full ring (line reclaim and the pass's reuse in place run only in tables of 2^14 buckets up,
 * whose ring is full): 7
 * minutes at a million a second.
 * A slot put back unused ({@link CompactTable#freeUnused}) skips the ring and
 * keeps its generation: no pair held it.
 * The JCStress races in the stress module (SlotReuseVsLookup, ReleaseVsSlotReuse,
 * StaleHandleVsSlotReuse, DeleteVsClose; RingFreeVsAllocate for the ring) exercise steps 2-4, and
 * CompactMbCacheTest keeps a released handle stale across 200,000 cycles of one key.
 *
 * <h2>Memory order</h2>
 * Accessor names say the mode, JCTools-style: {@code lv} volatile load, {@code so} release store,
 * {@code cas} a volatile compare-and-set. A new pair's value is a plain store and its meta word a
 * release store ({@link #soMeta}), both inside the bucket's critical section, before its reference
 * is added; the unlock's release store publishes the reference. A locked reader sees all of it
 * through the lock's acquire CAS; an optimistic reader through the version's acquire load (for a
 * pair published before that version) or, for one it met racing, through its volatile load of the
 * meta word, which reads the release store or a later CAS (the value written before the release
 * store is then visible). The value of a slot is read only after its meta word shows it live; a
 * value read from a slot freed meanwhile (its value word holds the free list's link) is discarded
 * by the CAS, which then fails, or by the validation. {@link #soMeta} is the one write that is not a
 * CAS: it happens while the slot is free and owned by one creator (or, in
 * {@link CompactTable#free}, by the claimer), and nobody CASes a word whose count is zero but the
 * claim, which needs count one.
 */
final class CompactSlots {

    private CompactSlots() {}

    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    // The state half of a meta word.
    /** The reference count: the cache's reference and at most 510 callers' while cold. */
    static final int COUNT_MASK = 0x1FF;
    /** The callers a cold pair holds at most ({@link #COUNT_MASK} less the cache's reference): the next switches it to hot mode. */
    static final int MAX_COLD_CALLERS = COUNT_MASK - 1;
    /** A home entry's word: a pool entry of its chain may have its key ({@link CompactPoolTwins}). */
    static final int POOL_TWIN = 1 << 9;
    static final int REFERENCED = 1 << 10;
    static final int REUSABLE = 1 << 11;
    static final int WAITERS = 1 << 12;
    /** A thread is deciding on the exact number of callers of a hot slot ({@link HotReferences}). */
    static final int FROZEN = 1 << 13;
    /** Callers' references are counted in the slot's cells too ({@link HotReferences}). */
    static final int HOT = 1 << 14;
    /** The generation: bits 15-31 of the meta word (17 bits), bits 31-47 of a handle. */
    static final int GENERATION_SHIFT = 15;
    static final int GENERATION_MASK = 0x1_FFFF;
    /** Where a handle's generation starts: above its slot. */
    static final int HANDLE_GENERATION_SHIFT = 31;
    /** The slot bits of a handle: slots are below {@code 2^31}. */
    static final int SLOT_MASK = 0x7FFF_FFFF;
    /** The bits of a meta word that name its occupant: the key and the generation. */
    static final long IDENTITY = 0xFFFF_FFFF_0000_0000L | (long) GENERATION_MASK << GENERATION_SHIFT;
    /** The hot-mode protocol over a meta word; the table's {@link CompactHotSlots} is its {@link HotReferences.Host}, a slot its {@code at}. */
    static final HotReferences HOT_REFERENCES = new HotReferences(COUNT_MASK, FROZEN, HOT, WAITERS, IDENTITY);

    // ---------------------------------------------------------------------------------------------
    // Accessors
    // ---------------------------------------------------------------------------------------------

    /** The meta word at index {@code at} of its page ({@link CompactTable#metaPage}, {@link CompactTable#metaIndex}). */
    static long lvMeta(long[] page, int at) {
        return (long) LONGS.getVolatile(page, at);
    }

    static boolean casMeta(long[] page, int at, long expected, long updated) {
        return LONGS.compareAndSet(page, at, expected, updated);
    }

    /** Makes a free slot live, or writes a freed slot's next generation (release; see the class comment). */
    static void soMeta(long[] page, int at, long meta) {
        LONGS.setRelease(page, at, meta);
    }

    static int count(long meta) {
        return (int) meta & COUNT_MASK;
    }

    /** A claimed home slot's word once retired: generation advanced, other flags and the count dropped, key kept. */
    static long retiredHomeWord(long meta) {
        return (meta & 0xFFFF_FFFF_0000_0000L) | advancedGeneration(meta);
    }

    /** A claimed pool slot's word once retired: generation advanced, the rest as it was. */
    static long retiredPoolWord(long meta) {
        return (meta & ~((long) GENERATION_MASK << GENERATION_SHIFT)) | advancedGeneration(meta);
    }

    private static long advancedGeneration(long meta) {
        return (long) ((generation(meta) + 1) & GENERATION_MASK) << GENERATION_SHIFT;
    }

    static int generation(long meta) {
        return ((int) meta >>> GENERATION_SHIFT) & GENERATION_MASK;
    }

    static int keyOf(long meta) {
        return (int) (meta >>> 32);
    }

    /**
     * Makes a free slot live for a new pair: the value (plain), then the meta word (release), count 1
     * (the cache's reference), with the generation the slot has ({@link CompactTable#free} advanced
     * it) and {@code poolTwin} ({@link CompactPoolTwins#twinOfNewEntry}). The slot is the caller's
     * alone; bucket bit held, before the slot's reference is added.
     */
    static void makeLive(CompactTable table, int slot, int key, long value, boolean reusable, boolean poolTwin) {
        long[] page = table.metaPage(slot);
        int at = table.metaIndex(slot);
        int generation = generation(lvMeta(page, at));
        table.spValue(slot, value);
        soMeta(page, at, liveMeta(key, generation, reusable) | (poolTwin ? POOL_TWIN : 0));
    }

    /** The meta word of a new live pair: count 1 (the cache's reference), with {@code generation}. */
    static long liveMeta(int key, int generation, boolean reusable) {
        // The generation as a long: shifted as an int, its top bit would sign-extend over the key.
        return ((long) key << 32) | ((long) generation << GENERATION_SHIFT) | (reusable ? REUSABLE : 0) | 1;
    }

    /** The handle of the occupant whose word is {@code meta}: its generation above the slot. */
    static long handleOf(int slot, long meta) {
        return (long) generation(meta) << HANDLE_GENERATION_SHIFT | slot;
    }

    /** The generation of a handle, tagged ({@link CompactHandles}) or not. */
    static int generationOf(long handle) {
        return (int) (handle >>> HANDLE_GENERATION_SHIFT) & GENERATION_MASK;
    }

    /** The slot of a handle, tagged ({@link CompactHandles}) or not. */
    static int slotOf(long handle) {
        return (int) handle & SLOT_MASK;
    }

    // ---------------------------------------------------------------------------------------------
    // The CAS loops
    // ---------------------------------------------------------------------------------------------

    /** Whether a slot's meta word (and value) show a live entry of the key, reusable or of the value. */
    static boolean matches(CompactTable table, int slot, long meta, int key, long value, boolean byPair) {
        return count(meta) != 0 && keyOf(meta) == key && (byPair ? table.lpValue(slot) == value : (meta & REUSABLE) != 0);
    }

    /**
     * Increment-if-not-zero on a slot whose key matches and whose value (by pair) or reusable flag
     * (by key) does, with one CAS of the whole meta word; the handle, or
     * {@link CompactMbCache#NO_ENTRY}. A hot slot's reference goes to a cell; a slot whose CAS keeps
     * failing switches to hot mode. The slot's index comes from the table's page mask, not the
     * page's length, whose load the address would wait for.
     *
     * @throws IllegalStateException if a cold slot already has the most references a count holds
     */
    static long tryAcquireMatching(CompactTable table, long[] page, int slot, int key, long value, boolean byPair) {
        return tryAcquireMatching(table, page, slot, key, value, byPair, ANY_GENERATION);
    }

    /** {@link #tryAcquireMatching}'s {@code generation} for a slot read under its bucket's bit: any. */
    private static final int ANY_GENERATION = -1;

    /**
     * {@link #tryAcquireMatching(CompactTable, long[], int, int, long, boolean)} of the occupant of
     * {@code generation} only: {@link CompactMbCache#NO_ENTRY} once the slot holds another (an
     * optimistic lookup's candidate, read at a version that validated: while the word keeps that
     * generation and a count above zero, its pair was never claimed, so it is still in its chain).
     */
    static long tryAcquireMatching(CompactTable table, long[] page, int slot, int key, long value, boolean byPair,
                                   int generation) {
        int at = table.metaIndex(slot);
        for (;;) {
            long meta = lvMeta(page, at);
            if (!matches(table, slot, meta, key, value, byPair)
                    || (generation != ANY_GENERATION && generation(meta) != generation)) {
                return CompactMbCache.NO_ENTRY;
            }
            if ((meta & HOT) != 0) {
                return HOT_REFERENCES.tryAcquire(table.hot, slot, meta) ? handleOf(slot, meta) : CompactMbCache.NO_ENTRY;
            }
            if (count(meta) == COUNT_MASK) {
                // Saturated: hot mode counts the next callers in cells (the next round takes one);
                // if the switch fails on a word that changed meanwhile, look again.
                if (HOT_REFERENCES.switchToHot(table.hot, slot, meta, 0) || lvMeta(page, at) != meta
                        || table.hot.hotCells(slot, meta) != null) { // or another thread is switching it
                    Thread.onSpinWait();
                    continue;
                }
                throw new IllegalStateException("too many references to the entry of key " + key
                        + ": " + MAX_COLD_CALLERS + " callers hold it and it cannot switch to hot mode");
            }
            if (casMeta(page, at, meta, meta + 1)) {
                return handleOf(slot, meta);
            }
            if (table.hot.noteContention(handleOf(slot, meta)) && HOT_REFERENCES.switchToHot(table.hot, slot, meta, 1)) {
                return handleOf(slot, meta);
            }
        }
    }

    /**
     * Count 1 to 0, keeping key, flags and generation, and on a home slot setting
     * {@link CompactTable#RESTING} ({@link CompactTable#claimedWord}); {@code false} if held (or
     * already 0). A hot slot is claimed frozen, and its cells retired before this returns, so before
     * the slot can be freed and reused. Bit of the bucket whose chain holds the slot held.
     */
    static boolean tryClaim(CompactTable table, int slot, long[] page, int at, long meta) {
        return tryClaim(table, slot, page, at, meta, false);
    }

    /**
     * {@link #tryClaim}, refusing, with {@code secondChance}, a word that shows
     * {@link #REFERENCED}: the reclaim passes' claim, which must pass over an entry referenced by the
     * time it claims (the word is read again after each failed CAS, so a touch that lands meanwhile
     * is seen; a hot slot's claim checks the flag on the word it freezes and on the word its CAS
     * replaces, {@link HotReferences#tryClaim}).
     */
    static boolean tryClaim(CompactTable table, int slot, long[] page, int at, long meta, boolean secondChance) {
        for (;;) {
            if (secondChance && (meta & REFERENCED) != 0) {
                return false;
            }
            if ((meta & HOT) != 0) {
                return HOT_REFERENCES.tryClaim(table.hot, slot, meta, secondChance ? REFERENCED : 0);
            }
            if (count(meta) != 1) {
                return false;
            }
            if (casMeta(page, at, meta, table.claimedWord(slot, meta & ~(long) COUNT_MASK))) {
                return true;
            }
            meta = lvMeta(page, at);
        }
    }

    /**
     * Gives back one caller's reference to the occupant of {@code generation}, and wakes the
     * table's waiters if that left at most the cache and one caller holding it (the
     * {@link #WAITERS} flag cleared first). {@code false}, nothing changed, if there is none to give
     * back: another generation, or only the cache's reference left (an over-release, or a slot
     * {@code close()} killed).
     */
    static boolean release(CompactTable table, int slot, long[] page, int at, int generation) {
        for (;;) {
            long meta = lvMeta(page, at);
            boolean wake;
            if (generation(meta) == generation && (meta & HOT) != 0) {
                int outcome = HOT_REFERENCES.release(table.hot, slot, meta);
                if (outcome == HotReferences.REFUSED) {
                    return false;
                }
                wake = outcome == HotReferences.RELEASED_WAKE;
            } else if (generation(meta) != generation || count(meta) <= 1) {
                return false;
            } else if (casMeta(page, at, meta, meta - 1)) {
                wake = (meta & WAITERS) != 0 && count(meta - 1) <= 2;
            } else {
                table.hot.noteContention(handleOf(slot, meta));
                continue;
            }
            if (wake) {
                setFlag(page, at, generation, WAITERS, false);
                // If this throws (the queue lock's node), the waiters find the slot unused at
                // their next re-check.
                table.unusedWaiters.wake(table);
            }
            return true;
        }
    }

    /** Sets or clears one flag of a live slot of this generation; does nothing to a freed or reused one. */
    static void setFlag(long[] page, int at, int generation, int flag, boolean on) {
        for (;;) {
            long meta = lvMeta(page, at);
            if (generation(meta) != generation || count(meta) == 0) {
                return;
            }
            long updated = on ? meta | flag : meta & ~(long) flag;
            if (updated == meta || casMeta(page, at, meta, updated)) {
                return;
            }
        }
    }

    /**
     * {@code waitUnused}'s check: whether callers other than one still hold the occupant of
     * {@code generation}, setting {@link #WAITERS} in the CAS loop that read the count (so a release
     * that drops it to two sees the flag and wakes); {@code false} once the occupant is gone.
     */
    static boolean markWaitingUnlessUnused(CompactTable table, int slot, long[] page, int at, int generation) {
        for (;;) {
            long meta = lvMeta(page, at);
            if (generation(meta) == generation && (meta & HOT) != 0) {
                return HOT_REFERENCES.markWaitingUnlessUnused(table.hot, slot, meta);
            }
            if (generation(meta) != generation || count(meta) <= 2) {
                return false;
            }
            if ((meta & WAITERS) != 0 || casMeta(page, at, meta, meta | WAITERS)) {
                return true;
            }
        }
    }

    /**
     * Blocks on the table's queue until at most one caller holds the handle's occupant, it is gone,
     * or the cache is closed, as the list layout's entries do: the waiters flag is set in the CAS
     * loop that re-reads the count ({@link #markWaitingUnlessUnused}), and a release that then drops
     * the count to two wakes the queue ({@link #release}).
     *
     * @return whether it ended before {@code nanos} ran out
     */
    static boolean awaitUnused(CompactTable table, Lifecycle lifecycle, long[] page, long handle, long nanos)
            throws InterruptedException {
        int slot = slotOf(handle);
        int at = table.metaIndex(slot);
        int generation = generationOf(handle);
        return table.unusedWaiters.await(table,
                () -> lifecycle.isClosed() || !markWaitingUnlessUnused(table, slot, page, at, generation), nanos);
    }

    /** Whether a caller holds the live occupant whose meta word is {@code meta} ({@code findNext}'s check). */
    static boolean heldByAnyCaller(CompactTable table, int slot, long meta) {
        return (meta & HOT) != 0 ? HOT_REFERENCES.heldByAnyCaller(table.hot, slot, meta) : count(meta) > 1;
    }

    /**
     * Whether {@code meta}, the word of {@code handle}'s slot, shows that nobody can hold the handle:
     * the slot was freed or went to another pair (another generation: {@code free} advances it), or
     * its pair is gone (count 0, claimed and not yet freed) while the cache is open. A held pair's
     * count is at least 2 (the cache's reference and the holder's) until {@code close()} drops every
     * reference, so an open cache's count of 0 means a released handle whose pair left; after close
     * the words of held pairs stay as they were, with count 0 and their generation, and those of
     * the slots freed before it show the next generation.
     */
    static boolean isStale(long meta, long handle, Lifecycle lifecycle) {
        return generation(meta) != generationOf(handle) || (count(meta) == 0 && !lifecycle.isClosed());
    }

    /** Whether {@code meta} shows the handle's occupant live and in hot mode. */
    static boolean isHot(long meta, long handle) {
        return generation(meta) == generationOf(handle) && count(meta) != 0 && (meta & HOT) != 0;
    }

    /** Switches the handle's occupant to hot mode, as contended hits do (tests); whether it is hot now. */
    static boolean switchToHot(CompactTable table, long handle) {
        int slot = slotOf(handle);
        long[] page = table.metaPage(slot);
        int at = table.metaIndex(slot);
        long meta = lvMeta(page, at);
        if (generation(meta) == generationOf(handle)) {
            HOT_REFERENCES.switchToHot(table.hot, slot, meta, 0);
        }
        return isHot(lvMeta(page, at), handle);
    }

    /**
     * {@code close()}'s end of a chained slot: its count to zero (flags and generation kept, so a
     * handle's {@code reusable()} stays readable), a hot slot's cells retired. Bucket bit held.
     */
    static void kill(CompactTable table, int slot) {
        long[] page = table.metaPage(slot);
        int at = table.metaIndex(slot);
        long meta;
        do {
            meta = lvMeta(page, at);
        } while (!casMeta(page, at, meta, meta & ~(long) COUNT_MASK));
        if ((meta & HOT) != 0) {
            HOT_REFERENCES.retire(table.hot, slot, meta);
        }
    }

    /** The references the occupant whose word is {@code meta} shows, its cells included (for messages). */
    static long references(CompactTable table, int slot, long meta) {
        return HOT_REFERENCES.references(table.hot, slot, meta);
    }
}
