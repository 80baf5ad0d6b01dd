package org.mbcache;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.mbcache.internal.HashedWaitQueues;
import org.mbcache.internal.Lifecycle;
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
public final class MbCache extends KernelPortCache {

    /*
     * Implementation notes.
     *
     * The order is mbcache.c's own, data structures first, each in a file of its own: ListEntry (an
     * entry, 40 bytes, and the reference-counting protocol on its state word: count and flags in one
     * word, so every flag update is atomic with the count; kernel fix a44e84a9b776 was a lost flag
     * update), ListTable, ListLru, EntryCount; then the functions that use them, each naming the
     * kernel function it ports.
     *
     * ListTable holds the chains (fingerprints beside entries, the request list, the key filters);
     * every change of a chain holds the bucket's bit (BucketLockWord), and lookups read chains
     * optimistically, validated against the version, with the argument in BucketLockWord.
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
     * ListLru holds every entry in creation order for the second-chance scan (ListSweep), with
     * lock-free append stacks that keep creates off its lock.
     *
     * Counting. The entry count is EntryCount's (striped; size() an exact snapshot; the argument is
     * there); lookups never touch it. The dead entries still linked on the LRU list are a
     * StripedCounter; hits, misses, refusals, cap reclaims, creates, deletes and restores are the
     * ReclaimBooks' StripedStatistics, which never allocate when they count.
     *
     * Which cache lines each operation writes that another thread may also write (the scaling
     * argument) is the table in docs/design.md, "The cache-line table".
     *
     * What a hit still shares: the entry's state word, written by the acquire and the release CAS,
     * so with uniform keys the entry's line was last written by another core about as often as not.
     * Holding entries outside the count (hazard-pointer hold slots) was weighed and not built: a
     * thread may release a reference another thread took, so release would have to find some other
     * thread's slot; slots per thread do not survive virtual threads, so they would be striped and
     * every claim of a reclaim pass would scan them all; the fence after storing a slot is a locked
     * instruction on x86, the price of the CAS it replaces, so an uncontended hit gains nothing; and
     * every window the JCStress races cover would change. Any one locked instruction makes a hit
     * wait for the loads before it, so consecutive hits overlap their cache misses far less than a
     * plain map's lookups do; the benchmark module's counted floor (Baseline.findFirstHitCounted)
     * measures what that costs (docs/benchmarks.md).
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
    private final CreateStrategy createStrategy;
    private final ListLru lru;
    /**
     * Where {@code waitUnused} sleeps (kernel {@code wait_var_event} on {@code e_refcnt}). Waits are
     * rare, so a few queues serve the whole cache; see {@link #releaseReference} for the wake-up side.
     */
    private final HashedWaitQueues unusedWaiters = new HashedWaitQueues(2);
    /** The cells of this cache's hot entries, at most {@link HotReferences#MAX_HOT_ENTRIES}; see {@link ListEntry}. */
    final HotCellTable hotCells = new HotCellTable();
    /** The snapshot walk over the LRU list, one at a time. */
    private final ListSnapshotWalk snapshotWalk;
    /** What this cache's entries name as their owner. */
    private final ListEntryOwner entryOwner;

    private MbCache(Builder builder) {
        this(checkedHeap(builder.options), builder.options.maxEntries(DEFAULT_ENTRIES_PER_BUCKET));
    }

    private MbCache(KernelPortOptions options, long maxEntries) {
        super(options, options.bucketBits(), maxEntries, options.chainCap(maxEntries));
        this.createStrategy = options.createStrategy();
        this.entryOwner = new ListEntryOwner(lifecycle, hotCells, unusedWaiters);
        this.lru = new ListLru(deadEntriesBatch(maxEntries), books.lock);
        this.buckets = new ListTable(bucketBits, options.hashSeed());
        books.sweepWith(new ListSweep(lru, buckets));
        this.snapshotWalk = new ListSnapshotWalk(lru, lifecycle);
    }

    /**
     * {@code options}, checked before anything is built: the head words and the wide filters (two
     * longs a bucket before any entry) fit the heap.
     */
    private static KernelPortOptions checkedHeap(KernelPortOptions options) {
        KernelPortOptions.requireHeapFor(1L << options.bucketBits(), 16, "an MbCache");
        return options;
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

    /** {@inheritDoc} */
    @Override
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
            if (!ListWalk.requestPair(buckets, bucket, key, value)) {
                statistics.add(ReclaimBooks.DUPLICATES_REFUSED, 1);
                return false;
            }
            entry = allocateRequested(bucket, key, value, reusable);
            capOutcome = ListWalk.hashRequested(buckets, bucket, entry, chainCap, lifecycle);
        } else {
            entry = new ListEntry(entryOwner, key, value, reusable);
            capOutcome = ListWalk.hashUnlessCached(buckets, bucket, entry, chainCap, lifecycle);
            if (capOutcome == ListWalk.ALREADY_CACHED) {
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
    @Override
    boolean createForRestore(int key, long value, boolean reusable) {
        ensureOpen();
        int bucket = buckets.bucketOf(key);
        if (buckets.versionWithout(bucket, key, value) == ListTable.CONTAINED) {
            statistics.add(ReclaimBooks.DUPLICATES_REFUSED, 1);
            return false;
        }
        ListEntry entry = new ListEntry(entryOwner, key, value, reusable);
        long outcome = ListWalk.restoreUnlessCached(buckets, bucket, entry, chainCap, lifecycle);
        if (outcome == ListWalk.ALREADY_CACHED) {
            statistics.add(ReclaimBooks.DUPLICATES_REFUSED, 1);
            return false;
        }
        if (outcome == ListWalk.CHAIN_FULL) {
            return false;
        }
        publishCreated(entry, outcome, ReclaimBooks.RESTORES);
        return true;
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
        return countLookup(ListWalk.find(buckets, buckets.bucketOf(key), key, null));
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
            next = ListWalk.find(buckets, buckets.bucketOf(previous.key), previous.key, previous);
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
        return countLookup(ListWalk.get(buckets, buckets.bucketOf(key), key, value));
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
        ListEntry outcome = ListWalk.deleteOrAcquire(buckets, buckets.bucketOf(key), key, value, lifecycle);
        if (outcome != ListTable.DELETED) {
            return outcome;
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
        return awaitUnused(own, timeoutNanos(timeout, unit));
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

    /** Drops a caller's reference and wakes waiters if that left the entry unused ({@link ListEntryOwner#releaseReference}). */
    private void releaseReference(ListEntry entry) {
        entryOwner.releaseReference(entry);
    }

    /** What this cache's entries name as their owner; for tests that build entries of it directly. */
    ListEntry.Owner entryOwner() {
        return entryOwner;
    }

    /** How many entries are in hot mode now. */
    int hotEntries() {
        return hotCells.size();
    }

    /** Kills every entry, empties every chain and the LRU list; reclaim lock held. */
    @Override
    void killAllEntries() {
        for (int bucket = 0; bucket < buckets.count(); bucket++) {
            buckets.lock(bucket);
            try {
                buckets.killAll(bucket);
            } finally {
                buckets.unlock(bucket);
            }
        }
        lru.clear();
    }

    @Override
    void wakeAllWaiters() {
        unusedWaiters.wakeAll();
    }

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
        return snapshotWalk.write(out);
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
        return ListWalk.chainLength(buckets, buckets.bucketOf(key));
    }

    /** The bucket of {@code key} under this cache's keyed index. Package-private, for tests. */
    int bucketOf(int key) {
        return buckets.bucketOf(key);
    }

    /** The argument as an entry of this cache, or the contract's exception. */
    private ListEntry ownEntry(CacheEntry entry) {
        Objects.requireNonNull(entry, "entry");
        if (entry instanceof ListEntry && ((ListEntry) entry).owner == entryOwner) {
            return (ListEntry) entry;
        }
        throw new IllegalArgumentException("entry belongs to another cache: " + entry);
    }
}
