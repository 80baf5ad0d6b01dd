package org.mbcache;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.mbcache.internal.HashedWaitQueues;
import org.mbcache.internal.Lifecycle;
import org.mbcache.internal.Saturating;
import org.mbcache.internal.Snapshots;
import org.mbcache.internal.StripedStatistics;

/**
 * The kernel port: Linux {@code fs/mbcache.c} (the 2016 "mbcache2" rewrite with the 2019 request
 * list and the 2022 race fixes) for the JVM, keeping the {@link DedupCache} contract.
 *
 * <p>Build one with {@link #create(int)} or {@link #builder()}: {@code 2^bucketBits} buckets (ext4
 * uses 10), background reclaim from {@code maxEntries} (default 16 per bucket), a synchronous pass
 * on the creating thread from {@code 2 * maxEntries}. Lookups never block on the cache's locks in
 * the common case, and a lookup never allocates; with the default
 * {@link CreateStrategy#REQUEST_LIST}, a refused duplicate allocates nothing either, and one refused
 * because its pair is cached takes no lock.
 *
 * <p>Keys are content hashes, and whoever writes content chooses them. So the bucket of a key is
 * picked with a per-cache secret ({@link Builder#hashSeed(long)}), not the kernel's fixed
 * {@code hash_32}, and no create leaves a bucket chain with more than {@link #chainCap()} entries
 * that nobody holds: a flood of colliding keys costs its sender, not the other users of the
 * cache. Each cache also answers heap pressure with reclaim passes until it is closed: when a
 * collection leaves the old generation over 80% full, a pass over half its entries. The 80% is a
 * collection-usage threshold ({@link java.lang.management.MemoryPoolMXBean}) set on the
 * old-generation pools when the first cache is built, unless the application set one already; a
 * threshold at the pool's maximum keeps the passes out. A cache built with
 * {@link Builder#memoryPressureReclaim(boolean) memoryPressureReclaim(false)} takes no part in this.
 */
public final class MbCache implements DedupCache {

    /*
     * Implementation notes.
     *
     * The order is mbcache.c's own: data structures first (ListEntry here; ListTable, ListLru, EntryCount,
     * StripedCounter and internal.StripedStatistics in files of their own), then the functions
     * that use them, each naming the kernel function it ports.
     *
     * Entries (ListEntry, 40 bytes with compressed oops) carry their key, value, owning cache, one LRU
     * link and one int "state word" holding the reference count and three flags (reusable,
     * referenced, waiters). Count and flags in one word make every flag update atomic with every
     * other flag and with the count (kernel fix a44e84a9b776 was a lost flag update). The whole
     * reference-counting protocol is the handful of CAS loops on that word inside ListEntry.
     *
     * ListTable (ListTable.java): parallel arrays per bucket (length and one 32-bit fingerprint of key
     * and value per entry in one int[], the entries beside it, so that a lookup by pair dereferences
     * only the entry whose fingerprint matched), the request list of the 2019 patch, a head word per
     * bucket holding the lock bit, a version and a 32-bit key filter, a second, 64-bit key filter
     * per bucket beside it (most misses read both words, and the head word again to validate,
     * and nothing else), and the keyed
     * bucket index. Every change of a chain holds the bucket's bit.
     * Lookups do not: they read the chain optimistically and validate against the version (a
     * seqlock read), taking a hit's reference with increment-if-not-zero before validating, and
     * fall back to the bit when a writer was in the bucket. The ordering argument is written down
     * in ListTable.
     *
     * Reference counts follow the kernel: the cache holds one reference to each entry it contains,
     * each caller handed an entry one more. Only two operations drop the cache's own reference,
     * both under the entry's bucket bit, both with a CAS of the count from 1 (the cache alone) to 0,
     * and both unhashing the entry before they let go of the bit: a reclaim (a pass, or the chain
     * cap) and deleteOrGet (the kernel's takes a reference and CASes from 2; the same decision).
     * So a count above zero means "in its chain", an entry in a chain has a count above zero, and
     * nobody removes an entry somebody else holds. A release that
     * would take the count to the cache's own reference or below is refused (IllegalStateException):
     * an over-release never frees an entry. What a counter cannot see: a holder that releases twice
     * while another holder still uses the entry spends the other holder's reference, and the entry
     * may then be reclaimed under that holder. The count is legitimate at every step; no cache
     * built on counts can tell.
     *
     * The LRU list (ListLru.java) holds every entry in creation order for the second-chance scan.
     * Creates push onto per-thread-striped lock-free append stacks; a reclaim pass, holding the list
     * lock, drains them onto the tail. Entries that left their chain outside a pass (deleteOrGet, the
     * chain cap) stay linked, dead, until a pass meets them or a purge unlinks them (when they
     * outnumber the live ones).
     *
     * Counting. The entry count (EntryCount) is striped: a create or removal adds to its thread's
     * cells, and a shared estimate word moves once per batch of a thread's adds. size() must be a
     * value the count really had, which a sum read cell by cell cannot promise (a reader
     * descheduled between two cells mixes moments far apart; the soak run caught an earlier striped
     * count at it), so size() takes a snapshot: a double collect of cells that only grow, exact at
     * one moment, with the writers diverted to one word if they keep it from agreeing. A create
     * decides its reclaim triggers on the estimate wherever the estimate's slack cannot change the
     * answer; near the bound on the estimate corrected by its own thread's cells (exact for a
     * single writer), and near twice the bound on a snapshot (BackgroundReclaim.beforeCreate).
     * Lookups never touch the count. The dead entries still linked on the LRU list are striped
     * (StripedCounter: exact cells, and an estimate written once per batch that decides the purge).
     * Hits, misses, refusals, cap reclaims, creates and deletes are StripedStatistics: a thread
     * adds to a stripe of its own, one line for all six, allocated with the cache (a LongAdder
     * allocates cells on its first collision, and a count that can throw after a reference was
     * taken would leak it). Creates and deletes were once counted in the bucket they change, under
     * its bit; that cost 16 bytes a bucket, which the second key filter needed (ListTable), and made
     * stats() take every bucket's bit.
     *
     * Which cache lines each operation writes that another thread may also write (the scaling
     * argument; "entry" is the state word of the entry handed out):
     *
     *   findFirst / findNext / get, hit     the entry (acquire CAS); later its release CAS
     *   findFirst / findNext / get, miss    none
     *   release, touch, setReusable         the entry
     *   create, duplicate refused           none with the request list when the pair is in its
     *                                       chain (an optimistic read); else the bucket's lock word
     *   create, new pair                    the bucket's lock word (twice with the request list),
     *                                       key filters, chain and request-list arrays; the
     *                                       creator's stack top, entry-count cell and statistics
     *                                       stripe; the entry; once per batch of the thread's
     *                                       creates, the entry count's estimate
     *   deleteOrGet                         the bucket's lock word, key filters and chain arrays;
     *                                       the entry; an entry-count, a dead-entry and a
     *                                       statistics cell; once per batch, the two estimates
     *   reclaim pass (any kind)             the LRU lock and list; every append stack's top (it
     *                                       takes them all); the state word of every entry it
     *                                       claims or clears; per freed entry its bucket's lock
     *                                       word and chain; a dead-entry cell; the entry count's
     *                                       central word and estimate, once per pass
     *   size()                              none (while writers keep a snapshot from agreeing,
     *                                       the entry count's diversion word, twice)
     *   stats()                             the LRU lock
     *
     * The per-thread cells (StripedStatistics', StripedCounter's, EntryCount's, the append stacks)
     * are on lines of their own; two threads share one only when their ids collide (one chance in 16
     * or more stripes for two threads). Lock words of neighbouring buckets share a line; creates,
     * deletes, passes and close() write them, and lookups only when a writer was in the
     * bucket. No word is written by every create or removal in a cache of at least 32 entries per
     * stripe (512 on 2 processors, 4,096 on 16; see EntryCount): the shared estimates move once per
     * batch (2 to 64) of one thread's adds, and the entry count's central word only while a size()
     * waits for writers or a pass counts its frees. A smaller cache keeps an exact estimate, which
     * every create and removal writes. (On this project's 2-vCPU machines the single atomic entry
     * count this replaced cost nothing measurable: a patched copy with striped cells ran churn and
     * new creates at 2 threads within the fork-to-fork noise of the built jar. The argument is for
     * machines with many cores, where one word written by every create is the textbook hot spot.)
     *
     * What a hit still shares: the entry's state word, written by the acquire and the release CAS,
     * so with uniform keys the entry's line was last written by another core about as often as not.
     * Taking that off the hit path means holding entries outside the count, in slots of the holder's
     * own (hazard pointers): a hit stores the entry in a slot and fences; a claim (reclaim, the
     * chain cap, deleteOrGet) and waitUnused CAS the state word, fence, and scan every slot. It was
     * weighed and not built, for four reasons written down here for whoever takes it up. Handles are
     * shared objects, so a thread may release a reference another thread took, and release must
     * then find and clear some other thread's slot (references are interchangeable, so any slot
     * holding the entry will do). Slots per thread do not survive virtual threads or thread churn,
     * so they would be striped (stripes of a few slots, taken by CAS), and every claim of a reclaim
     * pass would scan all of them. On x86 the fence after storing a slot is a locked instruction,
     * the same price as the CAS it replaces, so one thread gains nothing; only contended hits do.
     * And it changes every window the JCStress races cover. Measured on a 2-vCPU VM (patched copies,
     * 1 thread, 65,536 entries, interleaved runs of 2 forks each): a hit with both CAS of the count
     * replaced by plain loads took 63-66 ns against 65-77 ns as built, and one without its hit counter
     * 65-66 ns against 65-67 ns; without both, at 4,096 entries, 22.5 ns against 35. Any one locked
     * instruction makes a hit wait for the loads before it and the loads after it wait for the hit,
     * so consecutive hits cannot overlap their cache misses as a plain map's lookups do, and a hit's
     * time becomes its latency: its dependent loads (the chain's fingerprints, then its entry
     * references, then the entry). The benchmark module's Baseline.findFirstHitCounted measures
     * that floor: a ConcurrentHashMap lookup plus the count's CAS pair took 2.2-4.7x the plain
     * lookup, and the port's hit 1.0-1.4x the floor at 1 thread. Hold slots pay the same locked
     * instruction (the fence after the slot's store), so they would buy nothing on an uncontended
     * hit and cost every claim a scan. At 2 threads the medians of 6 forks show hits no slower than
     * at 1.
     *
     * That holds for uniform keys. When every thread hits one entry (ext4's zero block, a shared
     * ACL), the state word's line moves on every hit, so such an entry switches to hot mode once its
     * acquire CAS keeps failing: callers' references then go to per-stripe cells of its own, and the
     * exact decisions (claims, waitUnused, the over-release check) freeze the word and sum the cells.
     * HotReferences' class comment has the protocol and its argument (shared with CompactMbCache's
     * slots); at most HotReferences.MAX_HOT_ENTRIES entries of a cache are hot, and cold entries
     * keep the protocol above, unchanged.
     *
     * Memory ordering, by structure. Chain arrays, request lists and the LRU list are plain fields
     * guarded by a lock (bucket bit or LRU lock); optimistic reads of chains are validated as
     * described in ListTable. The entry state word is changed outside bucket locks (release, touch,
     * setReusable), so every change is a CAS (volatile) and every read that decides something a
     * volatile load. A new entry is published only through a bucket unlock (release) or an append
     * stack's CAS (volatile), both after its constructor ran, so its plain initial writes are
     * visible wherever it is found; key and value are final fields. Accessors carrying a memory
     * order are named JCTools-style: lv load volatile, la load acquire, lp/sp load/store plain, so
     * store release ("ordered"), cas compare-and-set; where a VarHandle is called directly, its
     * access mode is in the method's name (ListTable.setFilterOpaque, an opaque store).
     *
     * Failure atomicity. A Throwable can surface in any allocation. Every locked section allocates
     * (chain or request array growth) before it changes anything; the counters never allocate, so
     * a lookup that took a reference and a create that changed its chain finish their bookkeeping
     * (listing, counting, the creator's release) before anything that may allocate (flight-recorder
     * events); the request withdrawal after a failed allocation is one shallow allocation-free
     * method, unlock is one load and one store, and the append push is a two-step CAS loop with
     * nothing pending between its steps. Waiters re-check on their own every 100 ms, so a wake-up
     * that failed costs them at most that; a close() that failed part-way is finished by the next
     * close(). A
     * StackOverflowError is not survived: a lock bit taken or a claim made just before the stack ran
     * out can stay behind (the JDK keeps its own locks out of that with the internal
     * ReservedStackAccess annotation, which a library cannot use). An executor that
     * throws gets the background pass run on the calling thread; one that accepts a pass and never
     * runs it is found out when the synchronous threshold is reached, and the pass resubmitted.
     *
     * Background reclaim (kernel c_shrink_work and mb_cache_shrink_worker) is BackgroundReclaim,
     * shared with CompactMbCache: the create's triggers, one task object per hand-over to the
     * executor, passes that go on until the count is below maxEntries, and the argument that at
     * most one chain of them runs whatever the executor does. This class supplies the pass
     * (reclaim) and whether it is closed.
     */

    /** Default {@code maxEntries}, per bucket. */
    private static final int DEFAULT_ENTRIES_PER_BUCKET = 16;

    // ------------------------------------------------------------------------------------------
    // The cache: struct mb_cache
    // ------------------------------------------------------------------------------------------

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            // Classes that an operation would otherwise initialize on its first run, long after the
            // cache was built: the flight-recorder events (at the first pass, chain-cap reclaim or
            // pressure signal), the pass kinds and the background reclaim (which initializes its
            // task's class with it). A Throwable in a static initializer (an
            // OutOfMemoryError on a full heap, just when the pressure pass runs) marks the class
            // unusable for the life of the JVM: every later use throws NoClassDefFoundError, and
            // every cache's reclaim would fail from then on. Initialized here, such a failure fails
            // the loading of MbCache, before any cache exists (ClassInitializationTest).
            lookup.ensureInitialized(ReclaimPassEvent.class);
            lookup.ensureInitialized(ReclaimPassEvent.Kind.class);
            lookup.ensureInitialized(ChainCapEvent.class);
            lookup.ensureInitialized(MemoryPressureEvent.class);
            lookup.ensureInitialized(BackgroundReclaim.class);
            lookup.ensureInitialized(BucketLockWord.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ListTable buckets;
    private final int bucketBits;
    private final long maxEntries;
    private final int chainCap;
    private final CreateStrategy createStrategy;
    private final ListLru lru;
    /** The entry count (kernel {@code c_entry_count}), striped; see {@link EntryCount}. */
    private final EntryCount entryCount;
    /**
     * Where {@code waitUnused} sleeps (kernel {@code wait_var_event} on {@code e_refcnt}). Waits are
     * rare, so a few queues serve the whole cache; see {@link #releaseReference} for the wake-up side.
     */
    private final HashedWaitQueues unusedWaiters = new HashedWaitQueues(2);
    /** The cells of this cache's hot entries, at most {@link HotReferences#MAX_HOT_ENTRIES}; see {@link ListEntry}. */
    final HotCellTable hotCells = new HotCellTable();
    /** What this cache's entries name as their owner. */
    private final EntryOwner entryOwner = new EntryOwner();
    /** {@code null} for a cache built without memory-pressure reclaim. */
    private final MemoryPressureRegistry.Registration pressureRegistration;

    /** Open or closed, and the answers to calls that race {@code close()}. */
    private final Lifecycle lifecycle = new Lifecycle();
    /** The reclaim lock (also the LRU list's), the pass loop, the counters of {@link #stats()}. */
    private final ReclaimBooks books;
    /** The counters of events outside any lock (the books'). */
    private final StripedStatistics statistics;

    /**
     * The create's reclaim triggers and the background passes they start (kernel
     * {@code c_shrink_work}) on the builder's executor; the protocol is {@link BackgroundReclaim}'s.
     */
    private final BackgroundReclaim backgroundReclaim;

    private MbCache(Builder builder) {
        KernelPortOptions options = builder.options;
        // The head words and the wide filters: two longs a bucket before any entry.
        KernelPortOptions.requireHeapFor(1L << options.bucketBits(), 16, "an MbCache");
        this.bucketBits = options.bucketBits();
        this.maxEntries = options.maxEntries(DEFAULT_ENTRIES_PER_BUCKET);
        this.chainCap = options.chainCap(maxEntries);
        this.createStrategy = options.createStrategy();
        this.entryCount = new EntryCount(maxEntries);
        this.books = new ReclaimBooks(entryCount, lifecycle, this);
        this.statistics = books.statistics;
        this.lru = new ListLru(deadEntriesBatch(maxEntries), books.lock);
        this.buckets = new ListTable(bucketBits, options.hashSeed());
        books.sweepWith(new LruSweep());
        this.backgroundReclaim = new BackgroundReclaim(options.executor(), entryCount, maxEntries, MbCache.class.getName(),
                books, lifecycle::isClosed);
        this.pressureRegistration = options.memoryPressureReclaim() ? MemoryPressureRegistry.INSTANCE.register(books) : null;
    }

    /**
     * How many removals of one thread the dead-entry estimate (the purge trigger) may trail: a power
     * of two, at most 64, small enough that all stripes together trail by at most 1/8 of
     * {@code maxEntries} (1 for small caches, where the estimate is then exact).
     */
    private static long deadEntriesBatch(long maxEntries) {
        long perStripe = maxEntries / (8L * StripedStatistics.stripeCount());
        return Math.max(1, Long.highestOneBit(Math.min(64, Math.max(1, perStripe))));
    }

    /**
     * A new cache of {@code 2^bucketBits} buckets with the defaults: {@code maxEntries} 16 per bucket,
     * {@link CreateStrategy#REQUEST_LIST}, background reclaim on the shared daemon thread (kernel
     * {@code mb_cache_create}).
     *
     * @param bucketBits log2 of the number of buckets, in {@code [0, 30]}
     * @return a new, empty cache
     * @throws IllegalArgumentException if {@code bucketBits} is outside {@code [0, 30]}, or its
     *     buckets' arrays alone (16 bytes a bucket) would exceed the JVM's maximum heap
     */
    public static MbCache create(int bucketBits) {
        return builder().bucketBits(bucketBits).build();
    }

    /**
     * A builder with the defaults: 2^10 buckets, 16 entries per bucket, {@code REQUEST_LIST}, a
     * random hash seed, the default chain cap, and background reclaim on the shared daemon thread
     * {@code mbcache-reclaim}.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Configures and builds an {@link MbCache}. Not thread-safe; each {@link #build()} makes a new cache. */
    public static final class Builder extends KernelPortBuilder<Builder> {

        private Builder() {}

        /**
         * log2 of the bucket count (kernel {@code bucket_bits}); default 10, as ext4. The table takes
         * 28 bytes a bucket up front (the head word, the wide key filter and three array references;
         * 40 without compressed references), 28 KiB at the default and 28 GiB or more at 30.
         * {@code build()} throws {@link IllegalArgumentException} where 16 bytes a bucket already
         * exceed the maximum heap, and may throw {@link OutOfMemoryError} where the heap holds that
         * but not the whole table.
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
         * How creates refuse duplicates; default {@link CreateStrategy#REQUEST_LIST}.
         *
         * @param createStrategy the strategy
         * @return this builder
         * @throws NullPointerException if {@code createStrategy} is null
         */
        public Builder createStrategy(CreateStrategy createStrategy) {
            options.createStrategy(createStrategy);
            return this;
        }

        /**
         * A new, empty cache, registered for memory-pressure reclaim until it is closed unless
         * {@link #memoryPressureReclaim(boolean)} was set to {@code false}.
         *
         * @return the cache
         * @throws IllegalArgumentException if the buckets' arrays alone (16 bytes a bucket) would
         *     exceed the JVM's maximum heap ({@link Runtime#maxMemory()})
         */
        public MbCache build() {
            return new MbCache(this);
        }
    }

    /**
     * log2 of the number of buckets.
     *
     * @return the {@code bucketBits} this cache was built with
     */
    public int bucketBits() {
        return bucketBits;
    }

    /**
     * The size at which creates start reclaiming.
     *
     * @return {@code maxEntries}, as given or defaulted
     */
    public long maxEntries() {
        return maxEntries;
    }

    /**
     * The longest a bucket chain grows with entries nobody holds. The default is twice the mean
     * chain length at {@code 2 * maxEntries}, plus 16, at least 32: with the keyed index, chain
     * lengths are Poisson-distributed, and honest keys reach that length with odds below 1e-10 per
     * bucket. Entries reclaimed to keep a chain under it are counted in
     * {@link CacheStats#chainCapReclaims()}.
     *
     * @return the chain cap, as given or defaulted
     */
    public int chainCap() {
        return chainCap;
    }

    /**
     * How this cache refuses duplicates.
     *
     * @return the strategy
     */
    public CreateStrategy createStrategy() {
        return createStrategy;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_create}, with the request list of the 2019 patch when the
     * strategy is {@link CreateStrategy#REQUEST_LIST}: then a refused duplicate allocates nothing,
     * and an accepted create allocates the entry alone. A create that finds its chain at the
     * {@linkplain #chainCap() cap} first reclaims the chain's oldest unheld entries (a referenced
     * one is passed over once, as in a reclaim pass) until the new entry fits.
     */
    @Override
    public boolean create(int key, long value, boolean reusable) {
        ensureOpen();
        backgroundReclaim.beforeCreate();
        int bucket = buckets.bucketOf(key);
        ListEntry entry;
        long capOutcome;
        if (createStrategy == CreateStrategy.REQUEST_LIST) {
            if (!requestPair(bucket, key, value)) {
                statistics.add(ReclaimBooks.DUPLICATES_REFUSED, 1);
                return false;
            }
            entry = allocateRequested(bucket, key, value, reusable);
            capOutcome = hashRequested(bucket, entry);
        } else {
            entry = new ListEntry(entryOwner, key, value, reusable);
            capOutcome = hashUnlessCached(bucket, entry);
            if (capOutcome == ALREADY_CACHED) {
                statistics.add(ReclaimBooks.DUPLICATES_REFUSED, 1);
                return false;
            }
        }
        publishCreated(entry, capOutcome, ReclaimBooks.CREATES);
        return true;
    }

    /**
     * The end of a create whose entry is in its chain, held by the creator: listed and counted
     * first, and only then released, so that only now may anyone free it (kernel fix 5fc4cbd9fde5);
     * then what the chain cap reclaimed is accounted for. Nothing here allocates before the release
     * (the LRU push, the counts and the statistics are allocation-free), so a Throwable cannot leave
     * the entry hashed but unlisted, uncounted or held; the cap's flight-recorder event, which may
     * allocate, comes last.
     */
    private void publishCreated(ListEntry entry, long capOutcome, int counter) {
        int reclaimed = (int) capOutcome;
        lru.append(entry);
        entryCount.add(1L - reclaimed);
        statistics.add(counter, 1);
        try {
            releaseReference(entry); // kernel: mb_cache_entry_put, which wakes waiters too
        } finally {
            if (reclaimed != 0) {
                statistics.add(ReclaimBooks.CHAIN_CAP_RECLAIMS, reclaimed);
                leaveDeadOnLru(reclaimed);
            }
        }
        if (capOutcome != 0) {
            ChainCapEvent.commitIfEnabled(this, entry.key, (int) (capOutcome >>> 32), chainCap, reclaimed);
        }
    }

    /**
     * Steps 1-2 of the request-list create (contract section 5): {@code false} if the pair is cached
     * or requested (a duplicate), else the pair is now requested. A pair that an optimistic read
     * finds in its chain is refused there, without the bucket bit: the create linearizes at that
     * validated read, where the pair was cached. So a refused duplicate writes no line another
     * thread writes, but for its own stripe of the refusal count. A pair the read found absent is
     * not looked for in the chain again under the bit if the bit was taken from the version the
     * read validated: then no critical section ran in between, and the chain is the one read. (The
     * request list, which the read does not see, is always checked.) That spares a new create one
     * scan of its chain, which counts where a flood keeps the chain at its cap. The version repeats
     * after 2^31 critical sections of the bucket: a create stalled across exactly that many, one of
     * which inserted its pair, would insert the pair twice (the contract, section 5, says why that
     * bound is accepted).
     */
    private boolean requestPair(int bucket, int key, long value) {
        long versionWithout = buckets.versionWithout(bucket, key, value);
        if (versionWithout == ListTable.CONTAINED) {
            return false;
        }
        long lockedAt = buckets.lock(bucket);
        try {
            if (buckets.hasRequest(bucket, key, value)
                    || (lockedAt != versionWithout && buckets.indexOf(bucket, key, value) >= 0)) {
                return false;
            }
            buckets.addRequest(bucket, key, value);
        } finally {
            buckets.unlock(bucket);
        }
        return true;
    }

    /** Step 3: the requested pair's entry, allocated outside the bit; the request withdrawn if that fails. */
    private ListEntry allocateRequested(int bucket, int key, long value, boolean reusable) {
        try {
            return new ListEntry(entryOwner, key, value, reusable);
        } catch (Throwable allocationFailure) { // OutOfMemoryError: withdraw the request (kernel -ENOMEM)
            buckets.withdrawRequest(bucket, key, value);
            throw allocationFailure;
        }
    }

    /**
     * Step 4: one critical section swaps the request for the entry, so no twin can slip in between.
     *
     * @return the chain cap's outcome, as {@link #hashNewest}
     */
    private long hashRequested(int bucket, ListEntry entry) {
        buckets.lock(bucket);
        try {
            boolean requested = buckets.removeRequest(bucket, entry.key, entry.value);
            if (!requested || lifecycle.isClosed()) {
                throw Lifecycle.closedWhileCreating(); // close() dropped the request with the chain, or will
            }
            return hashNewest(bucket, entry);
        } finally {
            buckets.unlock(bucket);
        }
    }

    /** What {@link #hashUnlessCached} answers for a pair already in its chain. */
    private static final long ALREADY_CACHED = -1;

    /**
     * Mainline create, after allocating: one critical section checks and hashes.
     *
     * @return {@link #ALREADY_CACHED}, or the chain cap's outcome as {@link #hashNewest}
     */
    private long hashUnlessCached(int bucket, ListEntry entry) {
        buckets.lock(bucket);
        try {
            if (buckets.indexOf(bucket, entry.key, entry.value) >= 0) {
                return ALREADY_CACHED;
            }
            if (lifecycle.isClosed()) {
                throw Lifecycle.closedWhileCreating();
            }
            return hashNewest(bucket, entry);
        } finally {
            buckets.unlock(bucket);
        }
    }

    /**
     * Hashes a new entry at the head of its chain, first reclaiming for the chain cap. Bucket bit
     * held. Allocates (a grown chain) before it changes anything.
     *
     * @return 0 if the chain was below the cap; else the length the create found in the upper 32
     *     bits and the entries the cap reclaimed in the lower (for {@link #publishCreated})
     */
    private long hashNewest(int bucket, ListEntry entry) {
        buckets.ensureRoom(bucket);
        int length = buckets.length(bucket);
        long capOutcome = 0;
        if (length >= chainCap) {
            capOutcome = ((long) length << 32) | buckets.reclaimForRoom(bucket, chainCap);
        }
        buckets.addNewest(bucket, entry);
        return capOutcome;
    }

    /** What {@link #restoreUnlessCached} answers for a chain at the cap: nothing created. */
    private static final long CHAIN_FULL = -2;

    /**
     * A restore's create ({@link #readSnapshot}): as {@link #create}, but it never reclaims: it
     * schedules no background pass (the restore's budget keeps the count within {@code maxEntries},
     * and the shared estimate a create decides on may read high by up to its slack, so a pass
     * would evict pairs cached before the restore), and it never reclaims for the chain cap. A pair
     * whose chain is at the cap is skipped (false, as for a pair already cached),
     * so that a restore evicts no pair, neither one cached before it nor one it created. Whatever the
     * strategy, the entry is allocated first and one critical section checks the chain, the
     * requests of concurrent request-list creates and the cap, and hashes; no request is published,
     * so no concurrent create is refused for a pair this one then skips.
     */
    private boolean createForRestore(int key, long value, boolean reusable) {
        ensureOpen();
        int bucket = buckets.bucketOf(key);
        if (buckets.versionWithout(bucket, key, value) == ListTable.CONTAINED) {
            statistics.add(ReclaimBooks.DUPLICATES_REFUSED, 1);
            return false;
        }
        ListEntry entry = new ListEntry(entryOwner, key, value, reusable);
        long outcome = restoreUnlessCached(bucket, entry);
        if (outcome == ALREADY_CACHED) {
            statistics.add(ReclaimBooks.DUPLICATES_REFUSED, 1);
            return false;
        }
        if (outcome == CHAIN_FULL) {
            return false;
        }
        publishCreated(entry, outcome, ReclaimBooks.RESTORES);
        return true;
    }

    /**
     * {@link #createForRestore}'s critical section.
     *
     * @return {@link #ALREADY_CACHED} (cached or requested), {@link #CHAIN_FULL}, or 0: hashed
     */
    private long restoreUnlessCached(int bucket, ListEntry entry) {
        buckets.lock(bucket);
        try {
            if (buckets.hasRequest(bucket, entry.key, entry.value)
                    || buckets.indexOf(bucket, entry.key, entry.value) >= 0) {
                return ALREADY_CACHED;
            }
            if (lifecycle.isClosed()) {
                throw Lifecycle.closedWhileCreating();
            }
            if (buckets.length(bucket) >= chainCap) {
                return CHAIN_FULL;
            }
            return hashNewest(bucket, entry); // 0: below the cap, nothing reclaimed
        } finally {
            buckets.unlock(bucket);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_find_first}, without the bucket lock in the common case (an
     * optimistic read of the chain, validated against the bucket's version).
     */
    @Override
    public CacheEntry findFirst(int key) {
        ensureOpen();
        return countLookup(find(buckets.bucketOf(key), key, null));
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_find_next}: the walk continues below {@code entry} in its chain,
     * and only then is {@code entry} released, so it cannot be reclaimed from under the walk. The
     * caller's reference to {@code entry} is released whatever happens, the lookup throwing included.
     */
    @Override
    public CacheEntry findNext(CacheEntry entry) {
        ensureOpen();
        ListEntry previous = ownEntry(entry);
        if (!previous.heldByAnyCaller()) {
            throw lifecycle.referenceNotHeld("findNext of an entry the caller does not hold: " + previous);
        }
        ListEntry next;
        try {
            next = find(buckets.bucketOf(previous.key), previous.key, previous);
        } catch (Throwable lookupFailure) {
            try {
                releaseReference(previous);
            } catch (Throwable releaseFailure) {
                lookupFailure.addSuppressed(releaseFailure);
            }
            throw lookupFailure;
        }
        try {
            releaseReference(previous);
        } catch (Throwable releaseFailure) {
            // The caller's reference was not there after all (released concurrently): undo our find.
            if (next != null) {
                releaseReference(next);
            }
            throw releaseFailure;
        }
        return countLookup(next); // counted only now: a findNext that threw returned nothing
    }

    /**
     * The walk of kernel {@code __entry_find}: the newest reusable live entry with {@code key},
     * below {@code after} in the chain if {@code after} is still there, else from the chain head;
     * optimistic first, under the bucket bit if a writer was in the bucket. The caller counts the
     * lookup ({@link #countLookup}) once it returns the answer.
     */
    private ListEntry find(int bucket, int key, ListEntry after) {
        ListEntry found = buckets.tryFindReusable(bucket, key, after);
        if (found == ListTable.RETRY_LOCKED) {
            buckets.lock(bucket);
            try {
                int from = buckets.length(bucket);
                if (after != null) {
                    int at = buckets.indexOfEntry(bucket, after);
                    if (at >= 0) {
                        from = at;
                    }
                }
                found = buckets.findReusable(bucket, key, from);
            } finally {
                buckets.unlock(bucket);
            }
        }
        return found;
    }

    /**
     * Counts a lookup that returns {@code found} as a hit or a miss; returns it. A miss is first
     * checked against a racing close ({@link #missUnlessClosed}), and then the only way this throws.
     */
    private ListEntry countLookup(ListEntry found) {
        ListEntry answer = found != null ? found : missUnlessClosed();
        statistics.add(answer != null ? ReclaimBooks.LOOKUP_HITS : ReclaimBooks.LOOKUP_MISSES, 1);
        return answer;
    }

    /** A lookup's miss: null, or the closed cache's exception if {@code close()} ran meanwhile ({@link Lifecycle}). */
    private ListEntry missUnlessClosed() {
        lifecycle.missUnlessClosed();
        return null;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_get}, optimistic first as {@link #findFirst}.
     */
    @Override
    public CacheEntry get(int key, long value) {
        ensureOpen();
        int bucket = buckets.bucketOf(key);
        ListEntry found = buckets.tryGet(bucket, key, value);
        if (found == ListTable.RETRY_LOCKED) {
            found = null;
            buckets.lock(bucket);
            try {
                int index = buckets.indexOf(bucket, key, value);
                if (index >= 0 && buckets.entryAt(bucket, index).tryAcquire()) {
                    found = buckets.entryAt(bucket, index);
                }
            } finally {
                buckets.unlock(bucket);
            }
        }
        return countLookup(found);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_delete_or_get} (the 2022 fix of the journal-corruption race
     * 65f8b80053a1). The kernel takes a reference as {@code get} does and then claims the entry with a
     * CAS of the count from 2 (the cache and itself) to 0; this claims it with one CAS from 1 (the
     * cache alone) to 0, the same decision without the reference taken and given back. If somebody
     * holds the entry, that CAS fails and the entry is handed over, referenced (if the holder released
     * it in between, the caller finds it unused on its next try, as after the kernel's). Done under
     * the bucket bit, so the claimed entry is unhashed before any other thread can find it dead in its
     * chain.
     */
    @Override
    public CacheEntry deleteOrGet(int key, long value) {
        ensureOpen();
        int bucket = buckets.bucketOf(key);
        buckets.lock(bucket);
        try {
            int index = buckets.indexOf(bucket, key, value);
            if (index < 0) {
                return missUnlessClosed();
            }
            ListEntry entry = buckets.entryAt(bucket, index);
            if (!entry.tryClaim()) {
                // Somebody holds it: hand it over, referenced. (In its chain under the bit, so its
                // count is above zero and the acquire succeeds.)
                return entry.tryAcquire() ? entry : missUnlessClosed();
            }
            buckets.removeAt(bucket, index);
        } finally {
            buckets.unlock(bucket);
        }
        entryCount.add(-1);
        statistics.add(ReclaimBooks.DELETES, 1);
        leaveDeadOnLru(1);
        return null;
    }

    /**
     * Counts entries that left their chain outside a reclaim pass and stay linked on the LRU list,
     * and unlinks them all once they outnumber the live ones, so that churn without reclaim cannot
     * grow the list without bound. Skipped if a pass holds the list: the next removal tries again.
     */
    private void leaveDeadOnLru(long count) {
        lru.addDeadEntries(count);
        if (lru.deadEntriesEstimate() > Math.max(BackgroundReclaim.SYNC_SHRINK_BATCH, entryCount.estimate()) && lru.lock.tryLock()) {
            try {
                lru.purgeDead();
            } finally {
                lru.lock.unlock();
            }
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_wait_unused}.
     */
    @Override
    public void waitUnused(CacheEntry entry) throws InterruptedException {
        ensureOpen();
        awaitUnused(ownEntry(entry), Long.MAX_VALUE);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_wait_unused}, with a time limit.
     */
    @Override
    public boolean waitUnused(CacheEntry entry, long timeout, TimeUnit unit) throws InterruptedException {
        ensureOpen();
        ListEntry own = ownEntry(entry);
        Objects.requireNonNull(unit, "unit");
        long nanos = unit.toNanos(timeout);
        return awaitUnused(own, nanos == Long.MAX_VALUE ? Long.MAX_VALUE - 1 : nanos);
    }

    /**
     * Sleeps until the entry's count is at most 2, or the cache closes (then an
     * {@link IllegalStateException}); {@code false} if {@code nanos} ran out first
     * ({@code Long.MAX_VALUE}: no limit). An interrupted thread gets {@link InterruptedException}
     * at once, even if the entry is already unused.
     *
     * <p>No lost wake-up: the condition is evaluated once without the queue's lock (a shortcut for
     * an entry already unused; it may set the bit too) and then again after the queue has counted
     * this waiter, and that second evaluation is what the argument rests on: it sets the entry's
     * {@link ListEntry#WAITERS} bit in the same CAS loop that re-reads the count. A release whose
     * CAS comes after that sees the bit and wakes the queue; one that comes before left a count the
     * condition sees (the handshake is spelled out on {@link HashedWaitQueues}).
     */
    private boolean awaitUnused(ListEntry entry, long nanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        boolean unused = unusedWaiters.await(entry, () -> lifecycle.isClosed() || !entry.markWaitingUnlessUnused(), nanos);
        ensureOpen();
        return unused;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_touch}.
     */
    @Override
    public void touch(CacheEntry entry) {
        ensureOpen();
        ownEntry(entry).setFlag(ListEntry.REFERENCED, true);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_put}.
     */
    @Override
    public void release(CacheEntry entry) {
        ensureOpen();
        releaseReference(ownEntry(entry));
    }

    /**
     * Drops a caller's reference (kernel {@code mb_cache_entry_put}) and, if that left only the cache
     * and one holder while somebody waits, wakes the waiters (kernel {@code wake_up_var}). The
     * {@link ListEntry#WAITERS} bit, read from the same CAS that dropped the count, keeps the wait queues
     * off the common path: a release nobody waits for touches nothing but the entry.
     */
    private void releaseReference(ListEntry entry) {
        if (entry.releaseReference()) {
            entry.setFlag(ListEntry.WAITERS, false);
            // If this throws (the queue lock's node allocation), the reference is dropped all the
            // same, and the waiters find the entry unused at their next re-check (HashedWaitQueues),
            // which also sets the bit again for whoever still waits.
            unusedWaiters.wake(entry);
        }
    }

    /**
     * This cache's side of its entries ({@link ListEntry.Owner}): the hot cells, the hot-mode vote
     * ({@link ContentionVote}, by entry identity), the lifecycle's answers and the release that an
     * entry's {@code close()} calls. A separate object, so that the entry depends on it and not on
     * this façade, and the façade shows none of it.
     */
    private final class EntryOwner implements ListEntry.Owner {
        private final ContentionVote contentionVote = new ContentionVote();
        /** Per slot of the vote, the entry it favours (racy on purpose: see ContentionVote). */
        private final ListEntry[] contendedEntries = new ListEntry[ContentionVote.SLOTS];

        @Override
        public HotCellTable hotCells() {
            return hotCells;
        }

        @Override
        public boolean noteContention(ListEntry entry) {
            int slot = ContentionVote.slotOf(entry.key);
            int verdict = contentionVote.tally(slot, contendedEntries[slot] == entry);
            if (verdict == ContentionVote.TAKE_OVER) {
                contendedEntries[slot] = entry;
            }
            return verdict == ContentionVote.SWITCH;
        }

        @Override
        public IllegalStateException referenceNotHeld(String misuse) {
            return lifecycle.referenceNotHeld(misuse);
        }

        @Override
        public void ensureOpen() {
            lifecycle.ensureOpen();
        }

        @Override
        public void release(ListEntry entry) {
            MbCache.this.release(entry);
        }

        @Override
        public void releaseReference(ListEntry entry) {
            MbCache.this.releaseReference(entry);
        }
    }

    /** What this cache's entries name as their owner; for tests that build entries of it directly. */
    ListEntry.Owner entryOwner() {
        return entryOwner;
    }

    /** How many entries are in hot mode now. */
    int hotEntries() {
        return hotCells.size();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_count} (the shrinker's {@code count_objects}). The count is kept in
     * per-thread cells; this reads them all twice, until both reads agree, so the answer is the
     * exact count at one moment during the call.
     */
    @Override
    public long size() {
        ensureOpen();
        return Math.max(0, entryCount.snapshot());
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_scan} (the shrinker's {@code scan_objects}).
     */
    @Override
    public long shrink(long nrToScan) {
        ensureOpen();
        if (nrToScan < 0) {
            throw new IllegalArgumentException("nrToScan must not be negative, was " + nrToScan);
        }
        return books.reclaim(nrToScan, ReclaimPassEvent.Kind.REQUESTED);
    }

    /**
     * The list layout's step of a reclaim pass (kernel {@code mb_cache_shrink}'s loop body), run by
     * {@link ReclaimBooks} under the LRU lock, which is the reclaim lock: from the LRU head, a
     * referenced or held entry loses its referenced flag and moves to the tail; any other is claimed
     * (count 1 to 0) and unhashed. Entries already removed (by {@code deleteOrGet} or the chain cap)
     * are dropped without counting. The pass acts on the list as it stood when it started: the
     * append stacks are drained once, and the creates it overlaps stay on the stacks, behind the
     * entries it moves to the tail.
     */
    private final class LruSweep implements ReclaimBooks.Sweep {
        private long deadDropped;

        @Override
        public long beginPass() {
            deadDropped = 0;
            lru.drainAppendStacks();
            return lru.length();
        }

        @Override
        public int step() {
            ListEntry entry = lru.pollOldest();
            if (entry == null) {
                return END;
            }
            int state = entry.lvState();
            if (ListEntry.count(state) == 0) {
                deadDropped++;
                return EMPTY;
            }
            if ((state & ListEntry.REFERENCED) == 0 && ListEntry.count(state) == 1 && claimForReclaim(entry)) {
                return FREED;
            }
            lru.addNewest(entry);
            if ((state & ListEntry.REFERENCED) != 0) {
                entry.setFlag(ListEntry.REFERENCED, false);
                return SECOND_CHANCE;
            }
            return KEPT;
        }

        @Override
        public void endPass() {
            lru.forgetDeadEntries(deadDropped);
        }
    }

    /** Claims an unused entry (count 1 to 0) and unhashes it, under its bucket bit. LRU lock held. */
    private boolean claimForReclaim(ListEntry entry) {
        int bucket = buckets.bucketOf(entry.key);
        buckets.lock(bucket);
        try {
            if (!entry.tryClaim()) {
                return false;
            }
            buckets.removeAt(bucket, buckets.indexOfEntry(bucket, entry));
            return true;
        } finally {
            buckets.unlock(bucket);
        }
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

    /**
     * {@inheritDoc}
     *
     * <p>Sums the striped counters; the reclaim counters are read under the LRU lock. Touches no
     * bucket.
     */
    @Override
    public CacheStats stats() {
        ensureOpen();
        return books.stats();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_destroy}, plus leaving the memory-pressure registry. Entries callers
     * still hold are dropped too; releasing them afterwards is an {@link IllegalStateException}. The
     * cache counts as closed from the first call on; a close that threw part-way (an
     * {@link OutOfMemoryError} waking the waiters) is finished by the next call, and a close racing
     * another returns only once the teardown has run.
     */
    @Override
    public void close() {
        if (!lifecycle.beginClose()) {
            return;
        }
        // Every step below may be done twice (a second close() racing this one, or retrying after
        // a Throwable here): each is idempotent, and tornDown is set only when all have run.
        if (pressureRegistration != null) {
            MemoryPressureRegistry.INSTANCE.unregister(pressureRegistration);
        }
        lru.lock.lock();
        try {
            for (int bucket = 0; bucket < buckets.count(); bucket++) {
                buckets.lock(bucket);
                try {
                    buckets.killAll(bucket);
                } finally {
                    buckets.unlock(bucket);
                }
            }
            lru.clear();
            entryCount.reset();
        } finally {
            lru.lock.unlock();
        }
        unusedWaiters.wakeAll();
        lifecycle.tornDown();
    }

    /** Entries of the LRU list a snapshot walk looks at per hold of the LRU lock. */
    static final int SNAPSHOT_CHUNK = 256;

    /** One snapshot walk at a time: the walk's cursor lives in the LRU list ({@link ListLru}). */
    private final ReentrantLock snapshotLock = new ReentrantLock();

    /**
     * {@inheritDoc}
     *
     * <p>The order is the LRU list's, the one reclaim passes walk: oldest first. The walk holds the
     * LRU lock for at most 256 entries at a time, copying their key, value and
     * flags (a volatile read of the state word: no reference is taken), and writes the copies with
     * the lock let go. Lookups, creates and deletes never take that lock; a reclaim pass does (and so
     * a create that runs one synchronously at {@code 2 * maxEntries}), and waits for at most one such
     * chunk. A pass that runs between two chunks moves the walk's cursor with the entries it moves,
     * so that every entry cached throughout is copied once (the argument is on
     * {@code ListLru.snapshotChunk}); an entry a pass gives a second chance meanwhile is written where
     * the walk meets it, at its new place. Dead entries (removed, still linked) are skipped. The
     * referenced flag is written (record flag 2) but not restored. Snapshots of one cache run one
     * at a time; one started from the stream of another of the same cache, on the same thread, is
     * an {@link IllegalStateException}.
     *
     * <p>A call that finds another snapshot of this cache running waits for it, and stops waiting
     * when the cache is closed ({@link IllegalStateException}, within 50 ms) or the thread is
     * interrupted: then it throws {@link InterruptedIOException} with the thread's interrupt status
     * set again, having written nothing.
     */
    @Override
    public long writeSnapshot(OutputStream out) throws IOException {
        Objects.requireNonNull(out, "out");
        ensureOpen();
        if (snapshotLock.isHeldByCurrentThread()) {
            // From the stream of this cache's own snapshot: a nested walk would move the outer one's cursor.
            throw new IllegalStateException("writeSnapshot called from within a snapshot of the same cache");
        }
        lockSnapshots();
        try {
            lru.lock.lock();
            try {
                ensureOpen();
                lru.startSnapshot();
            } finally {
                lru.lock.unlock();
            }
            try {
                return Snapshots.write(out, this::nextSnapshotChunk);
            } finally {
                lru.lock.lock();
                try {
                    lru.endSnapshot();
                } finally {
                    lru.lock.unlock();
                }
            }
        } finally {
            snapshotLock.unlock();
        }
    }

    /** How often a snapshot waiting for another one looks whether the cache was closed. */
    static final long SNAPSHOT_WAIT_POLL_MS = 50;

    /**
     * Takes {@link #snapshotLock}: at once if it is free, else waiting in slices of
     * {@value #SNAPSHOT_WAIT_POLL_MS} ms, each ended early by an interrupt, between which a
     * closed cache ends the wait. Holds the lock on return only.
     */
    private void lockSnapshots() throws InterruptedIOException {
        if (snapshotLock.tryLock()) {
            return;
        }
        try {
            while (!snapshotLock.tryLock(SNAPSHOT_WAIT_POLL_MS, TimeUnit.MILLISECONDS)) {
                ensureOpen();
            }
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            InterruptedIOException thrown =
                    new InterruptedIOException("interrupted while waiting for another snapshot of this cache");
            thrown.initCause(interrupted);
            throw thrown;
        }
    }

    /** The snapshot walk's next pairs; 0 once it ran off the tail. */
    private int nextSnapshotChunk(int[] keys, long[] values, byte[] flags, int from, int max) {
        for (;;) {
            lru.lock.lock();
            try {
                ensureOpen(); // close() cleared the list: never end a snapshot short as if complete
                int copied = lru.snapshotChunk(keys, values, flags, from, Math.min(max, SNAPSHOT_CHUNK), SNAPSHOT_CHUNK);
                if (copied != 0 || lru.snapshotDone()) {
                    return copied;
                }
            } finally {
                lru.lock.unlock();
            }
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>The budget is {@link #maxEntries()} minus {@link #size()}; the pairs are created as by
     * {@link #create}, on the calling thread, so they land on the LRU list in the snapshot's order,
     * except that a restore never reclaims for the {@linkplain #chainCap() chain cap}: a pair whose
     * chain is at the cap is skipped and not counted.
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
     * Entries linked on the LRU list and its append stacks, including removed ones not yet purged:
     * what the list costs in memory. Package-private, for tests of the lazy unlinking.
     */
    long linkedEntries() {
        lru.lock.lock();
        try {
            lru.drainAppendStacks();
            return lru.length();
        } finally {
            lru.lock.unlock();
        }
    }

    /** The length of {@code key}'s bucket chain, live entries only. Package-private, for tests. */
    int chainLength(int key) {
        int bucket = buckets.bucketOf(key);
        buckets.lock(bucket);
        try {
            return buckets.length(bucket);
        } finally {
            buckets.unlock(bucket);
        }
    }

    /** The bucket of {@code key} under this cache's keyed index. Package-private, for tests. */
    int bucketOf(int key) {
        return buckets.bucketOf(key);
    }

    private void ensureOpen() {
        if (lifecycle.isClosed()) {
            throw new IllegalStateException("cache is closed");
        }
    }

    /** The argument as an entry of this cache, or the contract's exception. */
    private ListEntry ownEntry(CacheEntry entry) {
        Objects.requireNonNull(entry, "entry");
        if (entry instanceof ListEntry && ((ListEntry) entry).owner == entryOwner) {
            return (ListEntry) entry;
        }
        throw new IllegalArgumentException("entry belongs to another cache: " + entry);
    }

    @Override
    public String toString() {
        return "MbCache[bucketBits=" + bucketBits + ", maxEntries=" + maxEntries + ", chainCap=" + chainCap
                + ", createStrategy=" + createStrategy + (lifecycle.isClosed() ? ", closed" : ", size=" + Math.max(0, entryCount.snapshot())) + "]";
    }
}
