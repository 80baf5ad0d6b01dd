package org.mbcache.caffeine;

import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.RemovalCause;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.mbcache.CacheEntry;
import org.mbcache.CacheStats;
import org.mbcache.DedupCache;
import org.mbcache.internal.HashedWaitQueues;
import org.mbcache.internal.Lifecycle;
import org.mbcache.internal.RestoreBudget;
import org.mbcache.internal.Saturating;
import org.mbcache.internal.Snapshots;
import org.mbcache.internal.StripedStatistics;

/**
 * A {@link DedupCache} on top of a bounded Caffeine cache, with the full contract of
 * {@link DedupCache}: the comparison baseline for the kernel port {@link org.mbcache.MbCache}.
 *
 * <p><b>Bounds.</b> Caffeine evicts unheld entries to keep about {@code maxEntries} of them
 * (Window TinyLFU instead of the kernel's second-chance LRU); an entry somebody holds is never
 * evicted and does not count against the bound. Unlike the kernel's list, TinyLFU's admission may
 * evict the pair a create has just inserted, in the maintenance that create sets off: at the bound,
 * a {@link #get} right after a successful {@link #create} can miss. That costs a later duplicate its
 * match, nothing else. Caffeine evicts a key's unheld values as one group, weighed by their number,
 * so an eviction can take more pairs than it needed: up to the whole group, which is at most
 * {@linkplain Builder#chainCap(int) chainCap} values, or more where values were held at the key's
 * last create (the cap counts unheld values only, below). A key whose values were all held as
 * they were created, more than {@code maxEntries} of them, loses them all at the first eviction
 * after they are released. Caffeine also applies a group's pins and unpins (weight changes) in the
 * order its write buffer replays them, which need not be the order they happened in, so an eviction
 * that runs above the bound can take one group too many. Only unheld pairs go early; a held one
 * never does. Seen from one thread, {@link #size()} never exceeds
 * {@code 2 * maxEntries} (saturated at {@link Long#MAX_VALUE}) plus the entries that are held and
 * the creates in flight on other threads: a create that finds the cache that large reclaims on its
 * own thread. One key keeps at most {@linkplain Builder#chainCap(int) chainCap} values that nobody
 * holds (64 unless set): a create beyond that first reclaims the key's oldest unheld value (a
 * {@linkplain #touch touched} one is passed over once, as in the kernel port), so the
 * work of an operation never grows with the number of values a key has had, whoever chooses the
 * keys.
 *
 * <p><b>Reclaim.</b> Caffeine's maintenance (eviction) and this backend's own batch work run on the
 * {@linkplain Builder#executor(Executor) executor} ({@link ForkJoinPool#commonPool()} unless set), the
 * analogue of the kernel's background pass. An executor that throws from {@code execute} gets the
 * work run on the calling thread instead; one that accepts a task and never runs it is worked
 * around by the callers. {@link #shrink} walks Caffeine's eviction order coldest first, giving
 * {@linkplain #touch touched} and held entries a second chance. Not registered with
 * {@link org.mbcache.MbCache}'s memory-pressure registry: wire a heap-pressure signal to
 * {@link #shrink} yourself.
 *
 * <p><b>Invariant breach.</b> Should Caffeine ever evict an entry that somebody holds (it cannot
 * while it honours zero weights, see the implementation notes), the cache records an
 * {@link AssertionError}, and every later call but {@link #close()} rethrows it: the breach is
 * never only logged.
 *
 * <p>Statistics are counted by this class ({@code recordStats()} is not enabled in Caffeine); a
 * background pass is a task run on the executor that starts with {@code size() >= maxEntries}.
 */
public final class CaffeineDedupCache implements DedupCache {

    /*
     * Implementation notes. The design is spread over the classes that carry it out, each with its
     * own notes: PinnedEntry (how a held entry is kept out of Caffeine's eviction: the pin
     * protocol), KeyGroups (the layout, and every compute on a key's group, the chain cap
     * included), SiblingTracker (when the synchronous pass may skip its walk for siblings),
     * UnpinStack (the lazy unpinning) and FallbackExecutor (executors that throw or drop work, and
     * how the synchronous pass recovers from them). What a call does when it races close() is
     * Lifecycle's, for all three backends.
     *
     * Lazy unpinning. A release leaves its entry pinned and queues it on the UnpinStack, drained
     * in batches of maxEntries / 16 (see there for when): at or below the bound a read-mostly cache
     * keeps its entries pinned, and its lookups are lock-free CASes.
     *
     * shrink. Maps the kernel's pass onto Caffeine's coldest order: groups coldest first and,
     * within a group, entries oldest first; each entry counts as scanned. A referenced entry has its
     * flag cleared and gets a second chance, a held one is skipped (flag cleared too), any other is
     * freed by a CAS of its count from 1 to 0 inside a compute. A survivor's group gets an access
     * recorded with Caffeine instead of the kernel's move to the list tail. Walks repeat while the
     * last one reached the end of Caffeine's order, freed or cleared something, and the pass has
     * scanned fewer than twice the entries present when it started: every entry can use its second
     * chance once, and neither a steady create load nor a thread that touches entries every turn
     * can keep shrink(Long.MAX_VALUE) from returning.
     *
     * Statistics. Caffeine's recordStats() would time every compute with two clock reads, count
     * the pin and unpin computes as loads, and count groups, not entries: everything is counted
     * here, in a StripedStatistics (allocation-free, see its field); evictions come from the
     * eviction listener.
     */

    /** maxEntries of {@link #builder()} when none is given: ext4's (1024 buckets, 16 per bucket). */
    static final long DEFAULT_MAX_ENTRIES = 16_384;

    /** chainCap of {@link #builder()} when none is given. */
    static final int DEFAULT_CHAIN_CAP = 64;

    private final long maxEntries;
    /** {@code 2 * maxEntries}, saturated: a create that sees this many entries runs maintenance itself. */
    private final long synchronousReclaimThreshold;
    /** The most values of one key that nobody holds. */
    private final int chainCap;
    /** Open, closed, or broken by an invariant breach (see Lifecycle). */
    private final Lifecycle lifecycle = new Lifecycle();
    /** Keeps this cache's restores within its bound together: they create one at a time ({@link #readSnapshot}). */
    private final RestoreBudget restoreBudget = new RestoreBudget();
    /** The key groups in Caffeine, their computes and the exact entry count. */
    private final KeyGroups groups;
    /** Which keys can have siblings, and the freeing of unheld ones. */
    private final SiblingTracker siblings;
    private final HashedWaitQueues unusedWaiters = new HashedWaitQueues(6);
    /** Released entries still pinned, waiting to be unpinned in batches. */
    private final UnpinStack unpins;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            // The package's classes would otherwise be initialized by the first create, and
            // Caffeine's removal causes by the first removal: a Throwable in a static initializer
            // there (an OutOfMemoryError on a full heap) would leave the class unusable for the
            // life of the JVM, and every cache of this backend with it. Initialized here, before any
            // cache exists (ClassInitializationTest; as MbCache does for its own).
            lookup.ensureInitialized(PinnedEntry.class);
            lookup.ensureInitialized(KeyGroups.class);
            lookup.ensureInitialized(SiblingTracker.class);
            lookup.ensureInitialized(UnpinStack.class);
            lookup.ensureInitialized(RemovalCause.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** {@link #statistics}' counters, one per figure of {@link #stats()}. */
    private static final int CREATES = 0;
    private static final int DUPLICATES_REFUSED = 1;
    private static final int LOOKUP_HITS = 2;
    private static final int LOOKUP_MISSES = 3;
    private static final int DELETES = 4;
    private static final int ENTRIES_RECLAIMED = 5;
    private static final int BACKGROUND_RECLAIM_PASSES = 6;
    private static final int SYNCHRONOUS_RECLAIM_PASSES = 7;
    private static final int REQUESTED_RECLAIM_PASSES = 8;
    private static final int CHAIN_CAP_RECLAIMS = 9;
    private static final int RESTORES = 10;
    /**
     * The counters of {@link #stats()}, one line per thread for all of them: allocated with the
     * cache, never allocating when they count (a LongAdder allocates its cells on its first
     * collision, and a lookup counts its hit after it pinned and referenced the entry, so a count
     * that threw there would leak both).
     */
    private final StripedStatistics statistics = new StripedStatistics(11);

    private CaffeineDedupCache(long maxEntries, int chainCap, Executor executor) {
        this.maxEntries = maxEntries;
        this.chainCap = chainCap;
        this.synchronousReclaimThreshold = Saturating.twice(maxEntries);
        // One executor for all background work, Caffeine's and the unpin drains: close() stops it,
        // and an executor that throws gets the work run on the calling thread (FallbackExecutor).
        FallbackExecutor maintenance = new FallbackExecutor(executor, lifecycle::isClosed, this::countBackgroundPass);
        this.groups = new KeyGroups(maxEntries, chainCap, maintenance, this::onEvicted);
        this.siblings = groups.siblings();
        this.unpins = new UnpinStack(maxEntries, maxEntries / 16, groups::size, maintenance, this::unpinIfUnheld);
    }

    /**
     * A cache of at most about {@code maxEntries} unheld entries, with Caffeine's maintenance on
     * {@link ForkJoinPool#commonPool()}.
     *
     * @param maxEntries the maximum weight given to Caffeine: the number of entries nobody holds
     * @return a new, empty cache
     * @throws IllegalArgumentException if {@code maxEntries <= 0}
     */
    public static CaffeineDedupCache create(long maxEntries) {
        return builder().maxEntries(maxEntries).build();
    }

    /**
     * A builder; by default {@code maxEntries} is 16,384, {@code chainCap} 64 and the executor
     * {@link ForkJoinPool#commonPool()}.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Configures a {@link CaffeineDedupCache}. Not thread-safe; reusable. */
    public static final class Builder {
        private long maxEntries = DEFAULT_MAX_ENTRIES;
        private Executor executor = ForkJoinPool.commonPool();
        private int chainCap = DEFAULT_CHAIN_CAP;

        private Builder() {}

        /**
         * Sets the most values one key keeps while nobody holds them: a create that would give a key
         * more first reclaims that key's oldest unheld values (counted in
         * {@link CacheStats#chainCapReclaims()}), passing over once a value that was
         * {@linkplain CaffeineDedupCache#touch touched} since, as the kernel port's chain cap does;
         * values somebody holds are never reclaimed and may
         * exceed the cap. This bounds the work of every operation on a key, whatever keys an
         * attacker who chooses content can make collide. Default 64: honest content hashes rarely
         * give one key more than a few values, so an honest workload does not reach it.
         *
         * @param chainCap the cap, at least 1
         * @return this builder
         * @throws IllegalArgumentException if {@code chainCap < 1}
         */
        public Builder chainCap(int chainCap) {
            if (chainCap < 1) {
                throw new IllegalArgumentException("chainCap must be at least 1, was " + chainCap);
            }
            this.chainCap = chainCap;
            return this;
        }

        /**
         * Sets the size bound: Caffeine's maximum weight, where an unheld entry weighs 1.
         *
         * @param maxEntries the bound, positive
         * @return this builder
         * @throws IllegalArgumentException if {@code maxEntries <= 0}
         */
        public Builder maxEntries(long maxEntries) {
            if (maxEntries <= 0) {
                throw new IllegalArgumentException("maxEntries must be positive, was " + maxEntries);
            }
            this.maxEntries = maxEntries;
            return this;
        }

        /**
         * Sets the executor that runs Caffeine's maintenance (eviction), the background reclaim, and
         * this backend's drains of lazily unpinned entries.
         * {@code Runnable::run} runs it on the calling threads instead.
         *
         * <p>The executor must not wait for the task it is handed, nor call this cache from
         * {@code execute}: Caffeine hands work over while it holds its eviction lock, which the task
         * needs. An executor that runs the task on another thread and joins it therefore deadlocks
         * the create that handed it over, one that blocks in {@code execute} stalls other threads'
         * lookups and passes for as long, and one that calls back into the cache recurses. (The
         * kernel port, {@link org.mbcache.MbCache}, holds no lock when it hands a pass over, and
         * takes any of these.)
         *
         * @param executor the executor
         * @return this builder
         * @throws NullPointerException if {@code executor} is null
         */
        public Builder executor(Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * Builds the cache.
         *
         * @return a new, empty cache
         */
        public CaffeineDedupCache build() {
            return new CaffeineDedupCache(maxEntries, chainCap, executor);
        }
    }

    /**
     * The size bound given at construction.
     *
     * @return the maximum weight given to Caffeine: how many unheld entries the cache keeps
     */
    public long maxEntries() {
        return maxEntries;
    }

    /**
     * The most values of one key that nobody holds (the kernel port's chain cap, per key here):
     * a create beyond it first reclaims the key's oldest unheld values, counted in
     * {@link CacheStats#chainCapReclaims()}.
     *
     * @return the chain cap, as given to {@link Builder#chainCap(int)} or defaulted (64)
     */
    public int chainCap() {
        return chainCap;
    }

    /** Entries waiting on the lazy-unpin stack (live or dead): for tests. */
    long unpinBacklog() {
        return unpins.backlog();
    }

    /** Whether this cache serves calls: for its entries, which check it too. */
    Lifecycle lifecycle() {
        return lifecycle;
    }

    /**
     * Drops a caller's reference and wakes waiters. When only the cache is left, the entry stays
     * pinned (so the next lookup is again a lock-free CAS) and goes on the lazy-unpin stack, once.
     */
    private void releaseReference(PinnedEntry entry) {
        int remaining = entry.releaseReference();
        try {
            if (remaining <= 2) {
                unusedWaiters.wake(entry); // after the volatile CAS above: see HashedWaitQueues
            }
        } finally { // queued even if the wake-up threw: else the entry stayed pinned, unevictable
            if (remaining == 1 && entry.markUnpinQueued()) {
                unpins.push(entry);
            }
        }
    }

    /**
     * The unpin of an entry just taken off the unpin stack: if it is pinned and only the cache holds
     * it, one compute on its key, after which Caffeine can evict the group again.
     */
    private void unpinIfUnheld(PinnedEntry entry) {
        if (entry.isPinned() && entry.count() == 1 && !lifecycle.isClosed()) {
            groups.unpinUnheld(entry.boxedKey);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // DedupCache
    // ---------------------------------------------------------------------------------------------

    /**
     * {@inheritDoc}
     *
     * <p>A duplicate already cached is refused without a lock, allocating nothing but the key box.
     * If the key already has {@code chainCap} values nobody holds, its oldest unheld ones are
     * reclaimed first (counted in {@link CacheStats#chainCapReclaims()}). If the cache then holds
     * {@code 2 * maxEntries} entries or more, this thread reclaims before returning: it runs
     * Caffeine's pending eviction here and, if that is not enough, frees unheld values of keys that
     * have a held one, oldest first, until the cache is below that.
     *
     * @throws IllegalStateException if the cache is closed, also when {@code close()} ran while
     *     this call was inserting (the pair is then dropped with the rest)
     */
    @Override
    public boolean create(int key, long value, boolean reusable) {
        return create(key, value, reusable, true);
    }

    /**
     * {@link #create}, or with {@code reclaimForCap} false a restore's create
     * ({@link #readSnapshot}): one that never reclaims for the chain cap, but skips its pair
     * (returning false, counted nowhere) when the key already has {@code chainCap} values nobody
     * holds, so that a restore evicts no pair through the cap.
     */
    private boolean create(int key, long value, boolean reusable, boolean reclaimForCap) {
        lifecycle.ensureOpen();
        Integer boxedKey = key;
        PinnedEntry[] group = groups.current(boxedKey);
        if (group != null && KeyGroups.holdsLive(group, value)) {
            statistics.add(DUPLICATES_REFUSED, 1);
            return false;
        }
        PinnedEntry entry = new PinnedEntry(this, boxedKey, value, reusable);
        if (!(group == null && groups.insertFirst(boxedKey, entry))) {
            KeyGroups.Insert insert = groups.insert(boxedKey, entry, reclaimForCap);
            if (insert.capReclaimed > 0) {
                statistics.add(CHAIN_CAP_RECLAIMS, insert.capReclaimed);
            }
            if (!insert.inserted) {
                if (!insert.chainFull) {
                    statistics.add(DUPLICATES_REFUSED, 1);
                }
                return false;
            }
        }
        if (lifecycle.isClosed()) { // close() ran meanwhile: its teardown may have missed this insert
            groups.remove(boxedKey);
            throw Lifecycle.closedWhileCreating();
        }
        statistics.add(reclaimForCap ? CREATES : RESTORES, 1); // a restore's pair is no create
        long size = groups.size();
        if (size > maxEntries) {
            unpins.scheduleIfBacklogged(); // lately held entries must become evictable again
        }
        if (size >= synchronousReclaimThreshold) {
            reclaimSynchronously(boxedKey);
        }
        return true;
    }

    /**
     * The synchronous pass of a create that found {@code 2 * maxEntries} entries or more: unpins
     * every unheld entry on the stack (after any drain in progress), runs Caffeine's pending
     * maintenance here (which evicts the unpinned groups down to {@code maxEntries}), and if the
     * cache is still at the threshold, frees unheld siblings of held entries (which Caffeine cannot
     * take: their group weighs 0), the creating key's first, then the coldest groups', until it is
     * below.
     */
    private void reclaimSynchronously(Integer boxedKey) {
        statistics.add(SYNCHRONOUS_RECLAIM_PASSES, 1);
        unpins.drainAllNow();
        groups.cleanUp();
        long excess = groups.size() - synchronousReclaimThreshold + 1;
        if (excess <= 0) {
            return;
        }
        long freed = siblings.freeUnheld(boxedKey, excess);
        if (freed > 0) {
            statistics.add(ENTRIES_RECLAIMED, freed);
        }
    }

    /** The walk a lookup falls back to ({@link KeyGroups#firstReusableUnderKeyLock}): for tests. */
    PinnedEntry firstReusableUnderKeyLock(int key, CacheEntry after) {
        return groups.firstReusableUnderKeyLock(key, after == null ? null : ownEntry(after));
    }

    /**
     * Whether no group can have siblings, so that the synchronous pass skips its walk: for tests
     * (see SiblingTracker).
     */
    boolean knowsNoGroupHasSiblings() {
        return siblings.knowsNoGroupHasSiblings();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Scans the key's group (read without a lock) newest first. A hit on a pinned entry is one
     * CAS; on an unpinned one, a compute that pins it. A miss takes no lock. A walk that passed over
     * an entry reads the group again, and starts again if it changed.
     */
    @Override
    public CacheEntry findFirst(int key) {
        lifecycle.ensureOpen();
        Integer boxedKey = key;
        return countLookup(firstReusable(boxedKey, groups.current(boxedKey), null));
    }

    /** Lock-free walks of a lookup whose key's group changed under it before it walks under the key's lock. */
    private static final int LOCK_FREE_WALKS = 3;

    /** Lookups that walked under the key's lock after {@value #LOCK_FREE_WALKS} lock-free walks (tests; rare). */
    private final AtomicLong lockedWalks = new AtomicLong();

    /** How many lookups fell back to the walk under the key's lock: for tests. */
    long lockedWalks() {
        return lockedWalks.get();
    }

    /**
     * The first reusable entry of the key's {@code group} (read without a lock) after {@code after}
     * (from the newest where {@code after} is null or no longer in it) whose reference could be
     * taken, referenced for the caller, or {@code null}.
     *
     * <p>Where it passed over an entry (not reusable, or its reference refused: deleted or
     * reclaimed since the read), the answer stands only if the key's group is still the one it
     * read: groups are replaced, never changed in place, so the same array means no entry came or
     * went meanwhile, and the answer was the first reusable one after {@code after} when the group
     * was read again. Otherwise a create may have put a newer reusable entry in front while the one
     * passed over left, so that the entry found was never the newest, or the miss never right:
     * the reference goes back and the walk starts again on the current group, and after
     * {@value #LOCK_FREE_WALKS} such walks under the key's lock
     * ({@link KeyGroups#firstReusableUnderKeyLock}), so that writers that keep changing the group
     * cannot keep a lookup from ending. A walk that took the first entry it looked at needs no
     * second read: that entry was first when the group was read.
     *
     * <p>A refused reference in a cache that is closed meanwhile makes the call say so
     * ({@link Lifecycle#ensureOpen}): the close dropped the group, and an older candidate, pinned,
     * could still be referenced without it, an answer the call would not have given before the
     * close. (The close marks the cache closed before it drops a group, and the refused pin saw the
     * group gone, so it sees the mark.)
     */
    private PinnedEntry firstReusable(Integer boxedKey, PinnedEntry[] group, PinnedEntry after) {
        for (int walks = 1; ; walks++) {
            if (group == null) {
                return null;
            }
            if (walks > LOCK_FREE_WALKS) {
                lockedWalks.incrementAndGet();
                return groups.firstReusableUnderKeyLock(boxedKey, after);
            }
            PinnedEntry found = null;
            boolean passedOver = false;
            for (int i = after == null ? 0 : KeyGroups.indexOf(group, after) + 1; i < group.length; i++) {
                PinnedEntry candidate = group[i];
                if (!candidate.reusable()) {
                    passedOver = true;
                } else if (groups.acquire(candidate)) {
                    found = candidate;
                    break;
                } else {
                    lifecycle.ensureOpen();
                    passedOver = true;
                }
            }
            PinnedEntry[] now = passedOver ? groups.current(boxedKey) : group;
            if (now == group) {
                return found;
            }
            if (found != null) {
                releaseReference(found);
            }
            group = now;
        }
    }

    /**
     * Counts a lookup that returns {@code found} as a hit or a miss; returns it. A miss is first
     * checked against a racing close ({@link Lifecycle#missUnlessClosed}), and then the only way
     * this throws. Caffeine's map adds one path to Lifecycle's argument that rests on the hardware
     * alone: Caffeine clears a dropped node's value with a plain store, after the node left the
     * map (under the node's monitor, whose entry orders it after the close's earlier stores on x86
     * and AArch64), so a lookup that read the node before it left and its value after it was
     * cleared has no happens-before edge to the close.
     */
    private PinnedEntry countLookup(PinnedEntry found) {
        if (found == null) {
            lifecycle.missUnlessClosed();
        }
        statistics.add(found != null ? LOOKUP_HITS : LOOKUP_MISSES, 1);
        return found;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Continues after {@code entry} in the key's group as read on entry to the call (read again
     * where the walk passed over an entry and the group changed meanwhile); if {@code entry} is no
     * longer in it, restarts from the newest. Unlike the kernel, the reference to
     * {@code entry} is released before the next one is taken (the group read fixes the position), so
     * a release that throws (the caller held no reference after all) leaves no reference taken, and
     * a lookup that throws finds {@code entry} released already.
     */
    @Override
    public CacheEntry findNext(CacheEntry entry) {
        lifecycle.ensureOpen();
        PinnedEntry previous = ownEntry(entry);
        if (previous.count() < 2) {
            throw lifecycle.referenceNotHeld("findNext of an entry the caller does not hold: " + previous);
        }
        PinnedEntry[] group = groups.current(previous.boxedKey);
        releaseReference(previous);
        return countLookup(firstReusable(previous.boxedKey, group, previous));
    }

    /** {@inheritDoc} */
    @Override
    public CacheEntry get(int key, long value) {
        lifecycle.ensureOpen();
        PinnedEntry[] group = groups.current(key);
        PinnedEntry found = null;
        if (group != null) {
            int index = KeyGroups.indexOfValue(group, value);
            if (index >= 0 && groups.acquire(group[index])) {
                found = group[index];
            }
        }
        return countLookup(found);
    }

    /**
     * {@inheritDoc}
     *
     * <p>A lock-free read finds the pair; then one compute on the key either frees it (count 1 to 0:
     * only the cache held it) or takes a reference for the caller (someone holds it: the group already
     * weighs 0). A pair that is not cached costs no compute and no allocation beyond the key box.
     */
    @Override
    public CacheEntry deleteOrGet(int key, long value) {
        lifecycle.ensureOpen();
        Integer boxedKey = key;
        PinnedEntry[] group = groups.current(boxedKey);
        if (group == null || KeyGroups.indexOfValue(group, value) < 0) {
            lifecycle.missUnlessClosed();
            return null;
        }
        KeyGroups.DeleteOrGet deleteOrGet = groups.deleteOrGet(boxedKey, value);
        if (deleteOrGet.deleted) {
            statistics.add(DELETES, 1);
            return null;
        }
        if (deleteOrGet.held == null) {
            lifecycle.missUnlessClosed();
        }
        return deleteOrGet.held;
    }

    /** {@inheritDoc} */
    @Override
    public void waitUnused(CacheEntry entry) throws InterruptedException {
        lifecycle.ensureOpen();
        awaitUnused(ownEntry(entry), Long.MAX_VALUE);
    }

    /** {@inheritDoc} */
    @Override
    public boolean waitUnused(CacheEntry entry, long timeout, TimeUnit unit) throws InterruptedException {
        lifecycle.ensureOpen();
        PinnedEntry own = ownEntry(entry);
        Objects.requireNonNull(unit, "unit");
        long nanos = unit.toNanos(timeout);
        return awaitUnused(own, nanos == Long.MAX_VALUE ? Long.MAX_VALUE - 1 : nanos);
    }

    /** Interrupted on entry: InterruptedException even if the entry is unused (the contract). */
    private boolean awaitUnused(PinnedEntry entry, long nanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (entry.count() <= 2) {
            return true;
        }
        boolean done = unusedWaiters.await(entry, () -> !lifecycle.isOpen() || entry.count() <= 2, nanos);
        lifecycle.ensureOpen(); // closed (or broken) during the wait: the contract's IllegalStateException
        return done;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Sets the referenced flag (which {@link #shrink} honours) and records an access of the key with
     * Caffeine ({@code getIfPresent}), which raises its frequency estimate for Caffeine's own eviction.
     */
    @Override
    public void touch(CacheEntry entry) {
        lifecycle.ensureOpen();
        PinnedEntry own = ownEntry(entry);
        own.setReferenced();
        groups.recordAccess(own.boxedKey);
    }

    /** {@inheritDoc} */
    @Override
    public void release(CacheEntry entry) {
        lifecycle.ensureOpen();
        releaseReference(ownEntry(entry));
    }

    /** {@inheritDoc} */
    @Override
    public long size() {
        lifecycle.ensureOpen();
        return groups.size();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Walks Caffeine's eviction order ({@link Policy.Eviction#coldest(java.util.function.Function)})
     * coldest key first and, within a key, oldest value first. A pass looks at no more than twice
     * the entries present when it started (each may use its second chance once), so it ends
     * whatever other threads create or touch meanwhile.
     */
    @Override
    public long shrink(long nrToScan) {
        lifecycle.ensureOpen();
        if (nrToScan < 0) {
            throw new IllegalArgumentException("nrToScan must not be negative, was " + nrToScan);
        }
        statistics.add(REQUESTED_RECLAIM_PASSES, 1);
        // Every entry present now may use its second chance once: bounded whatever creates or
        // touches run meanwhile.
        long present = groups.size();
        long limit = Math.min(nrToScan, Saturating.twice(present));
        long scanned = 0;
        long freed = 0;
        while (scanned < limit) {
            long budget = limit - scanned;
            List<Policy.CacheEntry<Integer, PinnedEntry[]>> coldest =
                    groups.coldest(stream -> KeyGroups.takeEntries(stream.iterator(), budget));
            if (coldest.isEmpty()) {
                break;
            }
            long freedThisWalk = 0;
            boolean clearedAFlag = false;
            for (Policy.CacheEntry<Integer, PinnedEntry[]> snapshot : coldest) {
                PinnedEntry[] group = snapshot.getValue();
                PinnedEntry[] toFree = null; // the entries this scan examined and found free to go
                int toFreeCount = 0;
                boolean anySpared = false;
                for (int i = group.length - 1; i >= 0 && scanned < limit; i--) { // oldest first
                    PinnedEntry entry = group[i];
                    scanned++;
                    boolean wasReferenced = entry.clearReferenced();
                    clearedAFlag |= wasReferenced;
                    if (wasReferenced || entry.count() != 1) {
                        anySpared = true;
                    } else {
                        if (toFree == null) {
                            toFree = new PinnedEntry[i + 1];
                        }
                        toFree[toFreeCount++] = entry;
                    }
                }
                if (toFreeCount > 0) {
                    freedThisWalk += groups.reclaim(snapshot.getKey(), toFree, toFreeCount);
                }
                if (anySpared) {
                    groups.recordAccess(snapshot.getKey()); // second chance: an access in Caffeine's order
                }
            }
            freed += freedThisWalk;
            boolean reachedTheEnd = scanned < limit;
            if (!reachedTheEnd || (freedThisWalk == 0 && !clearedAFlag)) {
                break;
            }
        }
        if (freed > 0) {
            statistics.add(ENTRIES_RECLAIMED, freed);
        }
        return freed;
    }

    /**
     * Caffeine's eviction listener: runs inside the compute that removes the group, with its key's
     * lock held. The group weighed more than 0, so no entry of it was held, and none can be pinned
     * now (pins need this lock): every count is 1 and goes to 0 here, so that a lookup still holding
     * the old group sees the entries as dead. A pinned or held entry here would mean that Caffeine
     * evicted a zero-weight group: the breach is recorded and rethrown by every later call but
     * close() ({@link Lifecycle#breakBy}), because Caffeine only logs what its listener throws.
     */
    void onEvicted(Integer key, PinnedEntry[] group, RemovalCause cause) {
        if (group == null) {
            return;
        }
        int retired = 0;
        PinnedEntry breached = null;
        for (PinnedEntry entry : group) {
            if (!entry.isPinned() && entry.killIfUnheld()) {
                retired++;
            } else {
                breached = entry; // unreachable by the weigher invariant; never pass it silently
            }
        }
        groups.uncount(group.length); // every entry left the map, breached ones too
        statistics.add(ENTRIES_RECLAIMED, retired);
        if (breached != null) {
            AssertionError breach = new AssertionError("Caffeine evicted an entry somebody holds: " + breached);
            if (lifecycle.breakBy(breach)) { // the first breach, of an open cache
                // No release can succeed now (each rethrows the breach), so no waiter would ever
                // be woken by one: wake them all, to meet the breach in their ensureOpen.
                unusedWaiters.wakeAll();
            }
            throw breach;
        }
    }

    /** Run first by every background task: it counts as a background pass if the cache is at its bound. */
    private void countBackgroundPass() {
        if (groups.size() >= maxEntries) {
            statistics.add(BACKGROUND_RECLAIM_PASSES, 1);
        }
    }

    /** {@inheritDoc} */
    @Override
    public CacheStats stats() {
        lifecycle.ensureOpen();
        return new CacheStats(
                statistics.sum(CREATES),
                statistics.sum(DUPLICATES_REFUSED),
                statistics.sum(LOOKUP_HITS),
                statistics.sum(LOOKUP_MISSES),
                statistics.sum(DELETES),
                statistics.sum(ENTRIES_RECLAIMED),
                statistics.sum(BACKGROUND_RECLAIM_PASSES),
                statistics.sum(SYNCHRONOUS_RECLAIM_PASSES),
                statistics.sum(REQUESTED_RECLAIM_PASSES),
                statistics.sum(CHAIN_CAP_RECLAIMS),
                statistics.sum(RESTORES));
    }

    /**
     * {@inheritDoc}
     *
     * <p>The order is Caffeine's eviction order ({@link Policy.Eviction#coldest(java.util.function.Function)}),
     * coldest key first and, within a key, oldest value first: the order {@link #shrink} walks. It is
     * TinyLFU's, not an LRU: a key's frequency counts too, so "oldest first" is as near as Caffeine's
     * order comes. Pending maintenance is run first ({@code Cache.cleanUp()} on the calling thread),
     * so that every key inserted before the call is in that order. Caffeine walks its order under its
     * eviction lock; this keeps the lock only while it copies one reference per key (4 to 8 bytes a
     * key, held until the call returns), and reads the entries and writes them after letting it go.
     * While it holds the lock, Caffeine's maintenance waits, and so does a create that finds
     * Caffeine's write buffer full. Groups are immutable, so a key's values are read as one
     * consistent group; entries removed since are skipped. No reference is taken: pins and counts are
     * left as they are.
     */
    @Override
    public long writeSnapshot(OutputStream out) throws IOException {
        Objects.requireNonNull(out, "out");
        lifecycle.ensureOpen();
        groups.cleanUp();
        List<PinnedEntry[]> order = groups.coldest(KeyGroups::groupsInOrder);
        lifecycle.ensureOpen();
        return Snapshots.write(out, new SnapshotWalk(order));
    }

    /** The pairs of the groups, coldest group first, oldest value first within a group; live ones only. */
    private final class SnapshotWalk implements Snapshots.PairSource {
        private final List<PinnedEntry[]> order;
        private int group;
        /** The next index to look at in the current group, counting down (groups are newest first). */
        private int index = -1;

        SnapshotWalk(List<PinnedEntry[]> order) {
            this.order = order;
        }

        @Override
        public int next(int[] keys, long[] values, byte[] flags, int from, int max) {
            lifecycle.ensureOpen(); // close() dropped the groups: never end a snapshot short as if complete
            int copied = 0;
            while (copied < max) {
                if (index < 0) {
                    if (group == order.size()) {
                        break;
                    }
                    index = order.get(group++).length - 1;
                    continue;
                }
                PinnedEntry entry = order.get(group - 1)[index--];
                if (entry.count() == 0) {
                    continue; // removed since Caffeine's order was read
                }
                keys[from + copied] = entry.boxedKey;
                values[from + copied] = entry.value;
                flags[from + copied] = (byte) ((entry.reusable() ? Snapshots.RECORD_REUSABLE : 0)
                        | (entry.isReferenced() ? Snapshots.RECORD_REFERENCED : 0));
                copied++;
            }
            return copied;
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>The budget is {@link #maxEntries()} minus {@link #size()}; the pairs are created as by
     * {@link #create} on the calling thread, in the snapshot's order, except that a restore never
     * reclaims for the chain cap: a pair whose key already has {@code chainCap} values nobody holds
     * is skipped and not counted.
     */
    @Override
    public long readSnapshot(InputStream in) throws IOException {
        Objects.requireNonNull(in, "in");
        lifecycle.ensureOpen();
        long created = restoreBudget.read(in, maxEntries, groups::size,
                (key, value, reusable) -> create(key, value, reusable, false));
        lifecycle.ensureOpen(); // closed during the read: a restore that created nothing still reports it
        return created;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Marks the cache closed (which also stops handing maintenance to the executor), drops every
     * group from Caffeine, and wakes every {@code waitUnused}. The cache counts as closed from the
     * first call on; a close that threw part-way (an {@link OutOfMemoryError} waking the waiters) is
     * finished by the next call.
     */
    @Override
    public void close() {
        if (!lifecycle.beginClose()) {
            return;
        }
        // Each step may run twice (a racing or retried close): each is idempotent.
        unpins.clear();
        groups.clear();
        unusedWaiters.wakeAll(); // after beginClose's volatile write: every waiter re-checks it
        lifecycle.tornDown();
    }

    /** The argument as an entry of this cache, or the contract's exception. */
    private PinnedEntry ownEntry(CacheEntry entry) {
        Objects.requireNonNull(entry, "entry");
        if (entry instanceof PinnedEntry && ((PinnedEntry) entry).cache == this) {
            return (PinnedEntry) entry;
        }
        throw new IllegalArgumentException("entry belongs to another cache: " + entry);
    }

    /** A short description: size bound and current size. */
    @Override
    public String toString() {
        return "CaffeineDedupCache[maxEntries=" + maxEntries + ", size=" + groups.size()
                + (lifecycle.isClosed() ? ", closed" : "") + "]";
    }
}
