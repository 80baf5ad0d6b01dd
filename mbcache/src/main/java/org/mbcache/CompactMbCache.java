package org.mbcache;

import static org.mbcache.CompactTable.COUNT_MASK;
import static org.mbcache.CompactTable.GENERATION_MASK;
import static org.mbcache.CompactTable.GENERATION_SHIFT;
import static org.mbcache.CompactTable.HOT;
import static org.mbcache.CompactTable.HOT_REFERENCES;
import static org.mbcache.CompactTable.REFERENCED;
import static org.mbcache.CompactTable.REUSABLE;
import static org.mbcache.CompactTable.WAITERS;
import static org.mbcache.CompactTable.count;
import static org.mbcache.CompactTable.generation;
import static org.mbcache.CompactTable.keyOf;
import static org.mbcache.CompactTable.lvMeta;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.mbcache.internal.HashedWaitQueues;
import org.mbcache.internal.Lifecycle;
import org.mbcache.internal.Snapshots;
import org.mbcache.internal.StripedStatistics;

/**
 * The kernel port in a compact layout: the same design as {@link MbCache} (keyed buckets, a seqlock
 * per bucket, reference counts, second-chance reclaim, a chain cap), with no object per entry.
 *
 * <p><b>Which backend.</b> {@link MbCache} keeps one 40-byte object per entry, linked on an LRU
 * list: exact creation-order reclaim, misses answered from key filters small enough to stay in the
 * processor caches (it misses faster than this class), request-list and allocate-first creates,
 * and young collections that stay short up to a few hundred thousand entries. This
 * class keeps every entry in primitive arrays allocated in pages: a slot of 16 bytes (value, key,
 * count, flags and a generation) and a 4-byte reference in a 64-byte bucket record, beside a
 * 16-byte bucket head (lock, version and two key filters, as MbCache's: bits of the keyed hash,
 * rebuilt from the keys left every few removals), with no object per entry
 * and a number of objects that grows only by one page per 2^14 slots. What an entry costs is 16
 * bytes plus the head's and record's 80 bytes and a 4-byte overflow reference over the entries a
 * bucket holds, plus the overflow arrays of chains longer than 15: about 23 bytes at 14 entries a
 * bucket, 26 at 8. The bucket count need not be a power of two (a key's bucket is its keyed hash
 * scaled to the count), so a cache sized from its bound keeps about 14 a bucket at every size.
 * Pick it from a few million entries up, or wherever the collector's work matters: there is nothing
 * per entry for it to copy or trace, and a hit reads the bucket head, the record and the slot
 * (the first two side by side, not one after the other; the record holds a chain's newest 15, and
 * only a hit on an older entry reads the overflow array too), where MbCache follows about seven
 * references.
 * What a hit cannot shed in either layout is its locked instructions (the reference count's
 * acquire and release, and the hit counter): each waits for the loads before it, so hits do not
 * overlap their cache misses as a plain map's lookups do, and once the table is out of the
 * processor caches a hit costs its two misses' full latency (MbCache's notes measure that floor).
 * Reclaim is a CLOCK hand over the slot pages, not a
 * list, so its order is the order of the slots (see "Reclaim order" below), not exact creation
 * order.
 *
 * <p><b>Two APIs.</b> The {@link DedupCache} methods hand out {@link CacheEntry} objects: one per
 * live entry, made the first time the entry is handed out (40 bytes, plus a 4-byte table slot per
 * slot of its page, once) and the same object for every later lookup of it, as the contract's
 * identity tests ask. The primitive API ({@link #findFirstHandle}, {@link #getHandle},
 * {@link #deleteOrGetHandle}, {@link #findNextHandle}, {@link #release(long)} and the rest) hands
 * out {@code long} handles instead and allocates nothing: lookups, refused duplicates and new
 * creates are 0 bytes an operation. A handle is the slot index in the low 32 bits and the slot's
 * generation (12 bits) above; {@link #NO_ENTRY} means none. A handle used after it was released
 * and its pair left the cache (its slot free, or given to a new pair) never reaches the slot's new
 * occupant, unless the slot has been given to new pairs a multiple of 4,096 times since:
 * {@link #release(long)}, {@link #findNextHandle}, {@link #key} and {@link #value} throw
 * {@link IllegalStateException}; {@link #touch(long)} and {@link #setReusable(long, boolean)} do
 * nothing, {@link #reusable(long)} answers {@code false}, and {@link #waitUnused(long)} returns at
 * once (nobody holds a pair that is gone), as the same calls do on an entry object whose pair left.
 * One used after its release while its pair is still cached reads that pair (and a
 * second release spends another holder's reference, as with entry objects); a handle of another
 * cache is not detected. At most 32,766
 * references to one pair may be held at once while it is cold (a lookup or create beyond that
 * throws {@link IllegalStateException}); a hot pair's are not bounded.
 *
 * <p><b>Options.</b> {@link #builder()} has {@link MbCache.Builder}'s options, with two
 * differences: the default {@code maxEntries} is 8 per bucket (a record keeps 15 references inline,
 * and the chains at twice the bound should mostly fit), and the only create strategy is
 * {@link CreateStrategy#REQUEST_LIST}'s behaviour: a create claims a free slot before it takes the
 * bucket's bit, and gives it back if the pair turned out to be cached, so a refused duplicate
 * allocates nothing and a pair found cached by the optimistic read takes no lock. The table holds at
 * most {@code 2^slotBits} slots, {@code slotBits} the bits of {@code 4 * maxEntries} (at least 12,
 * at most 30): a create that finds every slot in use (entries held by callers beyond about twice
 * the bound) runs a synchronous reclaim pass, and throws {@link IllegalStateException} if that frees
 * none.
 *
 * <p><b>Reclaim order.</b> The hand sweeps the slots in index order and wraps. Slots are handed out
 * from the end of the table while it grows, and from a free list (last freed, first reused) once
 * entries are removed. Most removals are the hand's own, just behind it, so a slot it freed gets
 * its new pair a whole turn before the hand comes back: in steady churn the hand frees in creation
 * order. A slot freed elsewhere ({@code deleteOrGet}, the chain cap) may sit just ahead of the hand,
 * and its new pair is then looked at early. Referenced entries get their second chance, and held
 * ones are never freed, as in MbCache. A snapshot ({@link #writeSnapshot}) lists the pairs in this
 * order, from the hand.
 *
 * <p><b>Hot entries.</b> As in MbCache, a slot whose meta word's CAS keeps failing (many threads
 * hitting one pair) switches to hot mode: callers' references then go to per-stripe cells of its
 * own, so hits of one pair on different threads write different cache lines. At most 16 slots of a
 * cache are hot at once; their cells ({@code (stripes + 1) * 128} bytes each) are allocated at the
 * switch and dropped when the pair leaves the cache. Cold slots keep their 16 bytes.
 */
public final class CompactMbCache implements DedupCache {

    /*
     * Implementation notes.
     *
     * Storage is CompactTable (slots, bucket records, the free list, handle objects). Everything
     * here follows MbCache's protocol with a slot's meta word where MbCache has an Entry's state
     * word: count and flags in one word, changed by CAS (a contended slot switches to hot mode, the
     * protocol of HotReferences, whose argument covers slot reuse too: a claim retires a hot slot's
     * cells before the slot can be freed, and cells are found by slot, key and generation); a count
     * above zero means "in its chain";
     * only a claim (count 1 to 0, under the bucket's bit, which then unhashes the slot) or close()
     * takes the cache's own reference.
     *
     * Slot reuse is the hazard MbCache does not have: its dead entries stay dead, a slot here is
     * freed and given to a new pair. The argument that a lookup never hands out the wrong pair, and
     * never leaks or steals a reference, has four steps.
     *
     * 1. A slot leaves its chain and becomes free only in a critical section of its bucket (the
     *    claim, count 1 to 0, and the unhashing in one critical section), and is pushed onto the free
     *    list only after that, its generation advanced as it is pushed (CompactTable.free; a slot a
     *    create took and puts back unused, CompactTable.freeUnused, keeps its generation, so the
     *    generation counts the pairs a slot held). deleteOrGet frees inside its critical section:
     *    close() takes every bucket's bit, so once it has returned, a handle of a pair deleted
     *    before it reads stale (DeleteVsClose). A slot
     *    becomes live (count from 0 to 1, with that generation) only in a critical section of the
     *    bucket it is hashed into, in the same section. So a slot
     *    in a chain at version v (even) held the same pair for as long as the version stayed v.
     * 2. An optimistic lookup reads the version (acquire; odd: retry locked), then a reference, then
     *    the slot's meta word (volatile), checks key, count above zero and the flag or value it looks
     *    for, and CASes the meta word to count + 1. The CAS compares the whole word, key and
     *    generation included: it increments exactly the occupant the lookup checked, or fails (and
     *    the lookup re-reads). A free slot has count zero, and every CAS loop but the claim refuses
     *    count zero, so a lookup never resurrects a free slot, whatever stale index it holds.
     * 3. Then it validates the version (acquire fence, load again). Unchanged: no critical section
     *    ran, so by step 1 the slot held the pair it checked, in the chain, from the first load to
     *    the CAS; the lookup linearizes at the CAS, exactly as MbCache's. Changed: it gives the
     *    reference back with an ordinary release and retries under the bit. The reference it gives
     *    back is on the occupant it incremented (step 2), which cannot have been freed meanwhile
     *    (the lookup's own reference keeps the count above one, so no claim succeeds): no count is
     *    taken from anyone else. For the moment between the CAS and the release, the occupant (a
     *    new pair, if the slot was reused) shows one holder more: a deleteOrGet or reclaim pass in
     *    that moment treats it as held, exactly as MbCache's entries are treated when a lookup's
     *    validation fails. That is the one visible effect of a stale index.
     * 4. A handle carries the generation. Every operation on a handle (release, touch, setReusable,
     *    findNext, waitUnused) checks it in the same CAS loop that changes the word, so a handle kept
     *    after its release cannot change the slot's next occupant: it gets an
     *    IllegalStateException (release, findNext) or is ignored (touch, setReusable), unless the
     *    slot was reused a multiple of 2^12 times in between (the generation wraps; then it acts on
     *    the new occupant as a double release does in MbCache).
     *
     * The JCStress races in the stress module (SlotReuseVsLookup, ReleaseVsSlotReuse,
     * StaleHandleVsSlotReuse, DeleteVsClose) exercise steps 2-4 with two actors and an arbiter; the soak and
     * CompactMbCacheTest's random-operation tests reuse slots past the generation's 12 bits.
     *
     * Memory ordering. A new pair's value is a plain store and its meta word a release store
     * (CompactTable.soMeta), both inside the bucket's critical section, before the reference is
     * added; the unlock's release store publishes the reference. A locked reader sees all of it
     * through the lock's acquire CAS; an optimistic reader through the version's acquire load (for a
     * pair published before that version) or, for one it met racing, through its volatile load of
     * the meta word, which reads the release store or a later CAS (the value written before the
     * release store is then visible). The value of a slot is read only after its meta word shows it
     * live; a value read from a slot freed meanwhile (its value word holds the free list's link) is
     * discarded by the CAS, which then fails, or by the validation.
     *
     * Key filters. A lookup asks the bucket's two filters first (CompactTable.turnsAway, with the
     * key's filterMix: bits of the whole keyed hash, not the reference's fingerprint, which has only
     * 32 - slotBits bits). Every path that takes a slot out of a chain goes through
     * CompactTable.removeAt (deleteOrGet, the chain cap, the clock's claim) or clear (close), inside
     * the bucket's critical section; removeAt leaves the removed key's bits (a superset) except on
     * every eighth removal from the chain (CompactTable.rebuildEvery), which rebuilds the filters
     * from the keys of the slots left. By step 1 those slots' keys cannot change while the bit is
     * held, so the rebuild is exact; a lookup racing it is an optimistic reader like any other and
     * is caught by its validation (FilterRebuildVsLookup.Compact in the stress module).
     *
     * Reclaim is a CLOCK: one hand over [1, end) under the reclaim lock, looking at the meta word of
     * each slot. Count zero (free, or claimed elsewhere): skipped, not counted as scanned. Referenced:
     * the flag cleared (a second chance). Count one: claimed under its bucket's bit (the claim
     * re-checks key, generation and count there) and unhashed, then freed. Held: passed over. The
     * pass bounds are MbCache's, with slots for list entries: it stops once a whole turn of slots
     * freed nothing and cleared no flag, and looks at no more than two turns; a synchronous pass goes
     * on past its 64 until it frees one, while it makes progress. The reclaim lock is taken before
     * any bucket bit and never while one is held (a create that finds no free slot reclaims before
     * it locks its bucket), so the two cannot deadlock. Each time the hand enters 16 slots it has
     * not looked at, it first loads the bucket lines of the claimable ones among them
     * (CompactTable.touchBucketsOfClaimable): loads only, racy and plain, whose values decide
     * nothing; the claims then find those lines in the cache instead of waiting for each miss behind
     * the lock bit's CAS.
     *
     * Failure atomicity. Allocation happens in three places: a slot page (CompactTable.allocate,
     * before the slot is handed out), a bucket's overflow array (ensureRoom, first in the critical
     * section), and the handle objects of the DedupCache methods (after the reference was taken:
     * the reference is given back if that throws). The free list, the counts and the statistics
     * never allocate, so nothing can fail between a change and its bookkeeping.
     */

    /** What the primitive lookups return when there is no entry. */
    public static final long NO_ENTRY = -1L;

    private static final long RETRY = -2L;
    private static final long CONTAINED = -3L;
    private static final long ALREADY_CACHED = -1L;
    /** What {@link #hash} answers a restore's create whose chain is at the cap: nothing created. */
    private static final long CHAIN_FULL = -4L;
    /**
     * Slots a reclaim pass looks ahead of its hand: it loads the bucket lines of the claimable ones
     * among the next 16 together ({@link CompactTable#touchBucketsOfClaimable}), so that their cache
     * misses overlap instead of coming one claim at a time. 16 slots: up to 48 loads in flight,
     * about what a core tracks at once.
     */
    private static final int RECLAIM_LOOKAHEAD = 16;
    private static final int DEFAULT_ENTRIES_PER_BUCKET = 8;
    /**
     * Entries a bucket at the bound of a cache sized from {@code maxEntries}: the record's 64 bytes,
     * the head's 16 and the overflow reference's 4 over 14 entries are 6 bytes an entry, and about
     * one chain in three overflows the record's 15 inline references (an overflow array of 32
     * bytes holding the chain's oldest, which a lookup reads only once it walked past the newest
     * 15). Measured arrays: 23.1 bytes an entry at 10^6, 22.9 at 10^7.
     */
    static final int SIZED_ENTRIES_PER_BUCKET = 14;

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
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final CompactTable table;
    private final int bucketBits;
    private final long maxEntries;
    private final int chainCap;
    private final EntryCount entryCount;
    /** Open or closed, and the answers to calls that race {@code close()}. */
    private final Lifecycle lifecycle = new Lifecycle();
    /** The reclaim lock, the pass loop, the counters of {@link #stats()}. */
    private final ReclaimBooks books;
    /** The counters of events outside any lock (the books'). */
    private final StripedStatistics statistics;
    /** One queue: waits are rare; every waiter re-checks its own slot after a wake-up. */
    private final HashedWaitQueues unusedWaiters = new HashedWaitQueues(0);
    /** The books' lock. */
    private final ReentrantLock reclaimLock;
    private final MemoryPressureRegistry.Registration pressureRegistration;
    /** The create's reclaim triggers and the background passes they start: {@link BackgroundReclaim}. */
    private final BackgroundReclaim backgroundReclaim;

    /** The clock hand: the next slot a pass looks at. Reclaim lock held. */
    private int hand = 1;
    /**
     * What {@link #consume} compares the sums of loads-only look-aheads with (a create's
     * {@link CompactTable#touchChain}, a reclaim pass's {@link CompactTable#touchBucketsOfClaimable}):
     * a value a sum almost never equals, set once. A plain field that is read, and written only when
     * a sum happens to equal it (about once in 2^64; a racy write then changes nothing that matters),
     * so that the compiler keeps the loads without a store per create that every creating thread
     * would contend on (the blackhole of JMH, in one comparison).
     */
    private long touchSentinel = System.nanoTime() | 1L << 62;

    private CompactMbCache(Builder builder) {
        this(builder, 1L << builder.options.bucketBits());
    }

    /**
     * A cache of {@code buckets} buckets, any count in {@code [1, 2^30]}, with the builder's other
     * options ({@code bucketBits} ignored). {@code build()} gives {@code 2^bucketBits} when
     * {@code bucketBits} was set, and the default sizing ({@link #sizedFromMaxEntries}) otherwise.
     */
    CompactMbCache(Builder builder, long buckets) {
        if (buckets < 1 || buckets > CompactTable.MAX_BUCKETS) {
            throw new IllegalArgumentException("buckets must be in [1, 2^30], was " + buckets);
        }
        // The bucket pages' heads and records: 80 bytes a bucket before any entry.
        KernelPortOptions.requireHeapFor(buckets, 80, "a CompactMbCache");
        KernelPortOptions options = builder.options;
        this.bucketBits = 64 - Long.numberOfLeadingZeros(buckets - 1);
        this.maxEntries = options.maxEntries(DEFAULT_ENTRIES_PER_BUCKET);
        this.chainCap = options.chainCap(maxEntries, buckets);
        long slotsWanted = 4 * Math.min(maxEntries, 1L << 30);
        int slotBits = Math.max(12, Math.min(30, 64 - Long.numberOfLeadingZeros(slotsWanted - 1)));
        int pageBits = Math.max(6, Math.min(14, 64 - Long.numberOfLeadingZeros(Math.max(1, maxEntries - 1)) - 4));
        this.table = new CompactTable((int) buckets, slotBits, Math.min(pageBits, slotBits), KeyedIndex.seed(options.hashSeed()));
        this.entryCount = new EntryCount(maxEntries);
        this.books = new ReclaimBooks(entryCount, lifecycle, this);
        this.statistics = books.statistics;
        this.reclaimLock = books.lock;
        books.sweepWith(new ClockSweep());
        this.backgroundReclaim = new BackgroundReclaim(options.executor(), entryCount, maxEntries, CompactMbCache.class.getName(),
                books, lifecycle::isClosed);
        this.pressureRegistration = options.memoryPressureReclaim() ? MemoryPressureRegistry.INSTANCE.register(books) : null;
    }

    /**
     * The cache {@code builder} describes with its bucket count sized from its {@code maxEntries}
     * ({@link #defaultBuckets}) instead of {@code 2^bucketBits}: what {@code build()} does when
     * {@code bucketBits} was not given.
     *
     * @throws IllegalArgumentException if the builder has no {@code maxEntries}
     */
    static CompactMbCache sizedFromMaxEntries(Builder builder) {
        long maxEntries = builder.options.maxEntries(0);
        if (maxEntries <= 0) {
            throw new IllegalArgumentException("sizing from maxEntries needs maxEntries");
        }
        return new CompactMbCache(builder, defaultBuckets(maxEntries));
    }

    /**
     * The bucket count of a cache sized from its bound: {@value #SIZED_ENTRIES_PER_BUCKET} entries a
     * bucket at the bound, whatever the size (a bucket count need not be a power of two), at least
     * 1 and at most 2^30.
     */
    static long defaultBuckets(long maxEntries) {
        long buckets = maxEntries / SIZED_ENTRIES_PER_BUCKET + (maxEntries % SIZED_ENTRIES_PER_BUCKET == 0 ? 0 : 1);
        return Math.max(1, Math.min(CompactTable.MAX_BUCKETS, buckets));
    }

    /**
     * A new cache of {@code 2^bucketBits} buckets with the defaults: {@code maxEntries} 8 per bucket,
     * background reclaim on the shared daemon thread.
     *
     * @param bucketBits log2 of the number of buckets, in {@code [0, 30]}
     * @return a new, empty cache
     * @throws IllegalArgumentException if {@code bucketBits} is outside {@code [0, 30]}, or its
     *     buckets' arrays alone (80 bytes a bucket) would exceed the JVM's maximum heap
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

        /**
         * log2 of the bucket count, as {@code MbCache.Builder.bucketBits}. Without it, a builder
         * given {@link #maxEntries(long)} sizes the table from that bound instead:
         * 14 entries a bucket at the bound, a bucket count that need
         * not be a power of two (about 23 bytes an entry in all); a builder given neither has 2^10
         * buckets. The table takes 84 bytes a bucket up front (a 16-byte head, a 64-byte record and
         * a 4-byte overflow reference).
         *
         * @param bucketBits in {@code [0, 30]}
         * @return this builder
         * @throws IllegalArgumentException if outside {@code [0, 30]}
         */
        public Builder bucketBits(int bucketBits) {
            options.bucketBits(bucketBits);
            return this;
        }

        /**
         * Accepts {@link CreateStrategy#REQUEST_LIST} only, the one behaviour this backend has.
         *
         * @param createStrategy {@code REQUEST_LIST}
         * @return this builder
         * @throws NullPointerException if {@code createStrategy} is null
         * @throws IllegalArgumentException for any other strategy
         */
        public Builder createStrategy(CreateStrategy createStrategy) {
            if (Objects.requireNonNull(createStrategy, "createStrategy") != CreateStrategy.REQUEST_LIST) {
                throw new IllegalArgumentException("only REQUEST_LIST is supported, was " + createStrategy);
            }
            options.createStrategy(createStrategy); // checked first: a refused strategy changes nothing
            return this;
        }

        /**
         * A new, empty cache, registered for memory-pressure reclaim until it is closed unless
         * {@link #memoryPressureReclaim(boolean)} was set to {@code false}.
         *
         * @return the cache
         * @throws IllegalArgumentException if the buckets' arrays alone (80 bytes a bucket) would
         *     exceed the JVM's maximum heap ({@link Runtime#maxMemory()}); a builder given no
         *     {@code bucketBits} and a {@code maxEntries} of 15 billion or more ({@code Long.MAX_VALUE},
         *     say) sizes the table at 2^30 buckets, 80 GiB
         */
        public CompactMbCache build() {
            return !options.bucketBitsSet() && options.maxEntries(0) > 0 ? sizedFromMaxEntries(this) : new CompactMbCache(this);
        }
    }

    /**
     * {@return log2 of the number of buckets, as built; for a cache whose bucket count was sized from
     * its bound (not a power of two), the log2 rounded up}
     */
    public int bucketBits() {
        return bucketBits;
    }

    /** {@return the size at which creates start reclaiming, as given or defaulted} */
    public long maxEntries() {
        return maxEntries;
    }

    /** {@return the chain cap, as given or defaulted (see {@link MbCache#chainCap()})} */
    public int chainCap() {
        return chainCap;
    }

    /** {@return how duplicates are refused: always {@link CreateStrategy#REQUEST_LIST} (see the class comment)} */
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
        if (!restore) { // a restore's budget keeps it within maxEntries: it must not evict what was cached
            backgroundReclaim.beforeCreate();
        }
        long keyed = table.keyedHash(key);
        int bucket = table.bucketOfHash(keyed);
        long seen = versionWithout(bucket, keyed, key, value);
        if (seen == CONTAINED) {
            statistics.add(ReclaimBooks.DUPLICATES_REFUSED, 1);
            return false;
        }
        // Before the free list's CAS and the bit's: the chain's misses overlap one another, and,
        // issued while the branch above waits for the head's line, that miss too (see touchChain).
        consume(table.touchChain(bucket));
        int slot = restore ? table.allocate() : allocateSlot();
        if (slot == 0) { // a restore reclaims nothing: with every slot in use, the pair is skipped
            return false;
        }
        long outcome;
        try {
            outcome = hash(bucket, keyed, key, value, reusable, slot, seen, restore);
        } catch (Throwable failure) { // the overflow array's allocation, or close(): the slot goes back
            table.freeUnused(slot);
            throw failure;
        }
        if (outcome == ALREADY_CACHED) {
            table.freeUnused(slot);
            statistics.add(ReclaimBooks.DUPLICATES_REFUSED, 1);
            return false;
        }
        if (outcome == CHAIN_FULL) {
            table.freeUnused(slot);
            return false;
        }
        statistics.add(restore ? ReclaimBooks.RESTORES : ReclaimBooks.CREATES, 1);
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
     * neither one cached before it nor one it created. The slot is
     * claimed first, as by every create here, and one critical section checks the chain and the cap
     * and hashes; a skipped pair's slot goes back to the free list.
     */
    private boolean createForRestore(int key, long value, boolean reusable) {
        return createPair(key, value, reusable, true);
    }

    /** Keeps the loads whose sum is {@code touched} (see {@link #touchSentinel}). */
    private void consume(long touched) {
        if (touched == touchSentinel) {
            touchSentinel = touched + 1;
        }
    }

    /** A free slot, reclaiming synchronously first if every slot is in use. */
    private int allocateSlot() {
        int slot = table.allocate();
        if (slot == 0) {
            books.reclaim(BackgroundReclaim.SYNC_SHRINK_BATCH, ReclaimPassEvent.Kind.SYNCHRONOUS);
            slot = table.allocate();
            if (slot == 0) {
                throw new IllegalStateException("every slot of " + this + " is in use: callers hold too many entries");
            }
        }
        return slot;
    }

    /**
     * The optimistic duplicate check: {@link #CONTAINED}, {@link #RETRY}, or the even version under
     * which the chain was read and found without the pair. {@code keyed} is the key's
     * {@link CompactTable#keyedHash}.
     */
    private long versionWithout(int bucket, long keyed, int key, long value) {
        return tryFind(bucket, keyed, key, value, true, 0, false, false);
    }

    /**
     * The create's critical section: {@link #ALREADY_CACHED}, or the chain cap's outcome (0 if the
     * chain was below the cap; else the length found in the upper 32 bits and the entries reclaimed
     * in the lower). A restore's ({@code restore}) reclaims nothing for the cap: at the cap it
     * answers {@link #CHAIN_FULL} and hashes nothing. Allocates (an overflow array) before it changes
     * anything. {@code keyed} is the key's {@link CompactTable#keyedHash}.
     */
    private long hash(int bucket, long keyed, int key, long value, boolean reusable, int slot, long seen, boolean restore) {
        int print = table.fingerprintOfHash(keyed);
        long lockedAt = table.lock(bucket);
        try {
            if (lockedAt != seen && positionOfPair(bucket, key, print, value) >= 0) {
                return ALREADY_CACHED;
            }
            if (lifecycle.isClosed()) {
                throw Lifecycle.closedWhileCreating();
            }
            if (restore && table.length(bucket) >= chainCap) {
                return CHAIN_FULL;
            }
            table.ensureRoom(bucket);
            int length = table.length(bucket);
            long outcome = 0;
            int reclaimed = 0;
            if (length >= chainCap) {
                reclaimed = reclaimForRoom(bucket);
                outcome = ((long) length << 32) | reclaimed;
            }
            long[] page = table.slotPage(slot);
            int at = table.valueIndex(slot);
            int generation = generation(lvMeta(page, at)); // advanced when the slot was freed (CompactTable.free)
            page[at] = value;
            // The generation as a long: shifted as an int, its top bit would sign-extend over the key.
            CompactTable.soMeta(page, at, ((long) key << 32)
                    | ((long) generation << GENERATION_SHIFT) | (reusable ? REUSABLE : 0) | 1);
            table.addNewest(bucket, print | slot, table.filterMixOfHash(keyed));
            entryCount.add(1L - reclaimed); // counted before the unlock: nobody can free it uncounted
            return outcome;
        } finally {
            table.unlock(bucket);
        }
    }

    /** The chain position of a live pair, newest first, or -1. Bit held. */
    private int positionOfPair(int bucket, int key, int print, long value) {
        for (int pos = table.length(bucket) - 1; pos >= 0; pos--) {
            int ref = table.refAt(bucket, pos);
            if (table.fingerprintOfRef(ref) == print) {
                int slot = table.slotOfRef(ref);
                long[] page = table.slotPage(slot);
                int at = table.valueIndex(slot);
                if (matches(page, at, lvMeta(page, at), key, value, true)) {
                    return pos;
                }
            }
        }
        return -1;
    }

    /**
     * Reclaims the chain's oldest unheld entries until one more fits under the cap: a referenced one
     * loses its flag and is passed over once. Bit held; allocation-free.
     *
     * @return the entries reclaimed
     */
    private int reclaimForRoom(int bucket) {
        int reclaimed = 0;
        for (int round = 0; round < 2 && table.length(bucket) >= chainCap; round++) {
            int pos = 0;
            while (pos < table.length(bucket) && table.length(bucket) >= chainCap) {
                int slot = table.slotOfRef(table.refAt(bucket, pos));
                long[] page = table.slotPage(slot);
                int at = table.valueIndex(slot);
                long meta = lvMeta(page, at);
                if ((meta & REFERENCED) == 0 && tryClaim(slot, page, at, meta)) {
                    table.removeAt(bucket, pos);
                    table.free(slot);
                    reclaimed++;
                    continue;
                }
                if ((meta & REFERENCED) != 0) {
                    setFlag(page, at, generation(meta), REFERENCED, false);
                }
                pos++;
            }
        }
        return reclaimed;
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
        return countLookup(find(key, 0, false, 0, false));
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
        return countLookup(find(key, value, true, 0, false));
    }

    /**
     * The primitive {@link #findNext}: the next reusable entry of the key older than {@code handle}'s
     * (from the chain head if it left the chain); releases {@code handle} in all cases.
     *
     * @param handle a handle the caller holds
     * @return the next handle, referenced for the caller, or {@link #NO_ENTRY}
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache's range
     * @throws IllegalStateException if the caller holds no reference to it, or the cache is closed
     */
    public long findNextHandle(long handle) {
        ensureOpen();
        long[] page = pageOf(handle);
        int at = table.valueIndex((int) handle);
        long meta = lvMeta(page, at);
        if (generation(meta) != generationOf(handle) || !heldByAnyCaller((int) handle, meta)) {
            throw referenceNotHeld("findNext of an entry the caller does not hold: " + describe(handle));
        }
        long next;
        try {
            next = find(keyOf(meta), 0, false, (int) handle, false);
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
     * The walk of kernel {@code __entry_find} (by key, reusable ones only, below {@code afterSlot}
     * if that is in the chain) or {@code mb_cache_entry_get} (by pair): optimistic first, under the
     * bucket's bit if a writer was in the bucket. With {@code object} (a {@link DedupCache} lookup,
     * which then wants the slot's entry object) the optimistic read loads that object before it takes
     * the reference (see {@link #tryFind}).
     */
    private long find(int key, long value, boolean byPair, int afterSlot, boolean object) {
        long keyed = table.keyedHash(key);
        int bucket = table.bucketOfHash(keyed);
        long found = tryFind(bucket, keyed, key, value, byPair, afterSlot, true, object);
        if (found == RETRY) {
            int print = table.fingerprintOfHash(keyed);
            table.lock(bucket);
            try {
                int from = table.length(bucket);
                if (afterSlot != 0) {
                    int at = table.positionOf(bucket, afterSlot);
                    if (at >= 0) {
                        from = at;
                    }
                }
                found = NO_ENTRY;
                for (int pos = from - 1; pos >= 0 && found == NO_ENTRY; pos--) {
                    int ref = table.refAt(bucket, pos);
                    if (table.fingerprintOfRef(ref) == print) {
                        int slot = table.slotOfRef(ref);
                        found = tryAcquireMatching(table.slotPage(slot), slot, key, value, byPair);
                    }
                }
            } finally {
                table.unlock(bucket);
            }
        }
        return found;
    }

    /**
     * The optimistic walk of {@link #find}: a handle, {@link #NO_ENTRY}, or {@link #RETRY}. Without
     * {@code acquire} (the create's duplicate check, by pair) it takes no reference and answers
     * {@link #CONTAINED}, {@link #RETRY}, or the version under which the pair was absent.
     * {@code keyed} is the key's {@link CompactTable#keyedHash}, which gives its filter bits and
     * fingerprint.
     *
     * <p>Newest first: the record's inline references, then, only if the walk gets that far, the
     * overflow array, loaded there and not before ({@link #overflowCovering}), so that a hit among a
     * chain's newest 15 reads the record alone (see CompactTable's "Memory ordering").
     *
     * <p>With {@code object} it loads the slot's entry object, and the object's handle, before the
     * CAS that takes the reference: a locked instruction waits for the loads before it, and the loads
     * after it wait for it, so loaded after it (in {@link #entryFor}) they would add two cache misses
     * in a row to the hit; loaded before, they overlap the meta word's. Only a load: entryFor decides
     * on the object afterwards, from the handle the CAS gave.
     */
    private long tryFind(int bucket, long keyed, int key, long value, boolean byPair, int afterSlot, boolean acquire,
                         boolean object) {
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
                if (pos < first && spill == null && (spill = overflowCovering(bucket, first)) == null) {
                    return RETRY;
                }
                if (table.slotOfRef(refAt(bucket, length, first, spill, pos)) == afterSlot) {
                    from = pos;
                    break;
                }
            }
        }
        for (int pos = from - 1; pos >= 0; pos--) {
            if (pos < first && spill == null && (spill = overflowCovering(bucket, first)) == null) {
                return RETRY;
            }
            int ref = refAt(bucket, length, first, spill, pos);
            if (table.fingerprintOfRef(ref) != print) {
                continue;
            }
            int slot = table.slotOfRef(ref);
            long[] page = table.laSlotPage(slot);
            if (page == null) {
                return RETRY;
            }
            if (object && table.laHandleObject(slot) instanceof Entry stored && stored.handle == 0) {
                return RETRY; // never (a handle's slot is at least 1): the loads must not be dropped
            }
            long handle = acquire ? tryAcquireMatching(page, slot, key, value, byPair)
                    : matches(page, table.valueIndex(slot), lvMeta(page, table.valueIndex(slot)), key, value, true) ? CONTAINED : NO_ENTRY;
            if (handle == NO_ENTRY) {
                continue;
            }
            if (table.validate(bucket, head)) {
                return handle;
            }
            if (acquire) {
                releaseHandle(handle); // the occupant it incremented; see the implementation notes, step 3
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
    private int[] overflowCovering(int bucket, int first) {
        int[] spill = table.lpOverflow(bucket);
        return spill != null && spill.length >= first ? spill : null;
    }

    /**
     * An optimistic read's reference at {@code pos} of a chain of the {@code length} it read: the
     * record's inline reference {@code length - 1 - pos} (0 the newest; below {@code INLINE}, as
     * {@code pos >= first}) from the chain's first inline position {@code first} up, below it
     * {@code spill[pos]} (the array {@link #overflowCovering} gave, which holds {@code first}).
     */
    private int refAt(int bucket, int length, int first, int[] spill, int pos) {
        return pos >= first ? table.inlineRef(bucket, length - 1 - pos) : spill[pos];
    }

    /** Whether a slot's meta word (and value) show a live entry of the key, reusable or of the value. */
    private static boolean matches(long[] page, int at, long meta, int key, long value, boolean byPair) {
        return count(meta) != 0 && keyOf(meta) == key && (byPair ? page[at] == value : (meta & REUSABLE) != 0);
    }

    /**
     * Increment-if-not-zero on a slot whose key matches and whose value (by pair) or reusable flag
     * (by key) does, with one CAS of the whole meta word; the handle, or {@link #NO_ENTRY}. A hot
     * slot's reference goes to a cell ({@link HotReferences}); a slot whose CAS keeps failing
     * switches to hot mode.
     */
    private long tryAcquireMatching(long[] page, int slot, int key, long value, boolean byPair) {
        // From the table's page mask, not the page's length: the length is in the page's header, so
        // the slot's address would wait for one more load (measured at 10^7 entries: within the
        // run-to-run spread, at most a few per cent).
        int at = table.valueIndex(slot);
        for (;;) {
            long meta = lvMeta(page, at);
            if (!matches(page, at, meta, key, value, byPair)) {
                return NO_ENTRY;
            }
            if ((meta & HOT) != 0) {
                return HOT_REFERENCES.tryAcquire(table, slot, meta) ? handleOf(slot, meta) : NO_ENTRY;
            }
            if (count(meta) == COUNT_MASK) {
                throw new IllegalStateException("too many references to the entry of key " + key);
            }
            if (CompactTable.casMeta(page, at, meta, meta + 1)) {
                return handleOf(slot, meta);
            }
            if (table.noteContention(handleOf(slot, meta)) && HOT_REFERENCES.switchToHot(table, slot, meta, 1)) {
                return handleOf(slot, meta);
            }
        }
    }

    private static long handleOf(int slot, long meta) {
        return (long) generation(meta) << 32 | slot;
    }

    private static int generationOf(long handle) {
        return (int) (handle >>> 32);
    }

    /**
     * Counts a lookup as a hit or a miss; returns it. A miss is first checked against a racing
     * close ({@link #missUnlessClosed}), and then the only way this throws.
     */
    private long countLookup(long found) {
        long answer = found != NO_ENTRY ? found : missUnlessClosed();
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
        long keyed = table.keyedHash(key);
        int bucket = table.bucketOfHash(keyed);
        int print = table.fingerprintOfHash(keyed);
        int freed = 0;
        long handle = NO_ENTRY;
        table.lock(bucket);
        try {
            int pos = positionOfPair(bucket, key, print, value);
            if (pos < 0) {
                return missUnlessClosed();
            }
            int slot = table.slotOfRef(table.refAt(bucket, pos));
            long[] page = table.slotPage(slot);
            int at = table.valueIndex(slot);
            if (tryClaim(slot, page, at, lvMeta(page, at))) {
                table.removeAt(bucket, pos);
                // Freed under the bit: a close() that returns after this found the chain without
                // the pair, so it has to take the bit after this, and a handle of the pair reads
                // stale (its generation moved) after the close as before it.
                table.free(slot);
                freed = slot;
            } else {
                handle = tryAcquireMatching(page, slot, key, value, true);
                if (handle == NO_ENTRY) {
                    return missUnlessClosed();
                }
            }
        } finally {
            table.unlock(bucket);
        }
        if (freed != 0) {
            entryCount.add(-1);
            statistics.add(ReclaimBooks.DELETES, 1);
        }
        return handle;
    }

    /**
     * Count 1 to 0, keeping key, flags and generation; {@code false} if held (or already 0). A hot
     * slot is claimed frozen, and its cells retired before this returns, so before the slot can be
     * freed and reused ({@link HotReferences}).
     */
    private boolean tryClaim(int slot, long[] page, int at, long meta) {
        for (;;) {
            if ((meta & HOT) != 0) {
                return HOT_REFERENCES.tryClaim(table, slot, meta);
            }
            if (count(meta) != 1) {
                return false;
            }
            if (CompactTable.casMeta(page, at, meta, meta & ~(long) COUNT_MASK)) {
                return true;
            }
            meta = lvMeta(page, at);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Handles: release, flags, waiting
    // ---------------------------------------------------------------------------------------------

    /**
     * Gives back the caller's reference (kernel {@code mb_cache_entry_put}).
     *
     * @param handle a handle the caller holds
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache's range
     * @throws IllegalStateException if the handle was released more often than it was handed out
     *     (its slot's generation moved on, or only the cache's reference is left), or the cache is
     *     closed
     */
    public void release(long handle) {
        ensureOpen();
        pageOf(handle);
        releaseHandle(handle);
    }

    private void releaseHandle(long handle) {
        int slot = (int) handle;
        long[] page = table.slotPage(slot);
        int at = table.valueIndex(slot);
        int generation = generationOf(handle);
        for (;;) {
            long meta = lvMeta(page, at);
            boolean wake;
            if (generation(meta) == generation && (meta & HOT) != 0) {
                int outcome = HOT_REFERENCES.release(table, slot, meta);
                if (outcome == HotReferences.REFUSED) {
                    throw referenceNotHeld("entry released more often than it was handed out: " + describe(handle));
                }
                wake = outcome == HotReferences.RELEASED_WAKE;
            } else if (generation(meta) != generation || count(meta) <= 1) {
                throw referenceNotHeld("entry released more often than it was handed out: " + describe(handle));
            } else if (CompactTable.casMeta(page, at, meta, meta - 1)) {
                wake = (meta & WAITERS) != 0 && count(meta - 1) <= 2;
            } else {
                table.noteContention(handle);
                continue;
            }
            if (wake) {
                setFlag(page, at, generation, WAITERS, false);
                // If this throws (the queue lock's node), the waiters find the slot unused at
                // their next re-check, as in MbCache.
                unusedWaiters.wake(this);
            }
            return;
        }
    }

    /** Sets or clears one flag of a live slot of this generation; does nothing to a freed or reused one. */
    private static void setFlag(long[] page, int at, int generation, int flag, boolean on) {
        for (;;) {
            long meta = lvMeta(page, at);
            if (generation(meta) != generation || count(meta) == 0) {
                return;
            }
            long updated = on ? meta | flag : meta & ~(long) flag;
            if (updated == meta || CompactTable.casMeta(page, at, meta, updated)) {
                return;
            }
        }
    }

    /**
     * Marks the entry recently used (kernel {@code mb_cache_entry_touch}); never loses a concurrent
     * change of its reusable flag. Does nothing if the handle's pair is gone (its slot free or given
     * to another pair).
     *
     * @param handle a handle the caller holds
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache's range
     * @throws IllegalStateException if the cache is closed
     */
    public void touch(long handle) {
        ensureOpen();
        setFlag(pageOf(handle), table.valueIndex((int) handle), generationOf(handle), REFERENCED, true);
    }

    /**
     * Sets or clears the entry's reusable flag; does nothing if the handle's entry is gone.
     *
     * @param handle a handle the caller holds
     * @param reusable the new value of the flag
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache's range
     * @throws IllegalStateException if the cache is closed
     */
    public void setReusable(long handle, boolean reusable) {
        ensureOpen();
        setFlag(pageOf(handle), table.valueIndex((int) handle), generationOf(handle), REUSABLE, reusable);
    }

    /**
     * Whether the handle's entry is reusable now; {@code false} once its pair is gone (its slot free
     * or given to another pair).
     *
     * @param handle a handle of this cache
     * @return the reusable flag
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache's range
     */
    public boolean reusable(long handle) {
        long meta = lvMeta(pageOf(handle), table.valueIndex((int) handle));
        return !isStale(meta, handle) && (meta & REUSABLE) != 0;
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
    private boolean isStale(long meta, long handle) {
        return generation(meta) != generationOf(handle) || (count(meta) == 0 && !lifecycle.isClosed());
    }

    /**
     * The key of a held handle's entry.
     *
     * @param handle a handle the caller holds
     * @return the key
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache's range
     * @throws IllegalStateException if the handle was released and its pair is gone (its slot is
     *     free or went to another pair)
     */
    public int key(long handle) {
        long meta = lvMeta(pageOf(handle), table.valueIndex((int) handle));
        if (isStale(meta, handle)) {
            throw new IllegalStateException("stale handle: " + Long.toHexString(handle));
        }
        return keyOf(meta);
    }

    /**
     * The value of a held handle's entry. Valid only while the caller holds the handle (a released
     * one's slot may hold another pair by now).
     *
     * @param handle a handle the caller holds
     * @return the value
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache's range
     * @throws IllegalStateException if the handle was released and its pair is gone (its slot is
     *     free or went to another pair)
     */
    public long value(long handle) {
        long[] page = pageOf(handle);
        int at = table.valueIndex((int) handle);
        long value = page[at];
        VarHandle.acquireFence(); // the value's load before the meta word's
        if (isStale(lvMeta(page, at), handle)) {
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
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache's range
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
     * @throws IllegalArgumentException if {@code handle} is not a handle of this cache's range
     * @throws IllegalStateException if the cache is closed (also during the wait)
     */
    public boolean waitUnused(long handle, long timeout, TimeUnit unit) throws InterruptedException {
        ensureOpen();
        Objects.requireNonNull(unit, "unit");
        long nanos = unit.toNanos(timeout);
        return awaitUnused(handle, nanos == Long.MAX_VALUE ? Long.MAX_VALUE - 1 : nanos);
    }

    /** As MbCache's: the WAITERS bit is set in the CAS loop that re-reads the count. */
    private boolean awaitUnused(long handle, long nanos) throws InterruptedException {
        long[] page = pageOf(handle);
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        int at = table.valueIndex((int) handle);
        int generation = generationOf(handle);
        int slot = (int) handle;
        boolean unused = unusedWaiters.await(this, () -> lifecycle.isClosed() || !markWaitingUnlessUnused(slot, page, at, generation), nanos);
        ensureOpen();
        return unused;
    }

    private boolean markWaitingUnlessUnused(int slot, long[] page, int at, int generation) {
        for (;;) {
            long meta = lvMeta(page, at);
            if (generation(meta) == generation && (meta & HOT) != 0) {
                return HOT_REFERENCES.markWaitingUnlessUnused(table, slot, meta);
            }
            if (generation(meta) != generation || count(meta) <= 2) {
                return false;
            }
            if ((meta & WAITERS) != 0 || CompactTable.casMeta(page, at, meta, meta | WAITERS)) {
                return true;
            }
        }
    }

    /** Whether a caller holds the live occupant whose meta word is {@code meta} ({@code findNext}'s check). */
    private boolean heldByAnyCaller(int slot, long meta) {
        return (meta & HOT) != 0 ? HOT_REFERENCES.heldByAnyCaller(table, slot, meta) : count(meta) > 1;
    }

    /** Switches a held handle's slot to hot mode, as contended hits do (tests); whether it is hot now. */
    boolean switchToHot(long handle) {
        long meta = lvMeta(pageOf(handle), table.valueIndex((int) handle));
        if (generation(meta) == generationOf(handle)) {
            HOT_REFERENCES.switchToHot(table, (int) handle, meta, 0);
        }
        return isHot(handle);
    }

    /** Whether a handle's slot is in hot mode with the handle's generation. */
    boolean isHot(long handle) {
        long meta = lvMeta(pageOf(handle), table.valueIndex((int) handle));
        return generation(meta) == generationOf(handle) && count(meta) != 0 && (meta & HOT) != 0;
    }

    /** Slots with cells now: hot ones (at most {@value HotReferences#MAX_HOT_ENTRIES}). */
    int hotSlots() {
        return table.hotSlots();
    }

    /** The handle of one of a compact cache's entry objects (tests). */
    static long handleOfEntry(CacheEntry entry) {
        return ((Entry) entry).handle;
    }

    /** The cache of one of a compact cache's entry objects (tests). */
    static CompactMbCache cacheOf(CacheEntry entry) {
        return ((Entry) entry).cache;
    }

    /** The slot page of a handle in this cache's range, or {@link IllegalArgumentException}. */
    private long[] pageOf(long handle) {
        int slot = (int) handle;
        if (handle < 0 || generationOf(handle) > GENERATION_MASK || slot <= 0 || slot >= table.end()) {
            throw new IllegalArgumentException("not a handle of this cache: " + Long.toHexString(handle));
        }
        return table.slotPage(slot);
    }

    private String describe(long handle) {
        long[] page = table.slotPage((int) handle);
        long meta = lvMeta(page, table.valueIndex((int) handle));
        return "CompactMbCache.Entry[slot=" + (int) handle + ", generation=" + generationOf(handle)
                + ", slot generation=" + generation(meta) + ", key=" + keyOf(meta)
                + ", refcount=" + HOT_REFERENCES.references(table, (int) handle, meta) + "]";
    }

    // ---------------------------------------------------------------------------------------------
    // The DedupCache methods: handle objects
    // ---------------------------------------------------------------------------------------------

    /** The entry object of a live slot: key and value copied, so they stay readable after release. */
    private static final class Entry implements CacheEntry {
        final CompactMbCache cache;
        final long handle;
        final int key;
        final long value;

        Entry(CompactMbCache cache, long handle, int key, long value) {
            this.cache = cache;
            this.handle = handle;
            this.key = key;
            this.value = value;
        }

        @Override
        public int key() {
            return key;
        }

        @Override
        public long value() {
            return value;
        }

        @Override
        public boolean reusable() {
            return cache.reusable(handle);
        }

        @Override
        public void setReusable(boolean reusable) {
            cache.setReusable(handle, reusable);
        }

        @Override
        public void close() {
            cache.release(this);
        }

        @Override
        public String toString() {
            return "CompactMbCache.Entry[key=" + key + ", value=" + value + ", slot=" + (int) handle
                    + ", generation=" + generationOf(handle) + "]";
        }
    }

    /**
     * The one entry object of a held handle: the stored one if it is this generation's, else a new
     * one stored by CAS (a racing lookup of the same entry gets the winner). If that allocation
     * throws, the caller's reference is given back first.
     */
    private CacheEntry entryFor(long handle) {
        if (handle == NO_ENTRY) {
            return null;
        }
        try {
            int slot = (int) handle;
            Object current = table.laHandleObject(slot);
            for (;;) {
                if (current instanceof Entry && ((Entry) current).handle == handle) {
                    return (Entry) current;
                }
                long[] page = table.slotPage(slot);
                int at = table.valueIndex(slot);
                Entry fresh = new Entry(this, handle, keyOf(lvMeta(page, at)), page[at]);
                Object now = table.casHandleObject(slot, current, fresh);
                if (now == fresh) {
                    return fresh;
                }
                current = now;
            }
        } catch (Throwable failure) {
            releaseHandle(handle);
            throw failure;
        }
    }

    private long ownHandle(CacheEntry entry) {
        Objects.requireNonNull(entry, "entry");
        if (entry instanceof Entry && ((Entry) entry).cache == this) {
            return ((Entry) entry).handle;
        }
        throw new IllegalArgumentException("entry belongs to another cache: " + entry);
    }

    /** {@inheritDoc} */
    @Override
    public CacheEntry findFirst(int key) {
        ensureOpen();
        return entryFor(countLookup(find(key, 0, false, 0, true)));
    }

    /** {@inheritDoc} */
    @Override
    public CacheEntry findNext(CacheEntry entry) {
        ensureOpen();
        return entryFor(findNextHandle(ownHandle(entry)));
    }

    /** {@inheritDoc} */
    @Override
    public CacheEntry get(int key, long value) {
        ensureOpen();
        return entryFor(countLookup(find(key, value, true, 0, true)));
    }

    /** {@inheritDoc} */
    @Override
    public CacheEntry deleteOrGet(int key, long value) {
        return entryFor(deleteOrGetHandle(key, value));
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

    /** {@inheritDoc} */
    @Override
    public long size() {
        ensureOpen();
        return Math.max(0, entryCount.snapshot());
    }

    /** {@inheritDoc} */
    @Override
    public long shrink(long nrToScan) {
        ensureOpen();
        if (nrToScan < 0) {
            throw new IllegalArgumentException("nrToScan must not be negative, was " + nrToScan);
        }
        return books.reclaim(nrToScan, ReclaimPassEvent.Kind.REQUESTED);
    }

    /**
     * The compact layout's step of a reclaim pass, run by {@link ReclaimBooks} under the reclaim
     * lock: the clock's hand moves over the slots in table order, frees an unreferenced slot nobody
     * holds and clears a referenced one's flag (see the implementation notes). Ahead of the hand it
     * loads the bucket lines of the claimable slots ({@link CompactTable#touchBucketsOfClaimable}),
     * so that the claims' misses overlap.
     */
    private final class ClockSweep implements ReclaimBooks.Sweep {
        private int end;
        private int touchedFrom;
        private int touchedTo;
        private long touched;

        @Override
        public long beginPass() {
            end = table.end();
            touchedFrom = 0;
            touchedTo = 0;
            touched = 0;
            return end - 1L;
        }

        @Override
        public int step() {
            int slot = hand < end ? hand : 1;
            hand = slot + 1;
            if (slot < touchedFrom || slot >= touchedTo) {
                touchedFrom = slot;
                touchedTo = Math.min(end, slot + RECLAIM_LOOKAHEAD);
                touched += table.touchBucketsOfClaimable(touchedFrom, touchedTo);
            }
            long[] page = table.slotPage(slot);
            int at = table.valueIndex(slot);
            long meta = lvMeta(page, at);
            if (count(meta) == 0) {
                return EMPTY;
            }
            if ((meta & REFERENCED) == 0 && count(meta) == 1 && claim(slot, page, at, meta)) {
                return FREED;
            }
            if ((meta & REFERENCED) != 0) {
                setFlag(page, at, generation(meta), REFERENCED, false);
                return SECOND_CHANCE;
            }
            return KEPT;
        }

        @Override
        public void endPass() {
            consume(touched);
        }
    }

    /**
     * Claims an unused slot (count 1 to 0, re-checked under its bucket's bit: same key, same
     * generation) and unhashes it, then frees it. Reclaim lock held.
     */
    private boolean claim(int slot, long[] page, int at, long seen) {
        int bucket = table.bucketOf(keyOf(seen));
        table.lock(bucket);
        try {
            long meta = lvMeta(page, at);
            if ((meta ^ seen) >>> GENERATION_SHIFT != 0 || !tryClaim(slot, page, at, meta)) {
                return false; // another generation or key (reused meanwhile), or held now
            }
            int pos = table.positionFromOldest(bucket, slot); // the hand claims old pairs: near the front
            if (pos < 0) {
                throw new AssertionError("a live slot was not in its chain: " + slot);
            }
            table.removeAt(bucket, pos);
        } finally {
            table.unlock(bucket);
        }
        table.free(slot);
        return true;
    }

    /** Whether a background pass is pending or running (for tests). */
    boolean backgroundReclaimPending() {
        return backgroundReclaim.pending();
    }

    /** The memory-pressure shrinker ({@link ReclaimBooks#onMemoryPressure}); for tests. */
    void onMemoryPressure() {
        books.onMemoryPressure();
    }

    /** What this cache registers with {@link MemoryPressureRegistry}; for tests. */
    MemoryPressureRegistry.Shrinker shrinker() {
        return books;
    }

    /** {@inheritDoc} */
    @Override
    public CacheStats stats() {
        ensureOpen();
        return books.stats();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_destroy}: every slot's count goes to zero (its flags stay, so a
     * handle's {@code reusable()} stays readable); the pages are kept until the cache is collected.
     */
    @Override
    public void close() {
        if (!lifecycle.beginClose()) {
            return;
        }
        if (pressureRegistration != null) {
            MemoryPressureRegistry.INSTANCE.unregister(pressureRegistration);
        }
        reclaimLock.lock();
        try {
            for (int bucket = 0; bucket < table.bucketCount(); bucket++) {
                table.lock(bucket);
                try {
                    for (int pos = table.length(bucket) - 1; pos >= 0; pos--) {
                        int slot = table.slotOfRef(table.refAt(bucket, pos));
                        long[] page = table.slotPage(slot);
                        int at = table.valueIndex(slot);
                        long meta;
                        do {
                            meta = lvMeta(page, at);
                        } while (!CompactTable.casMeta(page, at, meta, meta & ~(long) COUNT_MASK));
                        if ((meta & HOT) != 0) {
                            HOT_REFERENCES.retire(table, slot, meta);
                        }
                    }
                    table.clear(bucket);
                } finally {
                    table.unlock(bucket);
                }
            }
            entryCount.reset();
        } finally {
            reclaimLock.unlock();
        }
        unusedWaiters.wakeAll();
        lifecycle.tornDown();
    }

    // ---------------------------------------------------------------------------------------------
    // Snapshots
    // ---------------------------------------------------------------------------------------------

    /**
     * {@inheritDoc}
     *
     * <p>The order is the clock's, the one reclaim passes sweep: from the hand to the end of the
     * table, then from the first slot up to the hand, so the slot the hand looks at next comes first
     * (oldest first in this backend's reclaim order; see "Reclaim order" in the class comment). A
     * restore into an empty cache hands out slots from the start of the table in the snapshot's
     * order and its hand starts there, so it rebuilds that order. The walk takes no lock but the
     * reclaim lock, once, to read the hand (so it waits for at most one pass in progress); it reads
     * each slot's meta word, value and meta word again, and writes the pair if both reads show the
     * same live occupant (same key and generation, count above zero), with its flags (reusable;
     * referenced as record flag 2, not restored). No reference is taken. A pair does not move while
     * it is cached (a pass gives a second chance by clearing a flag, in place), so every pair cached
     * for the whole call is written exactly once; slots added at the end of the table during the
     * walk hold pairs created during the call and are not looked at. The walk keeps no state in the
     * cache, so snapshots of one cache may run at the same time and none waits for another (the
     * {@link java.io.InterruptedIOException} of {@link DedupCache#writeSnapshot} never arises here);
     * one started from the stream of another is an ordinary second walk. A close during the walk is
     * an {@link IllegalStateException}: {@code close()} zeroes the counts, which would otherwise end
     * the snapshot short as if it were complete.
     */
    @Override
    public long writeSnapshot(OutputStream out) throws IOException {
        Objects.requireNonNull(out, "out");
        ensureOpen();
        int end = table.end();
        int from;
        reclaimLock.lock();
        try {
            from = hand < end ? hand : 1;
        } finally {
            reclaimLock.unlock();
        }
        return Snapshots.write(out, new SnapshotWalk(from, end));
    }

    /** One snapshot's walk over the slots {@code [start, end)}, then {@code [1, start)}. */
    private final class SnapshotWalk implements Snapshots.PairSource {
        private final int start;
        private final int end;
        private int next;
        private boolean wrapped;

        SnapshotWalk(int start, int end) {
            this.start = start;
            this.end = end;
            this.next = start;
        }

        @Override
        public int next(int[] keys, long[] values, byte[] flags, int from, int max) {
            int copied = 0;
            while (copied < max) {
                if (!wrapped && next >= end) {
                    wrapped = true;
                    next = 1;
                }
                if (wrapped && next >= start) {
                    break;
                }
                int slot = next++;
                long[] page = table.slotPage(slot);
                int at = table.valueIndex(slot);
                long meta = lvMeta(page, at);
                if (count(meta) == 0) {
                    continue; // free, claimed, or not filled yet
                }
                long value = page[at];
                VarHandle.acquireFence(); // the value's load before the second load of the meta word
                long again = lvMeta(page, at);
                if (count(again) == 0 || (again ^ meta) >>> GENERATION_SHIFT != 0) {
                    continue; // freed (its value word may be the free list's link) or reused meanwhile
                }
                keys[from + copied] = keyOf(again);
                values[from + copied] = value;
                flags[from + copied] = (byte) (((again & REUSABLE) != 0 ? Snapshots.RECORD_REUSABLE : 0)
                        | ((again & REFERENCED) != 0 ? Snapshots.RECORD_REFERENCED : 0));
                copied++;
            }
            ensureOpen(); // close() zeroed the counts: never end a snapshot short as if complete
            return copied;
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>The budget is {@link #maxEntries()} minus {@link #size()}; the pairs are created as by
     * {@link #create}, on the calling thread, in the snapshot's order, except that a restore never
     * reclaims for the {@linkplain #chainCap() chain cap}: a pair whose chain is at the cap is
     * skipped and not counted.
     */
    @Override
    public long readSnapshot(InputStream in) throws IOException {
        Objects.requireNonNull(in, "in");
        ensureOpen();
        long budget = maxEntries - size();
        long created = Snapshots.read(in, budget, this::createForRestore);
        ensureOpen(); // closed during the read: a restore that created nothing still reports it
        return created;
    }

    /**
     * The bytes this cache's arrays take (bucket heads and records, overflow arrays, slot pages, handle tables),
     * a lower bound of what it retains. For benchmarks and sizing.
     *
     * @return the footprint in bytes
     */
    public long footprintBytes() {
        return table.footprintBytes();
    }

    /** The length of {@code key}'s bucket chain. Package-private, for tests. */
    int chainLength(int key) {
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
     * the chain's bucket; the first breach as an {@link AssertionError}. Quiet caches only; for tests.
     */
    void checkChains() {
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

    /** Removals from a chain that rebuild its key filters, one in so many. Package-private, for tests. */
    int filterRebuildEvery() {
        return table.rebuildEvery;
    }

    /** The bucket of {@code key}. Package-private, for tests. */
    int bucketOf(int key) {
        return table.bucketOf(key);
    }

    private void ensureOpen() {
        lifecycle.ensureOpen();
    }

    @Override
    public String toString() {
        return "CompactMbCache[bucketBits=" + bucketBits + ", maxEntries=" + maxEntries + ", chainCap=" + chainCap
                + (lifecycle.isClosed() ? ", closed" : ", size=" + Math.max(0, entryCount.snapshot())) + "]";
    }
}
