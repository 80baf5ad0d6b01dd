package org.mbcache;

import java.io.IOException;
import java.io.InputStream;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.mbcache.internal.Lifecycle;
import org.mbcache.internal.RestoreBudget;
import org.mbcache.internal.StripedStatistics;

/**
 * The kernel port of {@code fs/mbcache.c}, whichever layout holds its entries: what
 * {@link MbCache} (an object per entry) and {@link CompactMbCache} (primitive pages) share beyond
 * {@link DedupCache}: the options they were built with, and the same answers to {@code size},
 * {@code shrink}, {@code stats}, {@code close} and {@code readSnapshot}. No other class extends it.
 */
// Implementation notes. The shared core, per cache: the lifecycle (open or closed, and the answers
// to calls that race close()); the entry count (kernel c_entry_count), striped; the reclaim books
// (the reclaim lock, the pass loop and its counters, stats(), and the memory-pressure shrinker this
// cache registers while it is open); background reclaim (the create's reclaim triggers and the
// passes they start, kernel c_shrink_work, on the builder's executor). A layout supplies its table,
// its ReclaimBooks.Sweep (given to the books while it is built), the kill of every entry at
// close(), and the creation of one restored pair.
//
// Construction: this constructor runs first and builds the core; the layout's constructor then
// builds its table and calls ReclaimBooks.sweepWith. A memory-pressure notification can reach the
// books in between (they are registered here): the books find no sweep and reclaim nothing (the
// entry count is zero then anyway). The sweep is set and read under the books' lock, which orders
// the layout's construction before any pass that uses it.
public abstract sealed class KernelPortCache implements DedupCache permits MbCache, CompactMbCache {

    /** Open or closed, and the answers to calls that race {@code close()}. */
    final Lifecycle lifecycle = new Lifecycle();
    /** Keeps this cache's restores within its bound together: they create one at a time ({@link #readSnapshot}). */
    private final RestoreBudget restoreBudget = new RestoreBudget();
    /** log2 of the bucket count, rounded up where the count is not a power of two. */
    final int bucketBits;
    /** The size at which creates start reclaiming (kernel {@code c_max_entries}). */
    final long maxEntries;
    /** The longest a chain grows with entries nobody holds. */
    final int chainCap;
    /** The entry count, striped; see {@link EntryCount}. */
    final EntryCount entryCount;
    /** The reclaim lock, the pass loop, the counters of {@link #stats()}. */
    final ReclaimBooks books;
    /** The counters of events outside any lock (the books'). */
    final StripedStatistics statistics;
    /** The create's reclaim triggers and the background passes they start: {@link BackgroundReclaim}. */
    final BackgroundReclaim backgroundReclaim;
    /** {@code null} for a cache built without memory-pressure reclaim. */
    private final MemoryPressureRegistry.Registration pressureRegistration;

    /**
     * Builds the shared core of a cache with these options and sizes.
     *
     * @param options the builder's options (executor, memory-pressure reclaim)
     * @param bucketBits log2 of the bucket count, as {@link #bucketBits()} reports it
     * @param maxEntries the reclaim bound, as given or defaulted by the layout
     * @param chainCap the chain cap, as given or defaulted by the layout
     */
    KernelPortCache(KernelPortOptions options, int bucketBits, long maxEntries, int chainCap) {
        this.bucketBits = bucketBits;
        this.maxEntries = maxEntries;
        this.chainCap = chainCap;
        this.entryCount = new EntryCount(maxEntries);
        this.books = new ReclaimBooks(entryCount, lifecycle, this);
        this.statistics = books.statistics;
        this.backgroundReclaim = new BackgroundReclaim(options.executor(), entryCount, maxEntries, getClass().getName(),
                books, lifecycle::isClosed);
        this.pressureRegistration = options.memoryPressureReclaim() ? MemoryPressureRegistry.INSTANCE.register(books) : null;
    }

    // ---------------------------------------------------------------------------------------------
    // What a layout supplies
    // ---------------------------------------------------------------------------------------------

    /**
     * Kills every entry and empties every chain (kernel {@code mb_cache_destroy}'s loop), with the
     * books' lock held, for {@link #close()}: afterwards no entry is in a chain and every count the
     * cache held is given up. Idempotent: a close retried after a {@link Throwable} runs it again.
     */
    abstract void killAllEntries();

    /** Wakes every thread waiting in {@code waitUnused}, for {@link #close()}; idempotent. */
    abstract void wakeAllWaiters();

    /**
     * Creates one pair read from a snapshot, as {@code create} does, but never reclaiming for the
     * chain cap (a pair whose chain is at the cap is skipped); counts it as a restore.
     *
     * @return whether the pair was created
     */
    abstract boolean createForRestore(int key, long value, boolean reusable);

    // ---------------------------------------------------------------------------------------------
    // Options
    // ---------------------------------------------------------------------------------------------

    /**
     * log2 of the number of buckets.
     *
     * @return the {@code bucketBits} this cache was built with; for a {@link CompactMbCache} whose
     *     bucket count was sized from its bound (not a power of two), the log2 rounded up
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
    public abstract CreateStrategy createStrategy();

    // ---------------------------------------------------------------------------------------------
    // Counting and reclaim
    // ---------------------------------------------------------------------------------------------

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
     * {@inheritDoc}
     *
     * <p>Sums the striped counters; the reclaim counters are read under the reclaim lock. Touches no
     * bucket.
     */
    @Override
    public CacheStats stats() {
        ensureOpen();
        return books.stats();
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

    // ---------------------------------------------------------------------------------------------
    // Lifecycle and snapshots
    // ---------------------------------------------------------------------------------------------

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
        books.lock.lock();
        try {
            killAllEntries();
            entryCount.reset();
        } finally {
            books.lock.unlock();
        }
        wakeAllWaiters();
        lifecycle.tornDown();
    }

    /**
     * {@inheritDoc}
     *
     * <p>The budget is {@link #maxEntries()} minus {@link #size()}, read before the stream and again,
     * once the restores of this cache before it have created their pairs, before its own (the smaller
     * counts); the pairs are created as by
     * {@code create}, on the calling thread, in the snapshot's order (so they take their places in
     * the reclaim order in that order), except that a restore never reclaims for the
     * {@linkplain #chainCap() chain cap}: a pair whose chain is at the cap is skipped and not
     * counted.
     */
    @Override
    public long readSnapshot(InputStream in) throws IOException {
        Objects.requireNonNull(in, "in");
        ensureOpen();
        long created = restoreBudget.read(in, maxEntries, this::size, this::createForRestore);
        ensureOpen(); // closed during the read: a restore that created nothing still reports it
        return created;
    }

    /** The contract's exception once the cache is closed ({@link Lifecycle#ensureOpen()}). */
    final void ensureOpen() {
        lifecycle.ensureOpen();
    }

    /**
     * A {@code waitUnused} time-out in nanoseconds, below {@link Long#MAX_VALUE}, which the waits
     * reserve for "no time-out".
     *
     * @throws NullPointerException if {@code unit} is null
     */
    static long timeoutNanos(long timeout, TimeUnit unit) {
        long nanos = Objects.requireNonNull(unit, "unit").toNanos(timeout);
        return nanos == Long.MAX_VALUE ? Long.MAX_VALUE - 1 : nanos;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[bucketBits=" + bucketBits + ", maxEntries=" + maxEntries + ", chainCap="
                + chainCap + ", createStrategy=" + createStrategy()
                + (lifecycle.isClosed() ? ", closed" : ", size=" + Math.max(0, entryCount.snapshot())) + "]";
    }
}
