package org.mbcache;

import static org.mbcache.CompactLine.HOME_SLOTS;
import static org.mbcache.CompactLine.LINE_LONGS;
import static org.mbcache.CompactLine.ORDER_MASK;
import static org.mbcache.CompactLine.POOL_FILTER_MASK;
import static org.mbcache.CompactLine.chainBits;
import static org.mbcache.CompactLine.homeSlot;
import static org.mbcache.CompactLine.isHomeOf;
import static org.mbcache.CompactLine.isSlot;
import static org.mbcache.CompactLine.keyFilterBits;
import static org.mbcache.CompactLine.lineLength;
import static org.mbcache.CompactLine.orderOf;
import static org.mbcache.CompactLine.overflowed;
import static org.mbcache.CompactLine.poolFilterBit;
import static org.mbcache.CompactLine.positionsIn;
import static org.mbcache.CompactLine.positionAt;
import static org.mbcache.CompactLine.valueIndex;
import static org.mbcache.CompactLine.withoutPosition;
import static org.mbcache.CompactSlots.COUNT_MASK;
import static org.mbcache.CompactSlots.REFERENCED;
import static org.mbcache.CompactSlots.count;
import static org.mbcache.CompactSlots.generation;
import static org.mbcache.CompactSlots.keyOf;
import static org.mbcache.CompactSlots.lvMeta;
import static org.mbcache.CompactSlots.soMeta;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.mbcache.internal.HashedWaitQueues;

/**
 * The storage of {@link CompactMbCache}: one 64-byte line a bucket, holding the bucket's lock word
 * and the meta words of its seven home slots, the slots' values in a parallel array, a pool of
 * slots for the chains that outgrow their line, and a lock-free free list of pool slots behind a
 * delay ring ({@link CompactDelayRing}).
 *
 * <h2>Slots and lines</h2>
 * Slot {@code s} has its meta word (key, count, flags, generation: {@link CompactSlots}') at index
 * {@code s} of the <em>meta space</em> and its value at index {@code s - s/8 - 1} of the <em>value
 * space</em>, two {@code long} spaces cut into pages of {@code 2^pageBits} longs (at most 2^15,
 * 256 KiB: below half of G1's smallest region, so no page is a humongous object). Every eighth
 * index of the meta space ({@code s % 8 == 0}) is not a slot: below {@link #homeSlots}
 * ({@code 8 * buckets}) it is the header of bucket {@code s / 8}, so bucket {@code b}'s
 * <em>line</em> is meta indices {@code [8b, 8b + 8)}: its header, then the meta words of its home
 * slots {@code 8b + 1 .. 8b + 7}; above, in the pool, it is skipped. So index 0, bucket 0's header,
 * is never a slot, and a reference of zero means "none". The value space skips those indices, so a
 * bucket's seven values take 56 bytes and a pool slot's value 8. A hot slot's cells are in a table
 * of at most {@value HotReferences#MAX_HOT_ENTRIES} per cache (see "Hot slots" below). The waiters
 * of {@code waitUnused} wait on the table ({@link #unusedWaiters}).
 *
 * <p>A line is 64 bytes; the JVM aligns arrays to 8 bytes only, so it spans one or two cache lines,
 * at addresses known from the bucket alone: a lookup's loads of them go out together, and a hit on
 * a home slot reads its bucket's header, finds the slot, compares its key and takes its reference
 * in that line, with no second miss that waits for the first. Lines, home values and key filters
 * are allocated with the table (128 bytes a bucket with the chain records' directory); pool pages
 * and chain records as the pool grows.
 *
 * <h2>The key filters</h2>
 * Besides its line, each bucket has a 4-byte key filter ({@link CompactKeyFilters}, which has the
 * argument): a lookup asks it first and answers a key it lacks as a miss without the line. A create
 * sets its key's bits; a removal rebuilds it from the line's keys where the chain has no pool
 * entries, and leaves it a superset otherwise, until the chain's last pool entry leaves.
 *
 * <h2>The header and the chain</h2>
 * The header is a {@link BucketLockWord}: bit 0 the lock bit, bits 1-31 the version; its upper half
 * holds the chain:
 * <ul>
 *   <li>bits 32-52, the <em>order list</em>: the line positions (1-7) of the chain's entries in
 *       home slots, newest first, three bits each, the newest in the lowest (a zero group ends
 *       the list);</li>
 *   <li>bit 53, {@link CompactLine#OVERFLOWED}: the chain has an entry in a pool slot;</li>
 *   <li>bits 54-63, the <em>pool filter</em>: for each key of the chain's pool entries, one of ten
 *       bits, picked by the key's {@link #filterMix}; zero unless overflowed.</li>
 * </ul>
 * A chain without pool entries is its order list. An overflowed chain keeps its home entries in
 * the order list and its pool entries (pool slots, and home slots lent by other lines) in the
 * bucket's record ({@link CompactChainRecords}: the pool entries' slots, oldest first, and a bit
 * per chain position saying whether a pool entry or the next home entry is there), so the chain,
 * oldest first, is the two merged by that interleave. A lookup of a key the pool filter turns away,
 * or whose line holds a live word of the key without {@link CompactSlots#POOL_TWIN}
 * ({@link CompactPoolTwins}), decides from the line alone: every entry of that key is in the line,
 * in the order list's order. Otherwise it walks the merged chain. A create takes a free home slot
 * of its bucket when there is one (a slot not in the order list, free and not resting,
 * {@link #freeHomeSlot}), else a pool slot. A bucket's record is allocated when its chain overflows, replaced by a larger one as its
 * pool entries grow, and given back when its last pool entry leaves ({@link #removeAt}): a bucket
 * holds a record only while its chain is in the pool, so a cache that turns over at its bound,
 * where in time most chains pass through the pool, keeps records for the chains in it now, not
 * for every chain that ever was. Records live in int pages: the table holds no object per bucket or
 * entry. Entries never move: a slot is its entry's place for the entry's life, so handles stay
 * valid.
 *
 * <h2>The keyed index</h2>
 * {@link KeyedIndex}'s: {@code h = a * p + b mod 2^64}, {@code p} the key premixed with a secret,
 * with {@code a} (odd), {@code b} and the secret from the cache's seed. The bucket is
 * {@code (hi(h) * buckets) >>> 32} ("fastrange": the top 32 bits of {@code h} scaled to the bucket
 * count), which for a power of two is exactly the top {@code bucketBits} bits the list layout
 * takes, so one seed gives the same buckets in both layouts. The pool filter takes its bit from
 * {@link #filterMix}, which depends on the whole keyed hash.
 *
 * <h2>Memory ordering</h2>
 * Accessor names say the mode, JCTools-style: {@code lv} volatile load, {@code la} acquire load,
 * {@code lp}/{@code sp} plain load and store, {@code so} release store, {@code cas}
 * compare-and-set. The header's upper half and the chain records are written only by the holder of
 * the bucket's lock bit, and read optimistically under the seqlock protocol of
 * {@link BucketLockWord} (acquire load of the header, the reads, acquire fence, load of the header
 * again); the lock CAS is an acquire, followed by a store-store fence, and the unlock a release
 * store. The version has 31 bits and wraps, with that class's bound (the contract, section 5). The
 * upper half is stored opaquely inside the critical section and republished by the unlock with
 * the new version. An optimistic reader takes the order list from the one header load it
 * validates; it reads a chain record (plainly) only when the pool filter lets its key through,
 * indexes it only below the record capacity of the page its directory entry names, and follows a
 * reference only if it names a slot ({@link CompactLine#isSlot}) below {@link #end}, so a stale,
 * reused or half-written record never makes it fault or treat a header as a meta word; the holder
 * changes a record only after its odd version, so a reader that saw anything the holder wrote sees
 * the version moved and retries ({@link CompactChainRecords}' "Memory ordering").
 *
 * <p>The meta word's protocol and memory order are {@link CompactSlots}'. Pool pages are
 * published by a release store into their directory (the value page before the meta page) and
 * read with an acquire load (a racing optimistic reader may follow a reference into a page it has
 * not seen yet: it finds {@code null} there and retries under the lock).
 *
 * <h2>Free slots</h2>
 * A freed slot (its pair claimed and unhashed, under its bucket's bit) has its generation advanced
 * and goes into the delay ring; the slot it displaces there, freed about a ring's length of frees
 * earlier, becomes usable again: a pool slot onto the free list, a home slot by clearing
 * {@link #RESTING} from its word (set when it was freed), after which its bucket's creates may take
 * it. So no slot, home or pool, is reused before about {@link CompactDelayRing#size} later frees of
 * the cache, and one key deleted and created in a loop cycles through its free home slots, then
 * pool slots, instead of one slot. Two reuses skip the ring, each only as often as the in-place
 * clock allows ({@link CompactDelayRing#mayRefillInPlace}): a line reclaim refills the home slot
 * it frees ({@link #retireInPlace}), and a reclaim pass gives the home slots it frees straight
 * back to their buckets ({@link #freeFromPass}).
 */
final class CompactTable {

    static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle PAGES = MethodHandles.arrayElementVarHandle(long[][].class);
    private static final VarHandle FREE_HEAD;
    private static final VarHandle NEXT_SLOT;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            FREE_HEAD = lookup.findVarHandle(CompactTable.class, "freeHead", long.class);
            NEXT_SLOT = lookup.findVarHandle(CompactTable.class, "nextSlot", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The most buckets a table has: their lines' meta indices stay below 2^29. */
    static final int MAX_BUCKETS = 1 << 26;
    /** The most pool slots a table has. */
    static final long MAX_POOL_SLOTS = 1L << 30;
    /** Bytes a bucket takes with the table: line (64), home values (56), chain record directory entry (4), key filter (4). */
    static final int BUCKET_BYTES = 128;

    /** The odd multiplier of {@link #filterMix} (SplitMix64's first). */
    private static final long FILTER_MULTIPLIER = 0xBF58_476D_1CE4_E5B9L;

    /** On a free home slot's word (count zero): in the delay ring, not for its bucket's creates yet ({@link #free}). */
    static final int RESTING = REFERENCED;

    final int buckets;
    /** {@code 8 * buckets}: meta indices below are lines, at and above the pool. */
    final int homeSlots;
    /** The meta space's end: no slot is at or above it. */
    final int slotLimit;
    final int pageBits;
    private final int pageMask;
    private final long multiplier;
    private final long increment;
    private final int premixSecret;

    private final long[][] metaPages;
    private final long[][] valuePages;
    /** The overflowed chains' pool entries and their places among the home entries. */
    final CompactChainRecords records;
    /** The buckets' key filters. */
    private final CompactKeyFilters keyFilters;
    /** Pool pages allocated under this lock (rare: once per page). */
    private final Object pageLock = new Object();
    /** Where {@code waitUnused} waits, keyed by this table: one queue (waits are rare; each waiter re-checks its slot). */
    final HashedWaitQueues unusedWaiters = new HashedWaitQueues(0);
    /**
     * What {@link #consume} compares the sums of loads-only look-aheads with ({@link #touchLine},
     * {@link #touchBucketsOfClaimable}): a value a sum almost never equals, set once. A plain field
     * that is read, and written only when a sum happens to equal it (about once in 2^64; a racy
     * write then changes nothing that matters), so that the compiler keeps the loads without a
     * store per create that every creating thread would contend on.
     */
    private long touchSentinel = System.nanoTime() | 1L << 62;

    /** Where {@link #stealHomeSlot} starts looking: a hint, racy on purpose. */
    private int stealCursor;
    /** The next never-used pool slot; slots below it have their pages. */
    private volatile int nextSlot;
    /** The free list of pool slots: a tag in the upper 32 bits (against ABA), the top slot in the lower (0: empty). */
    private volatile long freeHead;
    /** The cache's tag, in place in its handles' top 16 bits ({@link CompactHandles}); final, read by every handle check. */
    final long handleTag = CompactHandles.newTag();
    /** Freed slots on their way back to use ({@link #free}). */
    private final CompactDelayRing delayRing;

    /**
     * An empty table: its buckets' lines and home values allocated, its pool empty.
     *
     * @param buckets the bucket count, in {@code [1, 2^26]}
     * @param poolSlots the most pool slots, in {@code [1, 2^30]}
     * @param seed the keyed index's seed ({@link KeyedIndex#seed})
     */
    CompactTable(int buckets, long poolSlots, long[] seed) {
        if (buckets < 1 || buckets > MAX_BUCKETS) {
            throw new IllegalArgumentException("buckets must be in [1, 2^26], was " + buckets);
        }
        if (poolSlots < 1 || poolSlots > MAX_POOL_SLOTS) {
            throw new IllegalArgumentException("poolSlots must be in [1, 2^30], was " + poolSlots);
        }
        this.buckets = buckets;
        this.homeSlots = buckets * LINE_LONGS;
        this.slotLimit = CompactTableSizes.slotLimit(buckets, poolSlots);
        this.pageBits = CompactTableSizes.pageBits(homeSlots, slotLimit);
        this.pageMask = (1 << pageBits) - 1;
        this.multiplier = KeyedIndex.multiplier(seed);
        this.increment = KeyedIndex.increment(seed);
        this.premixSecret = KeyedIndex.premixSecret(seed);
        metaPages = new long[pagesFor(slotLimit)][];
        valuePages = new long[pagesFor(valueIndex(slotLimit - 1) + 1)][];
        for (int p = 0, pages = pagesFor(homeSlots); p < pages; p++) {
            metaPages[p] = new long[1 << pageBits];
        }
        for (int p = 0, pages = pagesFor(valueIndex(homeSlots - 1) + 1); p < pages; p++) {
            valuePages[p] = new long[1 << pageBits];
        }
        records = new CompactChainRecords(buckets);
        keyFilters = new CompactKeyFilters(buckets, pageBits);
        nextSlot = homeSlots + 1;
        delayRing = new CompactDelayRing(CompactTableSizes.ringBits(slotLimit));
    }

    private int pagesFor(int longs) {
        return (int) ((longs + (long) pageMask) >>> pageBits);
    }

    int bucketCount() {
        return buckets;
    }

    // ---------------------------------------------------------------------------------------------
    // The keyed index (KeyedIndex's family and seed expansion)
    // ---------------------------------------------------------------------------------------------

    /**
     * The key's keyed hash ({@link KeyedIndex#keyedHash(int, int, long, long)}: {@code a * p + b mod
     * 2^64} of the premixed key {@code p}): its bucket ({@link #bucketOfHash}) and its pool filter
     * bit ({@link #filterMixOfHash}) are both taken from it, so a lookup or a create computes it
     * once and passes it on.
     */
    long keyedHash(int key) {
        return KeyedIndex.keyedHash(key, premixSecret, multiplier, increment);
    }

    /** The bucket of a key, by its {@link #keyedHash}. */
    int bucketOfHash(long hash) {
        return (int) (((hash >>> 32) * buckets) >>> 32);
    }

    /** The bucket of a key ({@link #bucketOfHash} of its {@link #keyedHash}). */
    int bucketOf(int key) {
        return bucketOfHash(keyedHash(key));
    }

    /**
     * The key's 32 bits for the pool filter: its keyed hash folded onto itself (the top half XORed
     * into the bottom) and multiplied by an odd constant, the top half of the product. Every bit of
     * it depends on the whole keyed hash, the low half included (the bits the bucket leaves alone),
     * so keys of one bucket spread over all its values. (The keyed hash alone would not do: its bit
     * {@code j} depends only on the key's bits up to {@code j}.)
     */
    int filterMix(int key) {
        return filterMixOfHash(keyedHash(key));
    }

    /** The {@link #filterMix} of a key, by its {@link #keyedHash}. */
    int filterMixOfHash(long hash) {
        return (int) (((hash ^ (hash >>> 32)) * FILTER_MULTIPLIER) >>> 32);
    }

    // ---------------------------------------------------------------------------------------------
    // Bucket headers: the lock bit, the version and the chain's order
    // ---------------------------------------------------------------------------------------------

    /** The meta page holding bucket {@code b}'s line (all of it: a page holds whole lines). */
    long[] linePage(int b) {
        return metaPages[(b << 3) >>> pageBits];
    }

    /** The index of bucket {@code b}'s header in its {@link #linePage}; its home slot {@code i}'s meta word is {@code i} after it. */
    int lineBase(int b) {
        return (b << 3) & pageMask;
    }

    /** Takes bucket {@code b}'s lock bit: {@link BucketLockWord#lock}; returns the even version it was taken from. */
    long lock(int b) {
        return BucketLockWord.lock(linePage(b), lineBase(b));
    }

    /** Drops bucket {@code b}'s lock bit: {@link BucketLockWord#unlock}. */
    void unlock(int b) {
        BucketLockWord.unlock(linePage(b), lineBase(b));
    }

    /** The header an optimistic read starts from: {@link BucketLockWord#laHead}. */
    long laVersion(int b) {
        return BucketLockWord.laHead(linePage(b), lineBase(b));
    }

    /** Whether no critical section began since {@code head} was read: {@link BucketLockWord#validate}. */
    boolean validate(int b, long head) {
        return BucketLockWord.validate(linePage(b), lineBase(b), head);
    }

    /** The header, plainly: bit held. */
    private long lpHeader(int b) {
        return BucketLockWord.lpHead(linePage(b), lineBase(b));
    }

    /** Replaces the header's upper half (opaque; the version kept). Bit held. */
    private void setChainBits(int b, int order, boolean overflowed, long poolFilter) {
        BucketLockWord.setFilterOpaque(linePage(b), lineBase(b), chainBits(order, overflowed, poolFilter));
    }

    /** Whether {@code slot} is a home slot (in a line), not a pool slot. */
    boolean isHome(int slot) {
        return slot < homeSlots;
    }

    // ---------------------------------------------------------------------------------------------
    // Key filters: a miss without the line (CompactKeyFilters)
    // ---------------------------------------------------------------------------------------------

    /** {@link CompactKeyFilters#mayHold}: whether bucket {@code b}'s key filter lets a key of this {@link #filterMix} through. */
    boolean keyFilterMayHold(int b, int mix) {
        return keyFilters.mayHold(b, mix);
    }

    /**
     * Rebuilds bucket {@code b}'s key filter from the keys of its line's order list, where the chain
     * has no pool entries: their keys are in the line the bit holder has at hand (a chained slot's
     * key is fixed while the bit is held; an opaque load). An overflowed chain's filter is left as
     * it is (a superset) until the chain leaves the pool. Bit held.
     */
    private void rebuildKeyFilter(int b, int order) {
        long[] page = linePage(b);
        int base = lineBase(b);
        int filter = 0;
        for (; order != 0; order >>>= 3) {
            filter |= keyFilterBits(filterMix(keyOf((long) LONGS.getOpaque(page, base + (order & 7)))));
        }
        keyFilters.set(b, filter);
    }

    // ---------------------------------------------------------------------------------------------
    // Chains (bit held, or read optimistically and validated: CompactWalk)
    // ---------------------------------------------------------------------------------------------

    /** The chain's length. Bit held. */
    int length(int b) {
        long head = lpHeader(b);
        int home = lineLength(orderOf(head));
        return overflowed(head) ? home + records.poolCount(b) : home;
    }

    /** The slot at chain position {@code pos} (0 the oldest), {@code pos < length}. Bit held. */
    int refAt(int b, int pos) {
        long head = lpHeader(b);
        int order = orderOf(head);
        if (overflowed(head)) {
            return records.slotAt(b, order, pos);
        }
        return homeSlot(b, positionAt(order, lineLength(order) - 1 - pos));
    }

    /**
     * A home slot of bucket {@code b} that a create may take: not in the chain, its word free
     * (count zero) and not {@link #RESTING}; 0 if none. Bit held. A home slot in another chain (lent
     * to it, {@link #stealHomeSlot}) has a count above zero, or is resting from its claim
     * ({@link #claimedWord}) until the delay ring gives it back.
     */
    int freeHomeSlot(int b) {
        int free = freeHomePositions(b);
        return free == 0 ? 0 : homeSlot(b, Integer.numberOfTrailingZeros(free));
    }

    /** The line positions of bucket {@code b}'s home slots a create may take ({@link #freeHomeSlot}), as a bit mask. */
    private int freeHomePositions(int b) {
        long[] page = linePage(b);
        int base = lineBase(b);
        int used = positionsIn(orderOf(lpHeader(b)));
        int free = 0;
        for (int position = 1; position <= HOME_SLOTS; position++) {
            long meta = lvMeta(page, base + position);
            free |= (used & 1 << position) == 0 && count(meta) == 0 && (meta & RESTING) == 0 ? 1 << position : 0;
        }
        return free;
    }

    /**
     * Makes room for one more entry, {@code slot}, in bucket {@code b}'s chain, allocating before
     * anything changes (so a Throwable leaves the bucket as it was): where {@code slot} is a pool
     * entry (not a home slot of the bucket's line), a record that holds the chain's pool entries
     * with it ({@link CompactChainRecords#reserve}). A home entry needs no room: the record of an
     * overflowed chain has room for seven home positions beside its pool entries. Bit held.
     *
     * @throws IllegalStateException where the chain's record would exceed the largest, or the
     *     table's record pages are exhausted; nothing changed
     */
    void ensureRoom(int b, int slot) {
        if (isHomeOf(b, slot)) {
            return;
        }
        long head = lpHeader(b);
        int home = lineLength(orderOf(head));
        int pool = overflowed(head) ? records.poolCount(b) : 0;
        records.reserve(b, pool, home + pool);
    }

    /**
     * Appends {@code slot} as the chain's newest; {@code mix} is its key's {@link #filterMix}. Bit
     * held, {@link #ensureRoom} done. A home slot goes to the front of the order list; a pool slot
     * goes into the record and sets its key's pool filter bit. In an overflowed chain (or one this
     * makes so) the record's interleave gets the new position either way.
     */
    void addNewest(int b, int slot, int mix) {
        long head = lpHeader(b);
        int order = orderOf(head);
        boolean overflowed = overflowed(head);
        long poolFilter = head & POOL_FILTER_MASK;
        boolean home = isHomeOf(b, slot);
        int length = lineLength(order) + (overflowed ? records.poolCount(b) : 0);
        if (!home) {
            records.addPool(b, overflowed, length, slot);
            poolFilter |= poolFilterBit(mix);
            overflowed = true;
        } else {
            if (overflowed) {
                records.addHome(b, length);
            }
            order = (order << 3 | (slot & 7)) & ORDER_MASK;
        }
        keyFilters.add(b, mix);
        setChainBits(b, order, overflowed, poolFilter);
    }

    /**
     * Removes the entry at chain position {@code pos} (0 the oldest), keeping the order of the
     * others; returns its slot. Bit held. A home slot leaves the order list. In an overflowed chain
     * the position also leaves the record; a pool slot's removal rebuilds the pool filter from the
     * pool entries left ({@link #poolFilterOf}), and the last one's clears it and the overflowed
     * bit and gives the record back ({@link CompactChainRecords#clear}): the order list is then the
     * whole chain again. Optimistic readers of the record fail to validate the version this
     * critical section ends with, as they do when a record is replaced.
     */
    int removeAt(int b, int pos) {
        return removeAt(b, pos, false);
    }

    /**
     * {@link #removeAt(int, int)}, keeping the record with {@code keepRecord} where the last pool
     * entry leaves: for a create whose room for a pool entry is reserved ({@link #ensureRoom}) and
     * which reclaims for the chain cap before it adds the entry. Bit held.
     */
    int removeAt(int b, int pos, boolean keepRecord) {
        long head = lpHeader(b);
        int order = orderOf(head);
        boolean overflowed = overflowed(head);
        long poolFilter = head & POOL_FILTER_MASK;
        int slot;
        if (overflowed) {
            slot = records.slotAt(b, order, pos);
            if (records.removeAt(b, lineLength(order) + records.poolCount(b), pos)) {
                if (records.poolCount(b) == 0) {
                    if (!keepRecord) {
                        records.clear(b);
                    }
                    overflowed = false;
                    poolFilter = 0;
                } else {
                    poolFilter = poolFilterOf(b);
                }
            }
        } else {
            slot = homeSlot(b, positionAt(order, lineLength(order) - 1 - pos));
        }
        if (isHomeOf(b, slot)) {
            order = withoutPosition(order, slot & 7);
        }
        if (!overflowed) {
            rebuildKeyFilter(b, order);
        }
        setChainBits(b, order, overflowed, poolFilter);
        return slot;
    }

    /**
     * The pool filter of an overflowed chain, from its pool entries' keys. A chained slot's key is
     * fixed while the bit is held (a slot leaves its chain, and so can be freed and refilled, only
     * under it), so its meta word's upper half is read as it is; the lower half, the count and
     * flags, changes by CAS meanwhile and is not used. An opaque load: atomic, and not merged with
     * or hoisted above the loop's other loads. Bit held.
     */
    private long poolFilterOf(int b) {
        long filter = 0;
        for (int j = 0, pool = records.poolCount(b); j < pool; j++) {
            int slot = records.poolRef(b, j);
            long meta = (long) LONGS.getOpaque(metaPage(slot), metaIndex(slot));
            filter |= poolFilterBit(filterMix(keyOf(meta)));
        }
        return filter;
    }

    /** The position of {@code slot} in bucket {@code b}'s chain, oldest first, or -1. Bit held. */
    int positionFromOldest(int b, int slot) {
        int length = length(b);
        for (int pos = 0; pos < length; pos++) {
            if (refAt(b, pos) == slot) {
                return pos;
            }
        }
        return -1;
    }

    /** The position of {@code slot} in bucket {@code b}'s chain, newest first, or -1. Bit held. */
    int positionOf(int b, int slot) {
        for (int pos = length(b) - 1; pos >= 0; pos--) {
            if (refAt(b, pos) == slot) {
                return pos;
            }
        }
        return -1;
    }

    /** Empties the chain and drops its record (close). Bit held. */
    void clear(int b) {
        setChainBits(b, 0, false, 0);
        keyFilters.set(b, 0);
        records.clear(b);
    }

    // ---------------------------------------------------------------------------------------------
    // Slots: meta words and values
    // ---------------------------------------------------------------------------------------------

    /** The meta page of {@code slot}, or {@code null} if this thread has not seen it published. Acquire. */
    long[] laMetaPage(int slot) {
        return (long[]) PAGES.getAcquire(metaPages, slot >>> pageBits);
    }

    /** The meta page of a slot known to be allocated (reached under a bucket bit, or through a held handle). */
    long[] metaPage(int slot) {
        long[] page = metaPages[slot >>> pageBits];
        return page != null ? page : laMetaPage(slot);
    }

    /** The index of {@code slot}'s meta word in its {@link #metaPage}. */
    int metaIndex(int slot) {
        return slot & pageMask;
    }

    /** The value page of a slot known to be allocated (its meta page seen). */
    private long[] valuePage(int slot) {
        int p = valueIndex(slot) >>> pageBits;
        long[] page = valuePages[p];
        return page != null ? page : (long[]) PAGES.getAcquire(valuePages, p);
    }

    /** The value word of an allocated slot, plainly (ordered by the caller against its meta word's loads). */
    long lpValue(int slot) {
        return valuePage(slot)[valueIndex(slot) & pageMask];
    }

    /** Writes a free slot's value (the creator's, before the release store of its meta word). */
    void spValue(int slot, long value) {
        valuePage(slot)[valueIndex(slot) & pageMask] = value;
    }

    /**
     * The meta space's end as handed out so far, at most {@link #slotLimit}: the clock's range is
     * {@code [1, end)}, the slots in it {@link CompactLine#isSlot}.
     */
    int end() {
        return nextSlot;
    }

    /**
     * Loads, and only loads, the lines that claiming slots {@code [from, to)} will need: for each
     * slot whose meta word shows a claimable pair (one reference, the cache's; not referenced), its
     * bucket's line and chain record ({@link #touchLine}); a home slot's is its own line, already in
     * hand. The loads are independent of one another, so the processor overlaps their cache
     * misses; the claims that follow, each behind a locked instruction that would wait for its own
     * misses one after the other, then find these lines in the cache. Plain racy loads whose values
     * mean nothing: the sum is returned only so that the compiler keeps them. Slots below
     * {@link #end} only.
     *
     * @return a sum of the words loaded, to be consumed by the caller
     */
    long touchBucketsOfClaimable(int from, int to) {
        long sum = 0;
        for (int slot = from; slot < to; slot++) {
            long[] page = isSlot(slot) ? metaPages[slot >>> pageBits] : null;
            if (page == null) {
                continue;
            }
            long meta = page[metaIndex(slot)];
            if (((int) meta & (COUNT_MASK | REFERENCED)) == 1) {
                sum += touchLine(bucketOf(keyOf(meta)));
            }
        }
        return sum;
    }

    /**
     * Loads, and only loads, what a critical section on bucket {@code b} reads first: its key
     * filter, its line ({@link #touchLineWords}) and, if the bucket has a chain record, the record's
     * first int. Loaded before a lock CAS, these misses overlap one another. Plain racy loads whose
     * values mean nothing (a record replaced meanwhile is as good as any). Never faults.
     *
     * @return a sum of the words loaded, to be consumed by the caller
     */
    long touchLine(int b) {
        int entry = records.lpEntry(b);
        int[] record = entry == 0 ? null : records.laPage(entry);
        return keyFilters.touch(b) + touchLineWords(b) + (record == null ? 0 : record[CompactChainRecords.baseOf(entry, record)]);
    }

    /**
     * Loads, and only loads, bucket {@code b}'s line: its first and last long (the line spans one or
     * two cache lines). Plain racy loads, as {@link #touchLine}'s.
     *
     * @return a sum of the words loaded, to be consumed by the caller
     */
    long touchLineWords(int b) {
        long[] page = linePage(b);
        int base = lineBase(b);
        return page[base] + page[base + LINE_LONGS - 1];
    }

    /**
     * Loads, and only loads, bucket {@code b}'s home values (56 bytes: one or two cache lines), where
     * a create in a home slot writes its value: loaded before the lock CAS, the miss overlaps the
     * line's. Plain racy loads, as {@link #touchLine}'s.
     *
     * @return a sum of the words loaded, to be consumed by the caller
     */
    long touchHomeValues(int b) {
        int first = valueIndex(homeSlot(b, 1));
        long[] page = valuePages[first >>> pageBits];
        long[] last = valuePages[(first + HOME_SLOTS - 1) >>> pageBits];
        return page[first & pageMask] + last[(first + HOME_SLOTS - 1) & pageMask];
    }

    /** Whether bucket {@code b}'s order list names all seven home slots: exact with the bit held, a hint without. */
    boolean lineFull(int b) {
        return lineLength(orderOf(laVersion(b))) == HOME_SLOTS;
    }

    /** Keeps the loads whose sum is {@code touched} (see {@link #touchSentinel}). */
    void consume(long touched) {
        if (touched == touchSentinel) {
            touchSentinel = touched + 1;
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The pool: the free list, the delay ring
    // ---------------------------------------------------------------------------------------------

    /**
     * A free pool slot, popped from the free list or new at the end (its pages allocated first,
     * under the page lock; a Throwable there changes nothing), or, when neither has one, a free home
     * slot of another bucket among a ring's length of buckets ({@link #stealHomeSlot}), or one the
     * delay ring gives back ({@link #drainDelayRing}, so that no freed slot is out of reach), or,
     * with the ring empty, a free home slot of any bucket; 0 if every slot is in use. A drained slot
     * is reused before a ring's length of frees, so home slots are looked for first: a slot is reused
     * early only where free home slots are fewer than one in a ring's length of buckets, as where
     * callers hold nearly every slot (and where they hold every one, a create costs a look at a
     * ring's length of buckets and places, not the whole table, until the ring is empty). The slot's count is zero and
     * it is owned by the caller until it makes it live or frees it. A racing allocate that drains the
     * ring at the same moment may leave this one 0 while it still pushes the slots it took: the
     * caller's synchronous reclaim and retry ({@code CompactMbCache}'s create) then finds them.
     */
    int allocate() {
        for (;;) {
            int slot = pop();
            if (slot != 0 || (slot = takeNew()) != 0 || (slot = stealHomeSlot(delayRing.size())) != 0) {
                return slot;
            }
            if (drainDelayRing() == 0 && (int) freeHead == 0) {
                return stealHomeSlot(buckets);
            }
        }
    }

    /**
     * A free home slot of any bucket, for use as a pool slot where the pool has none left (callers
     * hold every pool slot, and the free ones are in lines of other buckets): the buckets are
     * looked at from where the last steal found one, each whose order list has room locked and its
     * {@link #freeHomeSlot} taken, marked {@link #RESTING} so that its own bucket passes it over
     * until it goes live in its new chain (or is given back, {@link #freeUnused}). 0 if no bucket has
     * one among the {@code lookAt} buckets looked at (at most all; the next look starts after them).
     * Called with no bucket's bit held.
     */
    private int stealHomeSlot(int lookAt) {
        int start = stealCursor;
        int n = Math.min(lookAt, buckets);
        for (int i = 0; i < n; i++) {
            int b = start + i < buckets ? start + i : start + i - buckets;
            if (lineLength(orderOf(laVersion(b))) == HOME_SLOTS) {
                continue;
            }
            lock(b);
            try {
                int slot = freeHomeSlot(b);
                if (slot != 0) {
                    long[] page = linePage(b);
                    int at = lineBase(b) + (slot & 7);
                    soMeta(page, at, lvMeta(page, at) | RESTING);
                    stealCursor = b;
                    return slot;
                }
            } finally {
                unlock(b);
            }
        }
        stealCursor = start + n < buckets ? start + n : start + n - buckets;
        return 0;
    }

    /** The free list's top slot, popped; 0 if the list is empty. */
    private int pop() {
        for (;;) {
            long head = (long) FREE_HEAD.getVolatile(this);
            int slot = (int) head;
            if (slot == 0) {
                return 0;
            }
            // The pusher wrote the link before its CAS; this thread's volatile load of the head saw
            // that CAS. If the slot was popped and reused meanwhile, the link is garbage and the CAS
            // below fails on the tag.
            int next = (int) lpValue(slot);
            if (FREE_HEAD.compareAndSet(this, head, ((head >>> 32) + 1) << 32 | (next & 0xFFFF_FFFFL))) {
                return slot;
            }
        }
    }

    /** A never-used pool slot from the end, its pages allocated first; 0 once the end reaches {@link #slotLimit}. */
    private int takeNew() {
        for (;;) {
            int slot = nextSlot;
            if (slot >= slotLimit) {
                return 0;
            }
            ensurePages(slot);
            int next = Math.min(slotLimit, isSlot(slot + 1) ? slot + 1 : slot + 2); // the end never passes the meta space
            if (NEXT_SLOT.compareAndSet(this, slot, next)) {
                return slot;
            }
        }
    }

    /** Allocates {@code slot}'s value page, then its meta page, where missing (release stores, under the page lock). */
    private void ensurePages(int slot) {
        int metaPage = slot >>> pageBits;
        int valuePage = valueIndex(slot) >>> pageBits;
        if (PAGES.getAcquire(metaPages, metaPage) != null && PAGES.getAcquire(valuePages, valuePage) != null) {
            return;
        }
        synchronized (pageLock) {
            if (valuePages[valuePage] == null) {
                PAGES.setRelease(valuePages, valuePage, new long[1 << pageBits]);
            }
            if (metaPages[metaPage] == null) {
                PAGES.setRelease(metaPages, metaPage, new long[1 << pageBits]);
            }
        }
    }

    /**
     * The word a claim leaves in {@code slot} ({@code word}, count zero): on a home slot with
     * {@link #RESTING} set. A home slot lent to another bucket's chain ({@link #stealHomeSlot}) is
     * claimed under that bucket's bit, not its own bucket's; without the flag its own bucket's
     * creates would take it as free between the claim and the {@link #free} that follows.
     */
    long claimedWord(int slot, long word) {
        return isHome(slot) ? word | RESTING : word;
    }

    /**
     * Frees the slot of a pair that left the cache (claimed, count zero, and unhashed): retires it
     * ({@link #retire}), then puts it into the delay ring ({@link CompactDelayRing#exchange}) and the
     * slot it displaces, freed about one ring length of frees earlier, back into use
     * ({@link #recycle}). So a slot is handed out again only after about
     * {@link CompactDelayRing#size} further frees, and the generations of a cache's slots advance
     * together instead of one slot taking every reuse. Memory order: the freer's stores to the slot
     * (the generation's release store, and everything before it) precede its exchange, a volatile
     * write; the free that displaces the slot reads that write with its own exchange, a volatile
     * read, so happens after the stores, and so does its recycling store (a release: the link's on
     * the free list, published by the list's CAS, or the resting flag's clearing, read by the
     * bucket's next create with a volatile load). So whoever takes the slot next sees the advanced
     * generation before it makes the slot live with it. Bucket bit held; allocation-free.
     */
    void free(int slot) {
        retire(slot);
        recycle(delayRing.exchange(slot));
    }

    /**
     * Advances a claimed slot's generation: a handle of its pair is stale from here on, whether or
     * not the cache is closed later, and the slot's next pair goes live with this generation (so it
     * counts the pairs a slot held). A home slot's word also gets {@link #RESTING} (its other flags
     * dropped): its bucket's creates pass it over. A release store: nobody else writes a word whose
     * count is zero (every CAS loop but the claim refuses it, the claim needs count one, and a create
     * takes only a home slot that is not resting). Bit held, so a create in the bucket never sees the
     * slot out of the chain and not yet retired. {@link #free}'s first half; with {@link #retireInPlace},
     * for a line reclaim, which refills the slot in the same critical section.
     */
    void retire(int slot) {
        long[] page = metaPage(slot);
        int at = metaIndex(slot);
        long meta = lvMeta(page, at);
        soMeta(page, at, isHome(slot) ? CompactSlots.retiredHomeWord(meta) | RESTING
                : CompactSlots.retiredPoolWord(meta));
    }

    /**
     * Frees the slot of a pair a reclaim pass claimed and unhashed ({@link CompactClock}): a home slot
     * the in-place clock lets be reused now ({@link #mayRefillInPlace}) goes straight back to its
     * bucket, generation advanced, not {@link #RESTING} (a release store, as {@link #retire}'s),
     * counted on the clock as a line reclaim's refill; any other slot through the ring ({@link #free}).
     * Through the ring, the lines a pass has just swept would send their buckets' next creates to
     * the pool (about 6 % of a turnover's creates at 10^5 entries). Bit held; allocation-free.
     */
    void freeFromPass(int slot) {
        if (isHome(slot)) {
            long[] page = metaPage(slot);
            int at = metaIndex(slot);
            long meta = lvMeta(page, at);
            if (delayRing.mayRefillInPlace(generation(meta))) {
                soMeta(page, at, CompactSlots.retiredHomeWord(meta));
                delayRing.countRefill();
                return;
            }
        }
        free(slot);
    }

    /**
     * Retires a claimed home slot that a line reclaim refills in the same critical section
     * ({@link CompactWalk#reclaimInLine}), skipping the ring ({@link #retire}), and counts the refill
     * on the in-place clock. Bit held.
     */
    void retireInPlace(int slot) {
        retire(slot);
        delayRing.countRefill();
    }

    /**
     * Whether a line reclaim may refill a home slot whose occupant has {@code generation} in place
     * now ({@link CompactDelayRing#mayRefillInPlace}, the in-place clock).
     */
    boolean mayRefillInPlace(int generation) {
        return delayRing.mayRefillInPlace(generation);
    }

    /**
     * Puts a slot the delay ring gave back ({@code 0}: none) into use again: a pool slot onto the
     * free list, a home slot by clearing {@link #RESTING} (a release store: nobody else writes a
     * resting word). Allocation-free.
     */
    private void recycle(int slot) {
        if (slot == 0) {
            return;
        }
        if (isHome(slot)) {
            long[] page = metaPage(slot);
            int at = metaIndex(slot);
            soMeta(page, at, lvMeta(page, at) & ~(long) RESTING);
        } else {
            push(slot);
        }
    }

    /**
     * Puts every slot of the delay ring back into use ({@link #recycle}), the newest first, so the
     * oldest pool slot ends on top of the free list and is handed out first: the drained slots are
     * reused in the order they were freed, each after all the others ({@link CompactDelayRing#take};
     * memory order as in {@link #free}); how many it moved. For {@link #allocate} once no other
     * slot is left, and for tests and the stress races that want a freed slot reused soon.
     * Allocation-free.
     */
    int drainDelayRing() {
        int moved = 0;
        int oldest = delayRing.oldest();
        for (int i = delayRing.size() - 1; i >= 0; i--) {
            int slot = delayRing.take(oldest + i);
            if (slot != 0) {
                recycle(slot);
                moved++;
            }
        }
        return moved;
    }

    /**
     * Puts back a pool slot that {@link #allocate} handed out and that never went live (its create
     * found the pair cached, or a home slot free, or the chain full, or failed), its word as it was:
     * no pair held it, so its generation stays, and it goes straight onto the free list (no pair's
     * handle can be stale on it but the last pair's, whose generation the slot's next pair does not
     * have). Allocation-free.
     */
    void freeUnused(int slot) {
        if (isHome(slot)) {
            recycle(slot); // a stolen home slot: back to its own bucket
        } else {
            push(slot);
        }
    }

    /**
     * Pushes a pool slot whose count is zero onto the free list: the link goes into the slot's
     * value word (a release store, after {@link #free}'s generation, which happens before it,
     * through the ring's exchange where another thread pushes: a racing {@code value(handle)} that
     * reads the link, whose acquire fence orders that load before its load of the meta word, sees
     * the new generation and throws; the link itself is published to the free list by the CAS).
     */
    private void push(int slot) {
        long[] page = valuePage(slot);
        int at = valueIndex(slot) & pageMask;
        for (;;) {
            long head = (long) FREE_HEAD.getVolatile(this);
            LONGS.setRelease(page, at, (long) (int) head);
            if (FREE_HEAD.compareAndSet(this, head, ((head >>> 32) + 1) << 32 | slot)) {
                return;
            }
        }
    }

    /** The delay ring's places: the frees a freed slot waits for before it is used again. */
    int ringSize() {
        return delayRing.size();
    }

    /** The slots of the table, home and pool: {@code 7/8} of {@link #slotLimit}. */
    int capacity() {
        return slotLimit / LINE_LONGS * HOME_SLOTS;
    }

    /**
     * Free slots: pool slots on the list or never handed out, slots in the delay ring, and home
     * slots out of their chains and not resting (walks them all; for tests and the bench's
     * accounting). Quiet tables only.
     */
    int freeSlots() {
        int n = 0;
        for (int slot = (int) freeHead; slot != 0 && n < slotLimit; slot = (int) lpValue(slot)) {
            n++;
        }
        for (int slot = nextSlot; slot < slotLimit; slot++) {
            n += isSlot(slot) ? 1 : 0;
        }
        for (int b = 0; b < buckets; b++) {
            n += Integer.bitCount(freeHomePositions(b));
        }
        return n + delayRing.occupied();
    }

    /** The hot-mode cells and vote of this table's slots (their {@link HotReferences.Host}). */
    final CompactHotSlots hot = new CompactHotSlots(this);

    // ---------------------------------------------------------------------------------------------
    // Accounting
    // ---------------------------------------------------------------------------------------------

    /** Bytes held by the arrays (lines, values and pool pages, chain records and their directory, key filters, the delay ring). */
    long footprintBytes() {
        long bytes = 16L + 4L * metaPages.length + 16L + 4L * valuePages.length + records.footprintBytes()
                + keyFilters.footprintBytes() + delayRing.footprintBytes();
        for (long[][] pages : new long[][][] {metaPages, valuePages}) {
            for (long[] page : pages) {
                bytes += page == null ? 0 : 16L + 8L * page.length;
            }
        }
        return bytes;
    }
}
