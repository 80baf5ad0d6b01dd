package org.mbcache;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.mbcache.internal.Lifecycle;
import org.mbcache.internal.Snapshots;

/**
 * The kernel port in a compact layout: the same design as {@link MbCache} (keyed buckets, a seqlock
 * per bucket, reference counts, second-chance reclaim, a chain cap), with no object per entry.
 *
 * <p><b>Which backend.</b> Use {@link MbCache} below about a million entries (ext4's 16,384
 * included), and this class from about a million entries up, or at any size where heap size or
 * collector pauses matter ({@code docs/benchmarks.md} has the figures behind that rule).
 * {@link MbCache} keeps one 40-byte object per entry, linked on an LRU
 * list: exact creation-order reclaim, misses answered from key filters small enough to stay in the
 * processor caches (it misses faster than this class at small sizes), request-list and
 * allocate-first creates, and short young collections while its entries are few. This class keeps
 * every entry in primitive arrays allocated in pages, with no object per entry: each bucket has one
 * 64-byte line holding its lock word, the order of its chain and the 8-byte meta words (key, count,
 * flags, generation) of seven home slots, whose values sit in a parallel array; a chain longer than
 * its line continues in pool slots (16 bytes each), named in a record of the bucket's in shared int
 * pages.
 * A 4-byte key filter a bucket, in a small array of its own, answers most misses without the line.
 * About 24 bytes an entry at six entries a bucket, the size a cache sized from its bound keeps at
 * every size (the bucket count need not be a power of two), and a number of objects that grows only
 * by one page per 2^15 pool slots and one per up to 4,096 overflowed chains' records. The collector
 * has nothing per entry or per bucket to copy or trace. A hit on an entry in its bucket's line
 * reads that line alone, at an address known from the key: it compares the keys there and takes
 * its reference with one CAS in the same line, where MbCache follows about seven references and a
 * list-and-record layout two dependent misses. What a hit cannot shed in either layout is its
 * locked instructions (the reference count's acquire and release, and the hit counter): each waits
 * for the loads before it. Reclaim is a CLOCK hand over the slots, not a list, so its order is
 * the table's order (see "Reclaim order" below), not creation order.
 *
 * <p><b>Two APIs.</b> The {@link DedupCache} methods hand out {@link CacheEntry} objects that are
 * light views of a handle: a new 32-byte object per lookup, which the cache does not keep, so a
 * cache used only through {@link DedupCache} still holds no object per entry, and its views die
 * young. Two views of one cached pair are {@linkplain Object#equals equal} (and have one hash
 * code), though not the same object; the contract promises equality, not identity. The primitive
 * API ({@link #findFirstHandle}, {@link #getHandle},
 * {@link #deleteOrGetHandle}, {@link #findNextHandle}, {@link #release(long)} and the rest) hands
 * out {@code long} handles instead and allocates nothing: lookups, refused duplicates and new
 * creates are 0 bytes an operation. A handle is the slot index in the low 31 bits, the slot's
 * generation (17 bits) above and this cache's tag in the top 16 ({@code CompactHandles});
 * {@link #NO_ENTRY} means none. One of another cache, or of no slot handed out, is refused
 * ({@link IllegalArgumentException}). One used after it was released and its pair left the cache
 * never reaches the slot's new occupant unless the slot held 131,072 pairs since (a freed slot is
 * reused only after about min(8192, slots / 8) later frees, or, where callers hold all but a few
 * slots, after every other free slot: about 2^30 frees of the cache with the full ring, 2^26 in the
 * smallest, and 2^16-2^17 times the free slots in a table callers hold nearly all of; a slot line
 * reclaim refills at once or a pass gives straight back to its bucket, skipping the ring (tables of
 * 2^14 buckets up), is reused so only while its generation is not ahead of a count of the cache's
 * reuses: it wraps only after about 4.3 x 10^8 reuses, 7 minutes at a million a second): {@link #release(long)}, {@link #findNextHandle}, {@link #key} and
 * {@link #value} throw {@link IllegalStateException}, {@link #touch(long)} and
 * {@link #setReusable(long, boolean)} do nothing, {@link #reusable(long)} answers {@code false},
 * {@link #waitUnused(long)} returns at once, as on an entry object whose pair left. One used after
 * its release while its pair is still cached reads that pair (and a second release spends another
 * holder's reference, as with entry objects). At most 510 callers hold a cold pair at once; the
 * next switches it to hot mode (unbounded) or, if it cannot, throws {@link IllegalStateException}.
 *
 * <p><b>Options.</b> {@link #builder()} has {@link MbCache.Builder}'s options, with two
 * differences: the default {@code maxEntries} is 8 per bucket (given {@code bucketBits}; a cache
 * given only {@code maxEntries} sizes its table at 6 a bucket), and the only create strategy is
 * {@link CreateStrategy#REQUEST_LIST}'s behaviour: a create takes a free home slot of its bucket in
 * its critical section, or, with the line full, claims a pool slot before it takes the bucket's bit
 * again, and gives it back if the pair turned out to be cached; a refused duplicate allocates
 * nothing and a pair found cached by the optimistic read takes no lock. In a table of 16,384
 * buckets or more (sized from a {@code maxEntries} of about 98,000 up), a create at the bound into a
 * full line reclaims the line's oldest entry nobody holds instead (<em>line reclaim</em>, the
 * contract's section 4: second chance, held entries spared, and a slot refilled so only as the in-place clock allows),
 * so that a full cache keeps its entries in their lines and its pool small. The table has
 * {@code 4 * maxEntries} pool slots (at least 512 and twice its delay ring's places, {@code poolSlots};
 * at most 2^30) besides its buckets' home slots, and
 * at most 2^26 buckets: a create that finds no slot free (entries held by callers far beyond the
 * bound) runs a synchronous reclaim pass, and throws {@link IllegalStateException} if that frees
 * none. Where the pool is spent, a free home slot of another bucket serves as a pool slot.
 *
 * <p><b>Reclaim order.</b> The hand sweeps the slots in index order and wraps: the buckets' lines
 * in bucket order, then the pool. Where an entry sits depends on its key's keyed hash, so the order
 * in which the hand meets entries is the table's, not their creation order: a new entry may be met
 * at once or after a whole sweep. Referenced entries get their second chance, and held ones are
 * never freed, as in MbCache. The hand walks slots, not entries, so a pass looks at about
 * {@code 8 * buckets / size()} slots for each entry it meets: a create at the bound of a table of
 * far more buckets than its bound pays for a walk over mostly empty slots, about a thousand where
 * the bound is a thousandth of the slots. Size the table from {@code maxEntries} (6 entries a
 * bucket) or keep {@code maxEntries} near 8 a bucket. A snapshot
 * ({@link #writeSnapshot}) lists the pairs in this order from the hand, a key's values together
 * and in their order; a restore creates them in the order it reads them, each where a create puts
 * it, so every key's values keep their order, and the restored cache's order is its table's.
 *
 * <p><b>Hot entries.</b> As in MbCache, a slot whose meta word's CAS keeps failing (many threads
 * hitting one pair) switches to hot mode: callers' references then go to per-stripe cells of its
 * own, so hits of one pair on different threads write different cache lines. At most 16 slots of a
 * cache are hot at once; their cells ({@code (stripes + 1) * 128} bytes each) are allocated at the
 * switch and dropped when the pair leaves the cache. Cold slots keep their 16 bytes.
 */
public final class CompactMbCache extends KernelPortCache {

    /*
     * Implementation notes. CompactTable is the storage, CompactSlots a slot's meta word and every
     * CAS loop on it (the protocol, the slot-reuse argument, the memory order), CompactWalk the
     * walks over a chain, CompactClock the reclaim order, CompactEntry the DedupCache face's entry
     * object. This class is the API over them: the create's critical section, the handle checks,
     * close and the snapshots.
     *
     * Every path that takes a slot out of a chain goes through CompactTable.removeAt (deleteOrGet,
     * the chain cap, the clock's claim) or clear (close), inside the bucket's critical section, and
     * frees it there, so the pool filter stays a superset of the chain's pool keys
     * (FilterRebuildVsLookup.Compact in the stress module races a rebuild against a lookup) and a
     * create never sees a home slot out of its chain and not yet freed.
     *
     * Failure atomicity. Allocation happens in three places: a pool page (CompactTable.allocate,
     * before the slot is handed out), a bucket's chain record (ensureRoom, first in the critical
     * section), and the entry views of the DedupCache methods (after the reference was taken:
     * the reference is given back if that throws). The free list, the counts and the statistics
     * never allocate, so nothing can fail between a change and its bookkeeping.
     */

    /** What the primitive lookups return when there is no entry. */
    public static final long NO_ENTRY = -1L;

    private static final long ALREADY_CACHED = -1L;
    /** {@link #hash}: a restore's chain is at the cap; nothing created. */
    private static final long CHAIN_FULL = -4L;
    /** {@link #hash}: the bucket's line is full and no pool slot was given; nothing changed. */
    private static final long NEEDS_POOL_SLOT = -5L;
    /** {@link #hash}'s flag: the pair went into the pool slot it was given. */
    private static final long POOL_SLOT_USED = 1L << 62;
    /** {@link #hash}'s flag: the pair went into a slot the create's line reclaim freed. */
    private static final long LINE_RECLAIMED = 1L << 61;
    private static final int DEFAULT_ENTRIES_PER_BUCKET = 8;
    /**
     * The fewest buckets with which a create at the bound reclaims in its line, and a reclaim pass
     * gives home slots back in place: below, the ring may be shorter than its 8,192 places, so a
     * slot reused in place would wrap its handles' generation sooner ({@link CompactDelayRing#mayRefillInPlace}),
     * and the pool is small enough to stay in the processor's caches.
     */
    static final int LINE_RECLAIM_MIN_BUCKETS = 1 << 14;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            // As in MbCache: classes an operation would otherwise initialize late, mid-pass.
            lookup.ensureInitialized(BackgroundReclaim.class);
            lookup.ensureInitialized(BucketLockWord.class);
            lookup.ensureInitialized(ReclaimPassEvent.class);
            lookup.ensureInitialized(ReclaimPassEvent.Kind.class);
            lookup.ensureInitialized(ChainCapEvent.class);
            lookup.ensureInitialized(MemoryPressureEvent.class);
            lookup.ensureInitialized(CompactTable.class);
            lookup.ensureInitialized(CompactSlots.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final CompactTable table;
    /** When a create may reclaim in its line; null (never) in tables below {@value #LINE_RECLAIM_MIN_BUCKETS} buckets. */
    private final LineReclaimBand lineReclaimBand;
    /** The books' lock. */
    private final ReentrantLock reclaimLock;

    /** The reclaim order: the hand's sweep and the snapshots' walk. */
    private final CompactClock clock;

    private CompactMbCache(Builder builder) {
        this(builder, 1L << builder.options.bucketBits());
    }

    /**
     * A cache of {@code buckets} buckets, any count in {@code [1, 2^26]}, with the builder's other
     * options ({@code bucketBits} ignored). {@code build()} gives {@code 2^bucketBits} when
     * {@code bucketBits} was set, and the default sizing ({@link #sizedFromMaxEntries}) otherwise.
     */
    CompactMbCache(Builder builder, long buckets) {
        this(builder, buckets, buckets >= LINE_RECLAIM_MIN_BUCKETS);
    }

    /** {@link #CompactMbCache(Builder, long)}, with line reclaim on or off whatever the size (tests). */
    CompactMbCache(Builder builder, long buckets, boolean lineReclaim) {
        this(builder.options, CompactTableSizes.checkedBuckets(buckets), builder.options.maxEntries(DEFAULT_ENTRIES_PER_BUCKET), lineReclaim);
    }

    private CompactMbCache(KernelPortOptions options, long buckets, long maxEntries, boolean lineReclaim) {
        super(options, 64 - Long.numberOfLeadingZeros(buckets - 1), maxEntries, options.chainCap(maxEntries, buckets));
        this.table = new CompactTable((int) buckets, CompactTableSizes.poolSlots((int) buckets, maxEntries), KeyedIndex.seed(options.hashSeed()));
        this.lineReclaimBand = lineReclaim ? new LineReclaimBand(maxEntries) : null;
        this.reclaimLock = books.lock;
        this.clock = new CompactClock(table, lineReclaim); // both reuse in place only with the full ring
        books.sweepWith(clock);
    }

    /**
     * The cache {@code builder} describes with its bucket count sized from its {@code maxEntries}
     * ({@link CompactTableSizes#defaultBuckets}) instead of {@code 2^bucketBits}: what {@code build()} does when
     * {@code bucketBits} was not given.
     *
     * @throws IllegalArgumentException if the builder has no {@code maxEntries}
     */
    static CompactMbCache sizedFromMaxEntries(Builder builder) {
        long maxEntries = builder.options.maxEntries(0);
        if (maxEntries <= 0) {
            throw new IllegalArgumentException("sizing from maxEntries needs maxEntries");
        }
        return new CompactMbCache(builder, CompactTableSizes.defaultBuckets(maxEntries));
    }

    /**
     * A new cache of {@code 2^bucketBits} buckets with the defaults: {@code maxEntries} 8 per bucket,
     * background reclaim on the shared daemon thread.
     *
     * @param bucketBits log2 of the number of buckets, in {@code [0, 30]}
     * @return a new, empty cache
     * @throws IllegalArgumentException if {@code bucketBits} is outside {@code [0, 30]}, or its
     *     buckets' lines, values and filters alone (128 bytes a bucket) would exceed the JVM's maximum heap,
     *     or it is above 26 (2^26 buckets)
     */
    public static CompactMbCache create(int bucketBits) {
        return builder().bucketBits(bucketBits).build();
    }

    /**
     * A builder with the defaults: buckets sized from {@code maxEntries} when only that is given,
     * else 2^10 buckets and 8 entries per bucket; a random hash seed, the default chain cap,
     * background reclaim on the shared daemon thread {@code mbcache-reclaim}.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Configures and builds a {@link CompactMbCache}: {@link MbCache.Builder}'s options, validated
     * the same way. Not thread-safe; each {@link #build()} makes a new cache.
     */
    public static final class Builder extends KernelPortBuilder<Builder> {

        private Builder() {}

        /** Refuses every strategy but {@link CreateStrategy#REQUEST_LIST}, the one this backend has. */
        @Override
        CreateStrategy accepted(CreateStrategy createStrategy) {
            if (createStrategy != CreateStrategy.REQUEST_LIST) {
                throw new IllegalArgumentException("only REQUEST_LIST is supported, was " + createStrategy);
            }
            return createStrategy;
        }

        /**
         * A new, empty cache, registered for memory-pressure reclaim until it is closed unless
         * {@link #memoryPressureReclaim(boolean)} was set to {@code false}.
         *
         * @return the cache
         * @throws IllegalArgumentException if the buckets' lines, values and filters alone (128 bytes a bucket) would
         *     exceed the JVM's maximum heap ({@link Runtime#maxMemory()}); a builder given no
         *     {@code bucketBits} and a {@code maxEntries} of 403 million or more ({@code Long.MAX_VALUE},
         *     say) sizes the table at 2^26 buckets, 7.75 GiB; {@code bucketBits} above 26 is refused
         */
        public CompactMbCache build() {
            return !options.bucketBitsSet() && options.maxEntries(0) > 0 ? sizedFromMaxEntries(this) : new CompactMbCache(this);
        }
    }

    /** {@return how duplicates are refused: always {@link CreateStrategy#REQUEST_LIST} (see the class comment)} */
    @Override
    public CreateStrategy createStrategy() {
        return CreateStrategy.REQUEST_LIST;
    }

    // ---------------------------------------------------------------------------------------------
    // create
    // ---------------------------------------------------------------------------------------------

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_create}: an optimistic read refuses a pair already cached
     * without the bucket's bit; otherwise a free slot is claimed, and one critical section checks
     * the chain (unless the bit was taken from the version the read validated), reclaims for the
     * chain cap, fills the slot and hashes it. Allocates nothing but a new slot page, once per page.
     */
    @Override
    public boolean create(int key, long value, boolean reusable) {
        return createPair(key, value, reusable, false);
    }

    /** {@link #create}, or with {@code restore} {@link #createForRestore}. */
    private boolean createPair(int key, long value, boolean reusable, boolean restore) {
        ensureOpen();
        // A restore's budget keeps it within maxEntries: it must not evict what was cached.
        long count = restore ? 0 : backgroundReclaim.beforeCreate();
        boolean reclaimInLine = !restore && lineReclaimBand != null && lineReclaimBand.allows(count);
        long keyed = table.keyedHash(key);
        int bucket = table.bucketOfHash(keyed);
        // The home values' miss overlaps the line's: the check by pair reads a matching key's value.
        table.consume(table.touchHomeValues(bucket));
        long seen = CompactWalk.versionWithout(table, bucket, keyed, key, value);
        if (seen == CompactWalk.CONTAINED) {
            statistics.add(ReclaimBooks.DUPLICATES_REFUSED, 1);
            return false;
        }
        long outcome = NEEDS_POOL_SLOT;
        // A line whose order list is full has no home slot to give: claim the pool slot first,
        // unless the create may reclaim in the line.
        for (int attempt = table.lineFull(bucket) && !reclaimInLine ? 1 : 0; outcome == NEEDS_POOL_SLOT; attempt++) {
            int poolSlot = 0;
            if (attempt > 0) {
                poolSlot = table.allocate();
                if (poolSlot == 0) { // a restore reclaims nothing: with every slot in use, the pair is skipped
                    if (restore) {
                        return false;
                    }
                    if (attempt > 1) {
                        throw new IllegalStateException("every slot of " + this + " is in use: callers hold too many entries");
                    }
                    // A pass frees slots, and gives back resting home slots: look at the line again.
                    books.reclaim(BackgroundReclaim.SYNC_SHRINK_BATCH, ReclaimPassEvent.Kind.SYNCHRONOUS);
                }
            }
            outcome = hashInto(bucket, keyed, key, value, reusable, poolSlot, seen, restore, reclaimInLine);
        }
        if (outcome == ALREADY_CACHED) {
            statistics.add(ReclaimBooks.DUPLICATES_REFUSED, 1);
            return false;
        }
        if (outcome == CHAIN_FULL) {
            return false;
        }
        statistics.add(restore ? ReclaimBooks.RESTORES : ReclaimBooks.CREATES, 1);
        if ((outcome & LINE_RECLAIMED) != 0) {
            statistics.add(ReclaimBooks.LINE_RECLAIMS, 1);
            outcome &= ~LINE_RECLAIMED;
        }
        int reclaimed = (int) outcome;
        if (reclaimed != 0) {
            statistics.add(ReclaimBooks.CHAIN_CAP_RECLAIMS, reclaimed);
        }
        if (outcome != 0) {
            ChainCapEvent.commitIfEnabled(this, key, (int) (outcome >>> 32), chainCap, reclaimed);
        }
        return true;
    }

    /**
     * A restore's create ({@link #readSnapshot}): as {@link #create}, but it never reclaims: no
     * background pass is scheduled (the restore's budget keeps the count within
     * {@code maxEntries}, and the shared estimate a create decides on may read high by up to its
     * slack), no slot is taken back, and a pair whose chain is at the cap, or that finds every slot
     * in use, is skipped (false, as for a pair already cached), so that a restore evicts no pair,
     * neither one cached before it nor one it created. One critical section checks the chain and
     * the cap and hashes, as a create's.
     */
    @Override
    boolean createForRestore(int key, long value, boolean reusable) {
        return createPair(key, value, reusable, true);
    }

    /**
     * {@link #hash}, with {@code poolSlot} (a pool slot the caller took, or 0) given back to the
     * pool unless it went live: also where the critical section throws (the chain record's
     * allocation, or close()).
     */
    private long hashInto(int bucket, long keyed, int key, long value, boolean reusable, int poolSlot, long seen,
                          boolean restore, boolean reclaimInLine) {
        table.consume(table.touchLine(bucket)); // its misses overlap the lock CAS's wait
        long outcome;
        try {
            outcome = hash(bucket, keyed, key, value, reusable, poolSlot, seen, restore, reclaimInLine);
        } catch (Throwable failure) {
            if (poolSlot != 0) {
                table.freeUnused(poolSlot);
            }
            throw failure;
        }
        if (poolSlot != 0 && (outcome < 0 || (outcome & POOL_SLOT_USED) == 0)) {
            table.freeUnused(poolSlot);
        }
        return outcome < 0 ? outcome : outcome & ~POOL_SLOT_USED;
    }

    /**
     * The create's critical section: {@link #ALREADY_CACHED}, {@link #NEEDS_POOL_SLOT} (the line
     * has no free home slot and the caller gave no pool slot: nothing changed), or the chain cap's
     * outcome (0 if the chain was below the cap; else the length found in bits 32-62 and the entries
     * reclaimed in the lower 32), with {@link #POOL_SLOT_USED} where the pair went into
     * {@code poolSlot} and {@link #LINE_RECLAIMED} where it went into a slot its line reclaim freed.
     * A free home slot of the bucket is taken first; with {@code reclaimInLine} (the cache at its
     * bound, and no pool slot given: a retry after that reclaim found nothing), where the line holds
     * seven entries, then a slot of the line reclaimed ({@link CompactWalk#reclaimInLine}). A restore's
     * ({@code restore}) reclaims nothing for the cap: at the cap it answers {@link #CHAIN_FULL} and
     * hashes nothing. Allocates (a chain record) before it changes anything. {@code keyed} is the
     * key's {@link CompactTable#keyedHash}.
     */
    private long hash(int bucket, long keyed, int key, long value, boolean reusable, int poolSlot, long seen,
                      boolean restore, boolean reclaimInLine) {
        long lockedAt = table.lock(bucket);
        try {
            if (lockedAt != seen && CompactWalk.positionOfPair(table, bucket, key, value) >= 0) {
                return ALREADY_CACHED;
            }
            if (lifecycle.isClosed()) {
                throw Lifecycle.closedWhileCreating();
            }
            int length = table.length(bucket);
            if (restore && length >= chainCap) {
                return CHAIN_FULL;
            }
            int slot = table.freeHomeSlot(bucket);
            int lineReclaimed = 0;
            if (slot == 0 && reclaimInLine && poolSlot == 0 && (slot = CompactWalk.reclaimInLine(table, bucket)) != 0) {
                lineReclaimed = 1;
                length--;
            }
            if (slot == 0 && (slot = poolSlot) == 0) {
                return NEEDS_POOL_SLOT;
            }
            table.ensureRoom(bucket, slot); // after a line reclaim, a home slot the chain had: allocates nothing
            long outcome = lineReclaimed == 0 ? 0 : LINE_RECLAIMED;
            int reclaimed = 0;
            if (length >= chainCap) {
                reclaimed = CompactWalk.reclaimForRoom(table, bucket, chainCap, !CompactLine.isHomeOf(bucket, slot));
                outcome |= ((long) length << 32) | reclaimed;
            }
            int mix = table.filterMixOfHash(keyed);
            CompactSlots.makeLive(table, slot, key, value, reusable,
                    CompactPoolTwins.twinOfNewEntry(table, bucket, slot, key, mix));
            table.addNewest(bucket, slot, mix);
            entryCount.add(1L - reclaimed - lineReclaimed); // counted before the unlock: nobody can free it uncounted
            return slot == poolSlot ? outcome | POOL_SLOT_USED : outcome;
        } finally {
            table.unlock(bucket);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Lookups
    // ---------------------------------------------------------------------------------------------

    /**
     * The primitive {@link #findFirst}: a handle to the newest reusable entry with {@code key},
     * referenced for the caller, or {@link #NO_ENTRY}. Allocates nothing.
     *
     * @param key the content hash
     * @return the handle, or {@code NO_ENTRY}
     * @throws IllegalStateException if the cache is closed
     */
    public long findFirstHandle(int key) {
        ensureOpen();
        return countLookup(CompactWalk.find(table, key, 0, false, 0, false));
    }

    /**
     * {@link #findFirstHandle} of many keys, their cache misses overlapped (a group's buckets are loaded
     * before any is walked): each key one lookup, counted as one; allocates nothing. If a lookup throws
     * (a racing {@code close()}), the references taken go back and {@code handles} is {@link #NO_ENTRY}.
     *
     * @param keys the content hashes
     * @param handles gets, at {@code i}, the handle {@code findFirstHandle(keys[i])} returns
     * @return how many were found
     * @throws NullPointerException if an array is null
     * @throws IllegalArgumentException if {@code handles} is shorter than {@code keys}
     * @throws IllegalStateException if the cache is closed
     */
    public int findFirstHandles(int[] keys, long[] handles) {
        return CompactBatchLookup.findFirstHandles(this, table, lifecycle, keys, handles);
    }

    /**
     * The primitive {@link #get}: a handle to the entry with exactly this pair, reusable or not,
     * referenced for the caller, or {@link #NO_ENTRY}. Allocates nothing.
     *
     * @param key the content hash
     * @param value the id of the thing holding the content
     * @return the handle, or {@code NO_ENTRY}
     * @throws IllegalStateException if the cache is closed
     */
    public long getHandle(int key, long value) {
        ensureOpen();
        return countLookup(CompactWalk.find(table, key, value, true, 0, true));
    }

    /**
     * {@link #getHandle} of many pairs, their cache misses overlapped as {@link #findFirstHandles}'
     * are: {@code handles[i]} is what {@code getHandle(keys[i], values[i])} returns, each pair one
     * lookup, counted as one; allocates nothing. If a lookup throws (a racing {@code close()}), the
     * references taken go back and {@code handles} is {@link #NO_ENTRY}.
     *
     * @param keys the content hashes
     * @param values the ids paired with them, {@code values[i]} with {@code keys[i]}
     * @param handles gets, at {@code i}, the handle {@code getHandle(keys[i], values[i])} returns
     * @return how many were found
     * @throws NullPointerException if an array is null
     * @throws IllegalArgumentException if {@code values} or {@code handles} is shorter than {@code keys}
     * @throws IllegalStateException if the cache is closed
     */
    public int getHandles(int[] keys, long[] values, long[] handles) {
        return CompactBatchLookup.getHandles(this, table, lifecycle, keys, values, handles);
    }

    /**
     * The primitive {@link #findNext}: the next reusable entry of the key older than {@code handle}'s
     * (from the chain head if it left the chain); releases {@code handle} in all cases.
     *
     * @param handle a handle the caller holds
     * @return the next handle, referenced for the caller, or {@link #NO_ENTRY}
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache
     * @throws IllegalStateException if the caller holds no reference to it, or the cache is closed
     */
    public long findNextHandle(long handle) {
        ensureOpen();
        long[] page = pageOf(handle);
        int at = table.metaIndex(CompactSlots.slotOf(handle));
        long meta = CompactSlots.lvMeta(page, at);
        if (CompactSlots.generation(meta) != CompactSlots.generationOf(handle)
                || !CompactSlots.heldByAnyCaller(table, CompactSlots.slotOf(handle), meta)) {
            throw referenceNotHeld("findNext of an entry the caller does not hold: " + describe(handle));
        }
        long next;
        try {
            next = CompactWalk.find(table, CompactSlots.keyOf(meta), 0, false, CompactSlots.slotOf(handle), false);
        } catch (Throwable lookupFailure) {
            try {
                releaseHandle(handle);
            } catch (Throwable releaseFailure) {
                lookupFailure.addSuppressed(releaseFailure);
            }
            throw lookupFailure;
        }
        try {
            releaseHandle(handle);
        } catch (Throwable releaseFailure) {
            if (next != NO_ENTRY) {
                releaseHandle(next);
            }
            throw releaseFailure;
        }
        return countLookup(next);
    }

    /**
     * One lookup of a batch ({@link CompactBatchLookup}): the handle {@link #findFirstHandle} (by key)
     * or {@link #getHandle} (by pair) finds, tagged, or {@link #NO_ENTRY}; neither counted nor checked
     * against a racing close, which the batch does once for all its keys ({@link #countBatch},
     * {@link Lifecycle#missUnlessClosed}). With {@code lineLoaded} (the batch loaded the key's
     * bucket's line just before) the walk skips the key filter ({@link CompactWalk#findInLoadedLine}).
     */
    long lookUpForBatch(int key, long value, boolean byPair, boolean lineLoaded) {
        long found;
        if (lineLoaded) {
            found = CompactWalk.findInLoadedLine(table, key, value, byPair);
        } else {
            found = byPair ? CompactWalk.find(table, key, value, true, 0, true)
                    : CompactWalk.find(table, key, 0, false, 0, false);
        }
        return found != NO_ENTRY ? found | table.handleTag : NO_ENTRY;
    }

    /** Counts a batch's lookups: {@code hits} hits and {@code misses} misses. Never throws. */
    void countBatch(int hits, int misses) {
        statistics.add(ReclaimBooks.LOOKUP_HITS, hits);
        statistics.add(ReclaimBooks.LOOKUP_MISSES, misses);
    }

    /**
     * Counts a lookup as a hit or a miss; returns it. A miss is first checked against a racing
     * close ({@link #missUnlessClosed}), and then the only way this throws.
     */
    private long countLookup(long found) {
        long answer = found != NO_ENTRY ? found | table.handleTag : missUnlessClosed();
        statistics.add(answer != NO_ENTRY ? ReclaimBooks.LOOKUP_HITS : ReclaimBooks.LOOKUP_MISSES, 1);
        return answer;
    }

    /** A lookup's miss: {@link #NO_ENTRY}, or the closed cache's exception if {@code close()} ran meanwhile ({@link Lifecycle}). */
    private long missUnlessClosed() {
        lifecycle.missUnlessClosed();
        return NO_ENTRY;
    }

    /** The exception for a handle the caller does not hold, or "cache is closed" ({@link Lifecycle#referenceNotHeld}). */
    private IllegalStateException referenceNotHeld(String misuse) {
        return lifecycle.referenceNotHeld(misuse);
    }

    /**
     * The primitive {@link #deleteOrGet}: removes the pair if nobody but the cache holds it
     * ({@link #NO_ENTRY}), else returns a handle to it, referenced for the caller.
     *
     * @param key the content hash
     * @param value the id of the thing holding the content
     * @return {@code NO_ENTRY} if removed or not cached; otherwise the handle
     * @throws IllegalStateException if the cache is closed
     */
    public long deleteOrGetHandle(int key, long value) {
        ensureOpen();
        long handle = CompactWalk.deleteOrAcquire(table, key, value);
        if (handle == CompactWalk.DELETED) {
            entryCount.add(-1);
            statistics.add(ReclaimBooks.DELETES, 1);
            return NO_ENTRY;
        }
        return handle != NO_ENTRY ? handle | table.handleTag : missUnlessClosed();
    }

    // ---------------------------------------------------------------------------------------------
    // Handles: release, flags, waiting
    // ---------------------------------------------------------------------------------------------

    /**
     * Gives back the caller's reference (kernel {@code mb_cache_entry_put}).
     *
     * @param handle a handle the caller holds
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache
     * @throws IllegalStateException if the handle was released more often than it was handed out
     *     (the slot's generation moved on, or only the cache's reference is left), or it is closed
     */
    public void release(long handle) {
        ensureOpen();
        pageOf(handle);
        releaseHandle(handle);
    }

    /** {@link CompactSlots#release}, or the exception for a handle the caller does not hold. */
    private void releaseHandle(long handle) {
        int slot = CompactSlots.slotOf(handle);
        long[] page = table.metaPage(slot);
        if (!CompactSlots.release(table, slot, page, table.metaIndex(slot), CompactSlots.generationOf(handle))) {
            throw referenceNotHeld("entry released more often than it was handed out: " + describe(handle));
        }
    }

    /**
     * Marks the entry recently used (kernel {@code mb_cache_entry_touch}); never loses a concurrent
     * change of its reusable flag. Does nothing if the handle's pair is gone (its slot free or given
     * to another pair).
     *
     * @param handle a handle the caller holds
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache
     * @throws IllegalStateException if the cache is closed
     */
    public void touch(long handle) {
        ensureOpen();
        CompactSlots.setFlag(pageOf(handle), table.metaIndex(CompactSlots.slotOf(handle)), CompactSlots.generationOf(handle),
                CompactSlots.REFERENCED, true);
    }

    /**
     * Sets or clears the entry's reusable flag; does nothing if the handle's entry is gone.
     *
     * @param handle a handle the caller holds
     * @param reusable the new value of the flag
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache
     * @throws IllegalStateException if the cache is closed
     */
    public void setReusable(long handle, boolean reusable) {
        ensureOpen();
        CompactSlots.setFlag(pageOf(handle), table.metaIndex(CompactSlots.slotOf(handle)), CompactSlots.generationOf(handle),
                CompactSlots.REUSABLE, reusable);
    }

    /**
     * Whether the handle's entry is reusable now; {@code false} once its pair is gone (its slot free
     * or given to another pair).
     *
     * @param handle a handle of this cache
     * @return the reusable flag
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache
     */
    public boolean reusable(long handle) {
        long meta = CompactSlots.lvMeta(pageOf(handle), table.metaIndex(CompactSlots.slotOf(handle)));
        return !CompactSlots.isStale(meta, handle, lifecycle) && (meta & CompactSlots.REUSABLE) != 0;
    }

    /**
     * The key of a held handle's entry.
     *
     * @param handle a handle the caller holds
     * @return the key
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache
     * @throws IllegalStateException if the handle was released and its pair is gone (its slot is
     *     free or went to another pair)
     */
    public int key(long handle) {
        long meta = CompactSlots.lvMeta(pageOf(handle), table.metaIndex(CompactSlots.slotOf(handle)));
        if (CompactSlots.isStale(meta, handle, lifecycle)) {
            throw new IllegalStateException("stale handle: " + Long.toHexString(handle));
        }
        return CompactSlots.keyOf(meta);
    }

    /**
     * The value of a held handle's entry. Valid only while the caller holds the handle (a released
     * one's slot may hold another pair by now).
     *
     * @param handle a handle the caller holds
     * @return the value
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache
     * @throws IllegalStateException if the handle was released and its pair is gone (its slot is
     *     free or went to another pair)
     */
    public long value(long handle) {
        long[] page = pageOf(handle);
        int slot = CompactSlots.slotOf(handle);
        int at = table.metaIndex(slot);
        long value = table.lpValue(slot);
        VarHandle.acquireFence(); // the value's load before the meta word's
        if (CompactSlots.isStale(CompactSlots.lvMeta(page, at), handle, lifecycle)) {
            throw new IllegalStateException("stale handle: " + Long.toHexString(handle));
        }
        return value;
    }

    /**
     * Blocks until only the cache and the caller hold the handle's entry (kernel
     * {@code mb_cache_entry_wait_unused}); interruption as {@link #waitUnused(CacheEntry)}. Returns at
     * once if the handle's pair is gone (its slot free or given to another pair): nobody holds it.
     *
     * @param handle a handle the caller holds
     * @throws InterruptedException if interrupted on entry or while waiting
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache
     * @throws IllegalStateException if the cache is closed (also during the wait)
     */
    public void waitUnused(long handle) throws InterruptedException {
        ensureOpen();
        awaitUnused(handle, Long.MAX_VALUE);
    }

    /**
     * Like {@link #waitUnused(long)}, giving up after {@code timeout}.
     *
     * @param handle a handle the caller holds
     * @param timeout the longest time to wait; zero or less does not wait
     * @param unit the unit of {@code timeout}
     * @return {@code true} if only the cache and the caller hold the entry, or its pair is gone;
     *     {@code false} on time-out
     * @throws InterruptedException if interrupted on entry or while waiting
     * @throws NullPointerException if {@code unit} is null
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache
     * @throws IllegalStateException if the cache is closed (also during the wait)
     */
    public boolean waitUnused(long handle, long timeout, TimeUnit unit) throws InterruptedException {
        ensureOpen();
        return awaitUnused(handle, timeoutNanos(timeout, unit));
    }

    private boolean awaitUnused(long handle, long nanos) throws InterruptedException {
        long[] page = pageOf(handle);
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        boolean unused = CompactSlots.awaitUnused(table, lifecycle, page, handle, nanos);
        ensureOpen();
        return unused;
    }

    /** Switches a held handle's slot to hot mode, as contended hits do (tests); whether it is hot now. */
    boolean switchToHot(long handle) {
        pageOf(handle);
        return CompactSlots.switchToHot(table, handle);
    }

    /** Whether a handle's slot is in hot mode with the handle's generation. */
    boolean isHot(long handle) {
        return CompactSlots.isHot(CompactSlots.lvMeta(pageOf(handle), table.metaIndex(CompactSlots.slotOf(handle))), handle);
    }

    /** Slots with cells now: hot ones (at most {@value HotReferences#MAX_HOT_ENTRIES}). */
    int hotSlots() {
        return table.hot.hotSlots();
    }

    /** The slot page of a handle with this cache's tag and a slot handed out, or {@link IllegalArgumentException}. */
    private long[] pageOf(long handle) {
        int slot = CompactSlots.slotOf(handle);
        if ((handle & CompactHandles.TAG_MASK) != table.handleTag || slot <= 0 || slot >= table.end()
                || !CompactLine.isSlot(slot)) {
            throw CompactHandles.notOurs(handle);
        }
        return table.metaPage(slot);
    }

    private String describe(long handle) {
        int slot = CompactSlots.slotOf(handle);
        long meta = CompactSlots.lvMeta(table.metaPage(slot), table.metaIndex(slot));
        return "CompactMbCache.Entry[slot=" + slot + ", generation=" + CompactSlots.generationOf(handle)
                + ", slot generation=" + CompactSlots.generation(meta) + ", key=" + CompactSlots.keyOf(meta)
                + ", refcount=" + CompactSlots.references(table, slot, meta) + "]";
    }

    // ---------------------------------------------------------------------------------------------
    // The DedupCache methods: entry views
    // ---------------------------------------------------------------------------------------------

    /**
     * A new view of a held handle of a pair of {@code key} (the key the lookup matched), or
     * {@code null} for {@link #NO_ENTRY}: its value read from the slot, which the caller's reference
     * keeps (a slot's value changes only when the slot is reused, after its last reference). The
     * slot's meta word, which the lookup's CAS has just written, is not read again.
     */
    private CacheEntry entryFor(long handle, int key) {
        return handle == NO_ENTRY ? null
                : entryFor(handle, key, table.lpValue(CompactSlots.slotOf(handle)));
    }

    /**
     * A new view of a held handle of the pair ({@code key}, {@code value}), or {@code null} for
     * {@link #NO_ENTRY}; if making it throws, the caller's reference is given back first.
     */
    private CacheEntry entryFor(long handle, int key, long value) {
        if (handle == NO_ENTRY) {
            return null;
        }
        try {
            return new CompactEntry(this, handle, key, value);
        } catch (Throwable failure) {
            releaseHandle(handle);
            throw failure;
        }
    }

    private long ownHandle(CacheEntry entry) {
        return CompactEntry.handleIn(this, entry);
    }

    /** {@inheritDoc} */
    @Override
    public CacheEntry findFirst(int key) {
        ensureOpen();
        return entryFor(countLookup(CompactWalk.find(table, key, 0, false, 0, true)), key);
    }

    /** {@inheritDoc} */
    @Override
    public CacheEntry findNext(CacheEntry entry) {
        ensureOpen();
        long handle = ownHandle(entry);
        return entryFor(findNextHandle(handle), entry.key());
    }

    /** {@inheritDoc} */
    @Override
    public CacheEntry get(int key, long value) {
        ensureOpen();
        return entryFor(countLookup(CompactWalk.find(table, key, value, true, 0, true)), key, value);
    }

    /** {@inheritDoc} */
    @Override
    public CacheEntry deleteOrGet(int key, long value) {
        return entryFor(deleteOrGetHandle(key, value), key, value);
    }

    /** {@inheritDoc} */
    @Override
    public void waitUnused(CacheEntry entry) throws InterruptedException {
        ensureOpen();
        waitUnused(ownHandle(entry));
    }

    /** {@inheritDoc} */
    @Override
    public boolean waitUnused(CacheEntry entry, long timeout, TimeUnit unit) throws InterruptedException {
        ensureOpen();
        return waitUnused(ownHandle(entry), timeout, unit);
    }

    /** {@inheritDoc} */
    @Override
    public void touch(CacheEntry entry) {
        ensureOpen();
        touch(ownHandle(entry));
    }

    /** {@inheritDoc} */
    @Override
    public void release(CacheEntry entry) {
        ensureOpen();
        release(ownHandle(entry));
    }

    // ---------------------------------------------------------------------------------------------
    // Counting and reclaim
    // ---------------------------------------------------------------------------------------------

    /**
     * Every slot's count goes to zero (its flags stay, so a handle's {@code reusable()} stays
     * readable) and every chain is emptied; the pages are kept until the cache is collected. Reclaim
     * lock held.
     */
    @Override
    void killAllEntries() {
        for (int bucket = 0; bucket < table.bucketCount(); bucket++) {
            table.lock(bucket);
            try {
                for (int pos = table.length(bucket) - 1; pos >= 0; pos--) {
                    CompactSlots.kill(table, table.refAt(bucket, pos));
                }
                table.clear(bucket);
            } finally {
                table.unlock(bucket);
            }
        }
    }

    @Override
    void wakeAllWaiters() {
        table.unusedWaiters.wakeAll();
    }

    // ---------------------------------------------------------------------------------------------
    // Snapshots
    // ---------------------------------------------------------------------------------------------

    /**
     * {@inheritDoc}
     *
     * <p>The order is the clock's, the one reclaim passes sweep: from the hand to the end of the
     * table, then from the first slot up to the hand, so the slot the hand looks at next comes first
     * (oldest first in this backend's reclaim order; see "Reclaim order" in the class comment), but
     * for a key with more than one value: those are written together and in their order (oldest
     * first), where the walk meets the first of them. A slot's place is not its pair's age (a
     * chain's newest values sit in pool slots once its line is full, and a home slot freed and taken
     * again holds a newer value than the slots after it), and a restore creates pairs in the order
     * it reads them: written where the walk meets them, a key's values would come back in another
     * order, {@code findFirst} answering an older one first. So a restore gives every key's values
     * back in their order. Each pair goes where a create puts it, so the restored cache's order is
     * its own table's: the snapshot's only where every pair lands in the slot it came from, as where
     * each chain fits its line in creation order in a cache of the same seed and bucket count.
     *
     * <p>The walk takes the reclaim lock once, to read the hands and the table's end (so it waits for
     * at most one pass in progress), and reads a key's values in its chain, where it meets the key's
     * pair in the pool or its line says it may have more than one, optimistically as a lookup does
     * (under the bucket's bit, as a create holds it, where a writer is in the bucket); it takes no
     * reference. Those reads make the walk several times the work of a walk of the slots alone at
     * the sized load (6 entries a bucket), where about one pair in seven needs one. A pair's flags are written with it (reusable; referenced as record flag 2, not
     * restored). A pair does not move while it is cached (a pass gives a second chance by clearing
     * a flag, in place), so every pair cached for the whole call is written exactly once; slots
     * added at the end of the table during the walk hold pairs created during the call and are not
     * looked at. The walk keeps no state in the cache, so snapshots of one cache may run at the same
     * time and none waits for another (the {@link java.io.InterruptedIOException} of
     * {@link DedupCache#writeSnapshot} never arises here); one started from the stream of another is
     * an ordinary second walk. A close during the walk is an {@link IllegalStateException}:
     * {@code close()} zeroes the counts, which would otherwise end the snapshot short as if it were
     * complete.
     */
    @Override
    public long writeSnapshot(OutputStream out) throws IOException {
        Objects.requireNonNull(out, "out");
        ensureOpen();
        int end;
        CompactSweepOrder order;
        reclaimLock.lock();
        try {
            order = clock.orderFromHands();
            end = table.end(); // at least the end of the last pass, which moved the hands
        } finally {
            reclaimLock.unlock();
        }
        return Snapshots.write(out, new CompactSnapshotWalk(table, lifecycle, order, end));
    }

    /**
     * The bytes this cache's arrays take (bucket lines, values, pool pages, chain records, the delay ring),
     * a lower bound of what it retains. For benchmarks and sizing.
     *
     * @return the footprint in bytes
     */
    public long footprintBytes() {
        return table.footprintBytes();
    }

    /** The length of {@code key}'s bucket chain. Package-private, for tests. */
    int chainLength(int key) {
        return CompactWalk.chainLength(table, key);
    }

    /**
     * Checks that every live slot is in its key's chain and every chain reference is a live slot of
     * the chain's bucket; the first breach as an {@link AssertionError}. Quiet caches only; for tests.
     */
    void checkChains() {
        CompactWalk.checkChains(table);
    }

    /** The bucket of {@code key}. Package-private, for tests. */
    int bucketOf(int key) {
        return table.bucketOf(key);
    }
}
