package org.mbcache.caffeine;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Weigher;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import org.mbcache.CacheEntry;
import org.mbcache.CacheStats;
import org.mbcache.DedupCache;
import org.mbcache.internal.HashedWaitQueues;
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
 * match, nothing else. Seen from one thread, {@link #size()} never exceeds
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
     * Implementation notes.
     *
     * Layout. The Caffeine cache maps each 32-bit key (boxed) to that key's group: an immutable
     * array of its entries, newest first, the kernel's hash chain restricted to one key. A pair
     * therefore needs no composite key object: the int key finds the group, and the value is a
     * scan of a group that almost always holds one entry (and never more than chainCap unheld
     * ones). Groups are copy-on-write; every change to a group (insert, remove, pin, unpin) is an
     * asMap() atomic compute on its key, so all changes of one key are serialized by Caffeine's
     * per-key lock, while lookups read the current group without any lock through
     * Policy.getIfPresentQuietly. Each entry keeps its reference count (the cache's own reference
     * counts 1) and a PINNED bit in one volatile int, and its flags in another.
     *
     * How held entries are kept (the journal-corruption race). Caffeine evicts by its own policy,
     * so a held entry must be out of its reach. The weigher gives a group weight 0 while any of its
     * entries is pinned, and otherwise its number of entries; the maximum weight is maxEntries.
     * Caffeine never evicts a zero-weight entry: its eviction re-reads the node's weight under the
     * node's lock, inside the same map compute that would remove it, and keeps the node when the
     * weight is 0 (BoundedLocalCache.evictEntry in Caffeine 3.2; the pinning tests fail should a
     * later version drop that re-check, and the eviction listener records a breach). PINNED is set
     * and cleared only inside computes on the key, and the weigher runs in the same compute, so
     * "pinned" implies "its group weighs 0" whenever eviction can look. The invariant that makes it
     * safe is "held implies pinned" (count >= 2 implies PINNED):
     *  - a lookup takes a reference without any lock only if the entry is pinned: a CAS of the
     *    count word from (c, PINNED) to (c + 1, PINNED);
     *  - an unpinned entry is first pinned inside a computeIfPresent on its key (the entry is its
     *    own remapping function, so nothing of ours is allocated); the reference is then taken by
     *    the same lock-free CAS (should an unpin get in between, the CAS sees the entry unpinned and
     *    the lookup pins it again);
     *  - a release only decrements the count: the entry stays pinned (the next lookup of a hot
     *    entry is again a lock-free CAS) and goes, once, on the lazy-unpin stack (UnpinStack);
     *  - unpinning clears PINNED inside a compute by a CAS from exactly (1, PINNED) to (1): on the
     *    same word as the lookups' CAS, so a lookup either gets there first (count 2: the entry
     *    stays pinned) or sees it unpinned and takes the locked path. Caffeine then re-weighs.
     * Every removal of ours (reclaim, chain cap, deleteOrGet) drops the cache's reference by a CAS
     * from count 1 to 0 inside a compute; Caffeine's eviction only ever sees unpinned entries at
     * count 1 and retires them to 0 in its eviction listener, inside the removing compute. A lookup
     * that finds count 0 skips the entry. Dead entries are never left in a group.
     *
     * One held entry pins only itself. Caffeine's unit is the group, so while one entry of a key is
     * pinned the whole group weighs 0 and its unheld siblings are out of Caffeine's reach. They are
     * reclaimed by this class instead, one by one and oldest first: by the chain cap on every create
     * of the key, and by the synchronous pass (below), which, when unpinning and Caffeine's own
     * eviction leave the cache at 2 * maxEntries or more, frees unheld siblings of pinned groups
     * (first the creating key's, then the coldest groups') until it is below. Once its last entry is
     * unpinned a group is evicted whole by Caffeine, at most chainCap unheld entries at a time.
     *
     * Lazy unpinning. Pinned but unheld entries cost nothing until the cache holds more than
     * maxEntries (Caffeine would not evict anyway). A drain is handed to the executor once the
     * stack holds unpinBatch = maxEntries / 16 entries and the cache holds more than maxEntries (or
     * the stack more than twice as many entries as the cache, so that dead ones do not pile up); it
     * unpins all but the unpinBatch / 2 newest live entries (the hot ones). At or below the bound a
     * read-mostly cache keeps its entries pinned, and its lookups are lock-free CASes.
     *
     * The synchronous pass. A create that sees size() >= 2 * maxEntries drains the whole unpin
     * stack, runs Caffeine's pending maintenance (Cache.cleanUp) on its own thread, and then frees
     * unheld siblings of pinned groups while still at the threshold. This is also what recovers
     * Caffeine from a maintenance task that its executor accepted and never ran: cleanUp resets
     * Caffeine's drain status.
     *
     * Skipping the sibling walk. When callers hold about maxEntries entries, every create finds the
     * cache at the threshold, and the walk of the coldest groups for siblings would run on every
     * one, at O(2 * maxEntries), even when no key has a second value and there is nothing to free.
     * The walk only frees siblings, so it can be skipped whenever no group has any, which the cache
     * knows without looking: only an insert into an existing group can give a key a second value
     * (chain cap, reclaim, deleteOrGet and Caffeine's eviction only shrink groups or remove them),
     * and every such insert counts itself in siblingGroupsCreated once its compute has returned. A
     * pass whose walk found no group with siblings confirms it by one scan of the whole map and
     * records the count it read before the walk in noSiblingGroupsAsOf; while the count is still
     * that, later passes skip the walk. Why the 2 * maxEntries + held bound survives: a group that
     * had siblings when the count was read was published before (the count is bumped after the
     * compute), so the scan, which starts after that read, sees it unless it lost them meanwhile;
     * and a group that gets siblings later bumps the count, so the next pass walks again (the
     * create that made it runs a pass of its own, which frees its own key's siblings first). The
     * scan reads the map (ConcurrentHashMap's weakly consistent iteration sees every mapping present
     * throughout it), not Caffeine's eviction order, which lags a concurrent create until its add
     * task is drained. Cost: one scan per pass that walked in vain since the count last moved. At
     * worst, when every pass follows a new sibling group that is gone by the time it walks, each
     * pass scans as much as it walked, twice the work of a pass that could not skip. In the case
     * that motivated the skip (callers holding maxEntries single-value keys): at most one walk and
     * one scan, then none until a key gets a second value; none at all in a cache where no key ever
     * had two (a new cache knows it has no siblings). Not covered: the same case with one key whose
     * values are all held. Its group has siblings, so every pass walks, finds nothing it may free,
     * and walks again at the next create: a probe that held about 2 * maxEntries single-value keys
     * and both values of one more measured creates at 170-770 us (median) against 8.5-50 without
     * that key (maxEntries 1,000 and 4,096; the kernel port: 1.3-11). Skipping those walks too would
     * need to know when a held sibling becomes free (a release drained, a lookup pinning a group
     * with an unheld sibling, an insert), three more windows to argue and race-test; the contract
     * bounds no create's cost, and holding twice maxEntries at once is far from what ext4 does, so
     * it is left as it is.
     *
     * The chain cap. A create that inserts into a group with chainCap or more unheld entries first
     * frees the oldest unheld ones, inside the same compute, with the kernel port's second chance: a
     * first walk, oldest first, passes over referenced entries (clearing the flag of unheld ones),
     * and only if it found too few does a second walk take the oldest unheld entries whatever their
     * flag. The synchronous pass's trim of siblings picks the same way. Victims are chosen before
     * anything irreversible happens (but for flags cleared): each is unpinned first (a CAS from
     * (1, PINNED) to (1); a failure means a lookup holds it now, and it is passed over), after which
     * no lookup can take a reference without the key's lock, which the create holds. The new group
     * is allocated next, and only then are the victims killed (count 1 to 0, which cannot fail any
     * more), so an OutOfMemoryError leaves the group as it was. A group holds at most chainCap
     * unheld entries plus the held ones, so the copy-on-write costs O(chainCap + held) per create,
     * not O(values the key has had).
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

    /**
     * A group's weight: 0 while any of its entries is pinned (held by a caller now, or lately and not
     * yet unpinned), so that Caffeine's size eviction never takes it; its entry count otherwise.
     * Called by Caffeine inside the compute that produced the group, with the key's lock held; the
     * PINNED bits change only under that lock, so what it reads is what the compute left.
     */
    private static final Weigher<Integer, Entry[]> PINNED_GROUPS_WEIGH_NOTHING =
            (key, group) -> anyPinned(group) ? 0 : group.length;

    private final long maxEntries;
    /** {@code 2 * maxEntries}, saturated: a create that sees this many entries runs maintenance itself. */
    private final long synchronousReclaimThreshold;
    private final Cache<Integer, Entry[]> groups;
    private final ConcurrentMap<Integer, Entry[]> groupMap;
    private final Policy<Integer, Entry[]> policy;
    private final Policy.Eviction<Integer, Entry[]> eviction;
    private final HashedWaitQueues unusedWaiters = new HashedWaitQueues(6);
    /** Released entries still pinned, waiting to be unpinned in batches. */
    private final UnpinStack unpins;
    /** The most values of one key that nobody holds. */
    private final int chainCap;

    /** Entries in the cache: incremented before an entry is visible, decremented when it leaves. */
    private final AtomicLong entryCount = new AtomicLong();
    /**
     * Inserts that left their key with more than one value, each counted after its compute
     * returned (so the group it made is in the map before the count says so): the only way a group
     * gets siblings. Volatile increments and reads, so that a pass that reads the count and then
     * scans the map sees every group counted before its read (see "Skipping the sibling walk").
     */
    private final AtomicLong siblingGroupsCreated = new AtomicLong();
    /**
     * A value of {@link #siblingGroupsCreated} at which a scan found no group with siblings: while
     * the count still has this value, none has any, and the synchronous pass skips its walk.
     * Starts at 0 with the count: an empty cache has none. Written by passes, each with a count it
     * read before a scan that found none; when two race, either value is one that was true, and
     * an older one only makes the next pass walk.
     */
    private volatile long noSiblingGroupsAsOf;
    /**
     * Whether calls are served: {@link Lifecycle#OPEN}, {@link Lifecycle#CLOSED}, or broken by an
     * invariant breach seen where it could not be thrown to a caller (Caffeine's eviction listener,
     * whose exceptions Caffeine only logs), which every later call but close() rethrows. One field
     * for all three, so that {@link #ensureOpen}, on the path of every call, is one volatile read
     * and one comparison with a constant.
     *
     * <p>Transitions: OPEN to broken by a CAS (the first breach is kept), and OPEN or broken to
     * CLOSED by close() (which then tears down, again on every call until one has finished:
     * {@link #tornDown}). CLOSED
     * is final: a breach recorded after close() is not kept, so a closed cache always answers with
     * the contract's IllegalStateException.
     *
     * <p>Memory order: every access is volatile (sequentially consistent), and two readers need it,
     * since they are halves of Dekker handshakes, which need the store-load order that acquire and
     * release alone do not give. A create inserts into the map and then reads the lifecycle, while
     * close() writes it and then empties the map: either the create sees CLOSED and removes its
     * pair, or close() finds the pair. awaitUnused's condition reads it after the wait queue's
     * waiter count went up, while close() writes it before wakeAll() (see HashedWaitQueues).
     * ensureOpen alone would do with an acquire read (a close() or breach that happens-before the
     * call is seen either way), but it gains nothing from one: a volatile read is a plain load on
     * x86, and on AArch64 an LDAR where LDAPR would be the acquire. What ensureOpen saves is the
     * second field: one load and one branch instead of two.
     */
    private volatile Lifecycle lifecycle = Lifecycle.OPEN;
    /** Whether a {@link #close()} has finished tearing down (dropped every group, woken every waiter). */
    private volatile boolean tornDown;

    private static final VarHandle LIFECYCLE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            LIFECYCLE = lookup.findVarHandle(CaffeineDedupCache.class, "lifecycle", Lifecycle.class);
            // The entry class would otherwise be initialized by the first create, and Caffeine's
            // removal causes by the first removal: a Throwable in a static initializer there (an
            // OutOfMemoryError on a full heap) would leave the class unusable for the life of the
            // JVM, and every cache of this backend with it. Initialized here, before any cache
            // exists (ClassInitializationTest; as MbCache does for its own).
            lookup.ensureInitialized(Entry.class);
            lookup.ensureInitialized(RemovalCause.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Whether a cache serves calls, as one immutable object, so that one volatile field holds the
     * whole state: open, closed, or broken with the breach that every later call rethrows.
     */
    private static final class Lifecycle {
        static final Lifecycle OPEN = new Lifecycle(null);
        static final Lifecycle CLOSED = new Lifecycle(null);

        /** Why the cache is broken; {@code null} for {@link #OPEN} and {@link #CLOSED}. */
        final AssertionError breach;

        private Lifecycle(AssertionError breach) {
            this.breach = breach;
        }

        static Lifecycle brokenBy(AssertionError breach) {
            return new Lifecycle(breach);
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
    /**
     * The counters of {@link #stats()}, one line per thread for all of them: allocated with the
     * cache, never allocating when they count (a LongAdder allocates its cells on its first
     * collision, and a lookup counts its hit after it pinned and referenced the entry, so a count
     * that threw there would leak both).
     */
    private final StripedStatistics statistics = new StripedStatistics(10);

    private CaffeineDedupCache(long maxEntries, int chainCap, Executor executor) {
        this.maxEntries = maxEntries;
        this.chainCap = chainCap;
        this.synchronousReclaimThreshold = Saturating.twice(maxEntries);
        // One executor for all background work, Caffeine's and the unpin drains: close() stops it,
        // and an executor that throws gets the work run on the calling thread (FallbackExecutor).
        FallbackExecutor maintenance = new FallbackExecutor(executor, this::isClosed, this::countBackgroundPass);
        this.unpins = new UnpinStack(maxEntries, maxEntries / 16, entryCount::get, maintenance, this::unpinIfUnheld);
        this.groups = Caffeine.newBuilder()
                .maximumWeight(maxEntries)
                .weigher(PINNED_GROUPS_WEIGH_NOTHING)
                .executor(maintenance)
                .evictionListener(this::onEvicted)
                .build();
        this.groupMap = groups.asMap();
        this.policy = groups.policy();
        this.eviction = policy.eviction().orElseThrow();
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

    // ---------------------------------------------------------------------------------------------
    // The entry
    // ---------------------------------------------------------------------------------------------

    /**
     * One cached pair. {@code key}, {@code value} and the owner are final, so any thread that reaches
     * the entry through the cache sees them (and the flags written in the constructor: the group that
     * publishes the entry is itself published by Caffeine's map, whose put happens-before a get that
     * sees it).
     */
    static final class Entry implements CacheEntry, BiFunction<Integer, Entry[], Entry[]> {
        static final int REUSABLE = 1;
        static final int REFERENCED = 2;
        /** Internal flag: the entry is on the cache's lazy-unpin stack. */
        static final int UNPIN_QUEUED = 4;

        /** The reference count: the low 28 bits of {@link #state}. */
        static final int COUNT_MASK = (1 << 28) - 1;
        /**
         * The state bit that says this entry's group weighs 0 in Caffeine because of this entry. Set
         * and cleared only inside a compute on the key (with the key's lock held), so the weigher,
         * which runs in that compute, sees exactly the bits the compute left.
         */
        static final int PINNED = 1 << 28;

        private static final VarHandle STATE;
        private static final VarHandle FLAGS;

        static {
            try {
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                STATE = lookup.findVarHandle(Entry.class, "state", int.class);
                FLAGS = lookup.findVarHandle(Entry.class, "flags", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final CaffeineDedupCache cache;
        /** The key as the map's key object, kept so that calls given an entry never box. */
        final Integer boxedKey;
        final int key;
        final long value;

        /**
         * The reference count ({@link #COUNT_MASK}: 1 is the cache's own reference, each caller adds
         * one, 0 is dead, out of the cache for good) and the {@link #PINNED} bit, in one word so that
         * a lock-free lookup's increment and the unpin under the key's lock are ordered by the same
         * CAS. Invariant: a count of 2 or more implies PINNED, and PINNED implies that the group's
         * weight in Caffeine is 0.
         *
         * <p>Read with volatile reads and changed only by volatile CAS: the CAS makes
         * increment-unless-dead atomic against the removals (count 1 to 0) and the unpin (PINNED
         * cleared at count 1), and its volatile (sequentially consistent) write is what the wait
         * queues' Dekker handshake with {@code waitUnused} needs: a release-only CAS would let the
         * waker's read of the waiter count move above it. On x86 and AArch64 a CAS is a full barrier
         * anyway, so a weaker mode would save nothing.
         */
        private volatile int state = 1;

        /**
         * {@link #REUSABLE}, {@link #REFERENCED} and {@link #UNPIN_QUEUED}, in one word changed only by
         * atomic {@code getAndBitwiseOr/And} (volatile mode), so setting one flag never loses a
         * concurrent change of another (kernel fix a44e84a9b776). Volatile reads: a reader must not
         * keep using a stale value in a loop (ext4 would spin on a stale reusable bit); opaque would
         * do for coherence, and volatile costs the same plain load on x86.
         */
        private volatile int flags;

        /**
         * The next entry on the lazy-unpin stack: written with a plain store before the push's CAS
         * of the stack head publishes it, and below the head only by the (single) drain thread.
         */
        private Entry nextToUnpin;

        Entry(CaffeineDedupCache cache, Integer boxedKey, long value, boolean reusable) {
            this.cache = cache;
            this.boxedKey = boxedKey;
            this.key = boxedKey;
            this.value = value;
            this.flags = reusable ? REUSABLE : 0;
        }

        Entry lpNextToUnpin() {
            return nextToUnpin;
        }

        void spNextToUnpin(Entry next) {
            nextToUnpin = next;
        }

        /** The count word, volatile read: orders later reads of the entry after it. */
        int lvState() {
            return state;
        }

        /** Volatile CAS of the count word: see {@link #state} for why volatile. */
        private boolean casState(int expected, int update) {
            return STATE.compareAndSet(this, expected, update);
        }

        /** The flags word, volatile read. */
        private int lvFlags() {
            return flags;
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
            return (lvFlags() & REUSABLE) != 0;
        }

        @Override
        public void setReusable(boolean reusable) {
            cache.ensureOpen();
            if (reusable) {
                FLAGS.getAndBitwiseOr(this, REUSABLE);
            } else {
                FLAGS.getAndBitwiseAnd(this, ~REUSABLE);
            }
        }

        @Override
        public void close() {
            cache.release(this);
        }

        /**
         * Sets REFERENCED. Skips the atomic write when the bit is already set: linearizable, because
         * the volatile read saw the bit set at that moment (a concurrent clear is then ordered after).
         */
        void setReferenced() {
            if ((lvFlags() & REFERENCED) == 0) {
                FLAGS.getAndBitwiseOr(this, REFERENCED);
            }
        }

        /** Clears REFERENCED; returns whether it was set. */
        boolean clearReferenced() {
            return (lvFlags() & REFERENCED) != 0
                    && ((int) FLAGS.getAndBitwiseAnd(this, ~REFERENCED) & REFERENCED) != 0;
        }

        boolean isReferenced() {
            return (lvFlags() & REFERENCED) != 0;
        }

        /** Sets UNPIN_QUEUED; returns whether this call set it (and so must push the entry). */
        boolean markUnpinQueued() {
            return (lvFlags() & UNPIN_QUEUED) == 0
                    && ((int) FLAGS.getAndBitwiseOr(this, UNPIN_QUEUED) & UNPIN_QUEUED) == 0;
        }

        void clearUnpinQueued() {
            FLAGS.getAndBitwiseAnd(this, ~UNPIN_QUEUED);
        }

        static int count(int state) {
            return state & COUNT_MASK;
        }

        int count() {
            return count(lvState());
        }

        /** Whether this entry currently keeps its group at weight 0. */
        boolean isPinned() {
            return (lvState() & PINNED) != 0;
        }

        /**
         * The lock-free half of a lookup: takes a reference if the entry is pinned (its group weighs
         * 0, and only a compute on the key could change that, which this CAS and the unpin's CAS
         * order), whatever the count.
         *
         * @return 1 if a reference was taken; 0 if the entry is unpinned (at count 1: the caller must
         *     pin it under the key's lock); -1 if the entry is dead
         */
        int tryAcquirePinned() {
            for (;;) {
                int s = lvState();
                if (count(s) == 0) {
                    return -1;
                }
                if ((s & PINNED) == 0) {
                    return 0;
                }
                checkOverflow(s);
                if (casState(s, s + 1)) {
                    return 1;
                }
            }
        }

        /**
         * Takes a reference and pins the entry, unless it is dead. Only inside a compute on the key:
         * the weigher that runs after it in the same compute sees PINNED and weighs the group 0.
         */
        boolean acquireAndPinUnderKeyLock() {
            for (;;) {
                int s = lvState();
                if (count(s) == 0) {
                    return false;
                }
                checkOverflow(s);
                if (casState(s, (s + 1) | PINNED)) {
                    return true;
                }
            }
        }

        /**
         * The remapping function of a pin (the entry is its own, so a pin allocates nothing of ours):
         * with the key's lock held, sets PINNED if the entry is alive and still in the key's group,
         * and returns the group unchanged, so that Caffeine re-weighs it (to 0) before the lock is
         * released. It takes no reference: the caller then does, by the lock-free CAS of
         * {@link #tryAcquirePinned}.
         */
        @Override
        public Entry[] apply(Integer boxedKey, Entry[] group) {
            if (indexOf(group, this) >= 0) {
                for (;;) {
                    int s = lvState();
                    if (count(s) == 0 || (s & PINNED) != 0 || casState(s, s | PINNED)) {
                        break;
                    }
                }
            }
            return group;
        }

        /** Drops the cache's reference if nobody else holds one: count 1 to dead. Only inside a compute. */
        boolean killIfUnheld() {
            for (;;) {
                int s = lvState();
                if (count(s) != 1) {
                    return false;
                }
                if (casState(s, 0)) {
                    return true;
                }
            }
        }

        /**
         * Drops the cache's reference of an entry that is unpinned and unheld: exactly (1) to dead.
         * Only inside a compute on the key, after {@link #unpinIfUnheld} returned true under the
         * same lock: then nothing can have changed the word, and this cannot fail. (An entry still
         * pinned, at count 1 because a holder released it meanwhile, is left alone.)
         */
        boolean killIfUnpinnedUnheld() {
            return casState(1, 0);
        }

        /**
         * Clears PINNED if nobody but the cache holds the entry. Only inside a compute on the key. A
         * lookup's lock-free increment and this CAS are on the same word, so either the lookup wins
         * (count 2: the entry stays pinned) or this does (the lookup then sees it unpinned and pins
         * it again under the lock).
         *
         * @return whether the entry is now unpinned at count 1: then, as long as the caller holds
         *     the key's lock, nobody can take a reference and {@link #killIfUnheld} cannot fail
         */
        boolean unpinIfUnheld() {
            for (;;) {
                int s = lvState();
                if (s == 1) {
                    return true;
                }
                if (s != (1 | PINNED)) {
                    return false;
                }
                if (casState(s, 1)) {
                    return true;
                }
            }
        }

        /**
         * Drops a caller's reference; PINNED stays (the unpin is lazy). A count of 1 is the cache's
         * own reference and 0 a dead entry: releasing then is an over-release, refused without
         * touching the count.
         *
         * @return the new count
         */
        int releaseReference() {
            for (;;) {
                int s = lvState();
                int count = count(s);
                if (count <= 1) {
                    throw cache.referenceNotHeld("entry released more often than it was handed out: " + this);
                }
                if (casState(s, s - 1)) {
                    return count - 1;
                }
            }
        }

        private void checkOverflow(int s) {
            if (count(s) == COUNT_MASK) {
                throw new IllegalStateException("too many references to " + this);
            }
        }

        @Override
        public String toString() {
            int s = lvState();
            int f = flags;
            return "CacheEntry[key=" + key + ", value=" + value + ", count=" + count(s)
                    + ", pinned=" + ((s & PINNED) != 0) + ", reusable=" + ((f & REUSABLE) != 0)
                    + ", referenced=" + ((f & REFERENCED) != 0) + "]";
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Group helpers (groups are immutable arrays, newest entry first)
    // ---------------------------------------------------------------------------------------------

    private static int indexOfValue(Entry[] group, long value) {
        for (int i = 0; i < group.length; i++) {
            if (group[i].value == value) {
                return i;
            }
        }
        return -1;
    }

    private static int indexOf(Entry[] group, Entry entry) {
        for (int i = 0; i < group.length; i++) {
            if (group[i] == entry) {
                return i;
            }
        }
        return -1;
    }

    private static Entry[] prepend(Entry entry, Entry[] group) {
        if (group == null) {
            return new Entry[] {entry};
        }
        Entry[] grown = new Entry[group.length + 1];
        grown[0] = entry;
        System.arraycopy(group, 0, grown, 1, group.length);
        return grown;
    }

    /** The group without the entry at {@code index}, or {@code null} (the key leaves the map) if none remain. */
    private static Entry[] without(Entry[] group, int index) {
        if (group.length == 1) {
            return null;
        }
        Entry[] shrunk = new Entry[group.length - 1];
        System.arraycopy(group, 0, shrunk, 0, index);
        System.arraycopy(group, index + 1, shrunk, index, group.length - index - 1);
        return shrunk;
    }

    /** The key's current group, read without a lock and without touching Caffeine's policy. */
    private Entry[] currentGroup(Integer boxedKey) {
        return policy.getIfPresentQuietly(boxedKey);
    }

    // ---------------------------------------------------------------------------------------------
    // Taking references
    // ---------------------------------------------------------------------------------------------

    /**
     * Takes a reference for a caller (kernel {@code atomic_inc_not_zero}): a lock-free CAS when the
     * entry is pinned (held now, or held recently and not yet unpinned), else a pin under the key's
     * lock, which Caffeine follows by re-weighing the group to 0 before the lock is released.
     *
     * @return {@code false} if the entry is dead (its count reached 0): it is invisible
     */
    private boolean acquire(Entry entry) {
        for (;;) {
            int fast = entry.tryAcquirePinned();
            if (fast != 0) {
                return fast > 0;
            }
            // Unpinned (count 1): pin it under the key's lock (the entry is its own remapping
            // function: nothing allocated here), then take the reference by the lock-free CAS. An
            // unpin drain may get in between: then the CAS sees it unpinned again and this repeats.
            Entry[] group = groupMap.computeIfPresent(entry.boxedKey, entry);
            if (group == null || indexOf(group, entry) < 0) {
                return false; // no longer cached (removed, or the cache closed)
            }
        }
    }

    /**
     * Drops a caller's reference and wakes waiters. When only the cache is left, the entry stays
     * pinned (so the next lookup is again a lock-free CAS) and goes on the lazy-unpin stack, once.
     */
    private void releaseReference(Entry entry) {
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

    // ---------------------------------------------------------------------------------------------
    // Lazy unpinning (the stack itself is UnpinStack)
    // ---------------------------------------------------------------------------------------------

    /**
     * The unpin of an entry just taken off the unpin stack: if it is pinned and only the cache holds
     * it, one compute on its key ({@link #UNPIN_UNHELD}), after which Caffeine weighs the group again
     * by its entry count (unless another entry still pins it), so its eviction can take it.
     */
    private void unpinIfUnheld(Entry entry) {
        if (entry.isPinned() && entry.count() == 1 && !isClosed()) {
            groupMap.computeIfPresent(entry.boxedKey, UNPIN_UNHELD);
        }
    }

    /**
     * Unpins, with the key's lock held, every entry of the group that only the cache holds, and
     * returns the group unchanged so that Caffeine re-weighs it: by its entry count if no entry is
     * pinned any more, else 0.
     */
    private static final BiFunction<Integer, Entry[], Entry[]> UNPIN_UNHELD = (key, group) -> {
        for (Entry entry : group) {
            entry.unpinIfUnheld();
        }
        return group;
    };

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
        ensureOpen();
        Integer boxedKey = key;
        Entry[] group = currentGroup(boxedKey);
        if (group != null && indexOfValue(group, value) >= 0) {
            statistics.add(DUPLICATES_REFUSED, 1);
            return false;
        }
        Entry entry = new Entry(this, boxedKey, value, reusable);
        if (!(group == null && insertFirst(boxedKey, entry))) {
            Insert insert = new Insert(entry, reclaimForCap);
            try {
                groupMap.compute(boxedKey, insert);
            } finally { // counted after the compute, even one Caffeine failed after the insert
                if (insert.leftSiblings) {
                    siblingGroupsCreated.incrementAndGet();
                }
            }
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
        if (isClosed()) { // close() ran meanwhile: its invalidateAll may have missed this insert
            groupMap.remove(boxedKey);
            ensureOpen();
        }
        statistics.add(CREATES, 1);
        long size = entryCount.get();
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
        long excess = entryCount.get() - synchronousReclaimThreshold + 1;
        if (excess <= 0) {
            return;
        }
        Entry[] own = currentGroup(boxedKey);
        long freed = own != null && own.length > 1 ? freeUnheldSiblings(boxedKey, excess) : 0;
        if (freed < excess && !knowsNoGroupHasSiblings()) {
            long siblingGroupsBeforeTheWalk = siblingGroupsCreated.get();
            long budget = entryCount.get(); // the groups present now: a bounded walk
            long spareWanted = excess - freed;
            List<Policy.CacheEntry<Integer, Entry[]>> coldest =
                    eviction.coldest(stream -> takeSiblingGroups(stream.iterator(), budget, spareWanted));
            if (coldest.isEmpty() && !anyGroupHasSiblings()) {
                noSiblingGroupsAsOf = siblingGroupsBeforeTheWalk; // later passes skip the walk
            }
            for (Policy.CacheEntry<Integer, Entry[]> snapshot : coldest) {
                if (freed >= excess) {
                    break;
                }
                freed += freeUnheldSiblings(snapshot.getKey(), excess - freed);
            }
        }
        if (freed > 0) {
            statistics.add(ENTRIES_RECLAIMED, freed);
        }
    }

    /**
     * Whether no group can have siblings: no insert has given a key a second value since a scan
     * found none. Then the synchronous pass has no sibling to free and skips its walk.
     */
    boolean knowsNoGroupHasSiblings() {
        return siblingGroupsCreated.get() == noSiblingGroupsAsOf;
    }

    /** A scan of the whole map, without Caffeine's eviction lock: does some key have two values? */
    private boolean anyGroupHasSiblings() {
        for (Entry[] group : groupMap.values()) {
            if (group.length > 1) {
                return true;
            }
        }
        return false;
    }

    /** Frees up to {@code wanted} of the key's oldest unheld entries if one of its entries is held. */
    private int freeUnheldSiblings(Integer boxedKey, long wanted) {
        TrimSiblings trim = new TrimSiblings((int) Math.min(wanted, Integer.MAX_VALUE));
        groupMap.computeIfPresent(boxedKey, trim);
        return trim.freed;
    }

    /** The remapping function of {@link #freeUnheldSiblings}. */
    private final class TrimSiblings implements BiFunction<Integer, Entry[], Entry[]> {
        private final int wanted;
        int freed;

        TrimSiblings(int wanted) {
            this.wanted = wanted;
        }

        @Override
        public Entry[] apply(Integer key, Entry[] group) {
            if (!anyPinned(group)) {
                return group; // Caffeine weighs it by its entries and can evict it itself
            }
            Entry[] trimmed = withoutOldestUnheld(group, wanted, null);
            freed = group.length - trimmed.length;
            return trimmed.length == 0 ? null : trimmed;
        }
    }

    /** Whether the group weighs 0 in Caffeine (held implies pinned). */
    private static boolean anyPinned(Entry[] group) {
        for (Entry entry : group) {
            if (entry.isPinned()) {
                return true;
            }
        }
        return false;
    }

    /**
     * The common create: the key had no group, so the entry becomes a group of its own by one
     * {@code putIfAbsent}, Caffeine's plain insert (no compute: none of the capture arrays and the
     * lambda of its {@code remap}). The group weighs 1: nobody can have pinned an entry that was
     * not visible yet. Counted before it is visible (size never undercounts), uncounted if another
     * group got there first; then the caller falls back to the compute.
     */
    private boolean insertFirst(Integer boxedKey, Entry entry) {
        Entry[] group = {entry}; // allocated before the count: a Throwable here counts nothing
        entryCount.incrementAndGet();
        if (groupMap.putIfAbsent(boxedKey, group) == null) {
            return true;
        }
        entryCount.decrementAndGet();
        return false;
    }

    /**
     * The remapping function of a create: prepends the entry unless the pair is already there,
     * freeing first the key's oldest unheld entries beyond {@code chainCap - 1} (the chain cap).
     */
    private final class Insert implements BiFunction<Integer, Entry[], Entry[]> {
        private final Entry entry;
        /** False for a restore's create: at the cap it leaves the group as it is instead. */
        private final boolean reclaimForCap;
        boolean inserted;
        /** Whether it left the group as it was because the cap was reached and it may not reclaim. */
        boolean chainFull;
        int capReclaimed;
        /** Whether the group it returned has more than one entry (counted in siblingGroupsCreated). */
        boolean leftSiblings;

        Insert(Entry entry, boolean reclaimForCap) {
            this.entry = entry;
            this.reclaimForCap = reclaimForCap;
        }

        @Override
        public Entry[] apply(Integer key, Entry[] group) {
            if (group == null) {
                Entry[] single = {entry}; // allocated before the count: a Throwable here counts nothing
                entryCount.incrementAndGet(); // before Caffeine publishes it: size() never undercounts
                inserted = true;
                return single;
            }
            if (indexOfValue(group, entry.value) >= 0) {
                return group;
            }
            int unheld = 0;
            for (Entry sibling : group) {
                if (sibling.count() == 1) {
                    unheld++;
                }
            }
            if (!reclaimForCap && unheld >= chainCap) {
                chainFull = true;
                return group;
            }
            Entry[] result = withoutOldestUnheld(group, unheld + 1 - chainCap, entry);
            capReclaimed = group.length + 1 - result.length;
            entryCount.incrementAndGet();
            inserted = true;
            leftSiblings = result.length > 1;
            return result;
        }
    }

    /**
     * With the key's lock held: the group without {@code wanted} of its oldest entries that nobody
     * holds (fewer if it has fewer), with {@code newest} prepended unless null; the entries left
     * out are dead and uncounted on return. The kernel port's chain cap, second chance included
     * ({@code Buckets.reclaimForRoom}): a first walk, oldest first, passes over referenced entries
     * and clears the flag of those nobody holds; only if it finds too few victims does a second
     * walk take the oldest unheld entries whatever their flag. Allocates before it kills, so a
     * Throwable of the allocation leaves the group as it was (but for flags cleared).
     *
     * <p>Victims are unpinned first (a CAS that fails only for an entry a lookup holds now: it is
     * passed over). An unpinned entry at count 1 can gain a reference only through a compute on the
     * key, which the caller's lock excludes, so once the array is allocated the kills (count 1 to 0)
     * cannot fail. An entry left unpinned by a victim search that then allocates nothing is only
     * evictable a little early, as after an unpin drain.
     */
    private Entry[] withoutOldestUnheld(Entry[] group, long wanted, Entry newest) {
        int extra = newest == null ? 0 : 1;
        if (wanted <= 0) {
            return extra == 0 ? group : prepend(newest, group);
        }
        boolean[] victim = new boolean[group.length];
        int victims = 0;
        for (int walk = 0; walk < 2 && victims < wanted; walk++) {
            for (int i = group.length - 1; i >= 0 && victims < wanted; i--) { // oldest first
                Entry entry = group[i];
                if (victim[i]) {
                    continue;
                }
                if (walk == 0 && entry.isReferenced()) {
                    if (entry.count() == 1) {
                        entry.clearReferenced(); // its second chance: passed over this once
                    }
                } else if (entry.unpinIfUnheld()) {
                    victim[i] = true;
                    victims++;
                }
            }
        }
        if (victims == 0) {
            return extra == 0 ? group : prepend(newest, group);
        }
        Entry[] result = new Entry[group.length - victims + extra];
        int next = 0;
        if (newest != null) {
            result[next++] = newest;
        }
        for (int i = 0; i < group.length; i++) {
            Entry entry = group[i];
            if (victim[i]) {
                if (!entry.killIfUnpinnedUnheld()) { // unpinned at count 1 under our lock
                    throw new AssertionError("a chain-cap victim gained a reference under its key's lock: "
                            + entry);
                }
                continue;
            }
            result[next++] = entry;
        }
        entryCount.addAndGet(-victims);
        return result;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Scans the key's group (read without a lock) newest first. A hit on a pinned entry is one
     * CAS; on an unpinned one, a compute that pins it. A miss takes no lock.
     */
    @Override
    public CacheEntry findFirst(int key) {
        ensureOpen();
        Entry[] group = currentGroup(key);
        return countLookup(group == null ? null : firstReusable(group, 0));
    }

    private Entry firstReusable(Entry[] group, int from) {
        for (int i = from; i < group.length; i++) {
            Entry candidate = group[i];
            if (candidate.reusable() && acquire(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /**
     * Counts a lookup that returns {@code found} as a hit or a miss; returns it. A miss is first
     * checked against a racing close ({@link #missUnlessClosed}), and then the only way this throws.
     */
    private Entry countLookup(Entry found) {
        Entry answer = found != null ? found : missUnlessClosed();
        statistics.add(answer != null ? LOOKUP_HITS : LOOKUP_MISSES, 1);
        return answer;
    }

    /**
     * A lookup's miss: null, or the closed cache's exception if {@code close()} ran meanwhile. A
     * lookup that passed its {@link #ensureOpen} just before a close can find the group dropped,
     * even for a pair held until the close; a miss would then say the pair is not cached, and from
     * {@code deleteOrGet} that nobody holds it. So every miss re-reads {@link #lifecycle} (and a
     * broken cache answers with its breach, as every call does). Memory order: {@code close()}
     * writes {@code lifecycle} (volatile) before it drops any group. A lookup that found the group
     * gone read that drop in Caffeine's map, whose bins and links are read with acquire or volatile
     * loads and written with release or volatile stores, or under the key's bin lock (a compute:
     * a pin, or {@code deleteOrGet}'s). Each of those reads happens after the close's write, so the
     * volatile read here sees it. One path rests on the hardware alone: Caffeine clears a dropped
     * node's value with a plain store, after the node left the map (under the node's monitor, whose
     * entry orders it after the close's earlier stores on x86 and AArch64); a lookup that read the
     * node before it left and its value after it was cleared has no happens-before edge to the
     * close. A miss that read nothing of the close (the pair was never there) may see the cache
     * open or closed: both are right for a call that overlapped the close.
     */
    private Entry missUnlessClosed() {
        ensureOpen();
        return null;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Continues after {@code entry} in the key's group as read on entry to the call; if
     * {@code entry} is no longer in it, restarts from the newest. Unlike the kernel, the reference to
     * {@code entry} is released before the next one is taken (the group read fixes the position), so
     * a release that throws (the caller held no reference after all) leaves no reference taken, and
     * a lookup that throws finds {@code entry} released already.
     */
    @Override
    public CacheEntry findNext(CacheEntry entry) {
        ensureOpen();
        Entry previous = ownEntry(entry);
        if (previous.count() < 2) {
            throw referenceNotHeld("findNext of an entry the caller does not hold: " + previous);
        }
        Entry[] group = currentGroup(previous.boxedKey);
        int from = group == null ? 0 : indexOf(group, previous) + 1; // -1 + 1: from the newest
        releaseReference(previous);
        return countLookup(group == null ? null : firstReusable(group, from));
    }

    /** {@inheritDoc} */
    @Override
    public CacheEntry get(int key, long value) {
        ensureOpen();
        Entry[] group = currentGroup(key);
        Entry found = null;
        if (group != null) {
            int index = indexOfValue(group, value);
            if (index >= 0 && acquire(group[index])) {
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
        ensureOpen();
        Integer boxedKey = key;
        Entry[] group = currentGroup(boxedKey);
        if (group == null || indexOfValue(group, value) < 0) {
            return missUnlessClosed();
        }
        DeleteOrGet deleteOrGet = new DeleteOrGet(value);
        groupMap.computeIfPresent(boxedKey, deleteOrGet);
        if (deleteOrGet.deleted) {
            statistics.add(DELETES, 1);
            return null;
        }
        return deleteOrGet.held != null ? deleteOrGet.held : missUnlessClosed();
    }

    /** The remapping function of {@link #deleteOrGet}. */
    private final class DeleteOrGet implements BiFunction<Integer, Entry[], Entry[]> {
        private final long value;
        boolean deleted;
        Entry held;

        DeleteOrGet(long value) {
            this.value = value;
        }

        @Override
        public Entry[] apply(Integer key, Entry[] group) {
            int index = indexOfValue(group, value);
            if (index < 0) {
                return group;
            }
            Entry entry = group[index];
            if (entry.killIfUnheld()) {
                deleted = true;
                entryCount.decrementAndGet();
                return without(group, index);
            }
            // Count >= 2 (dead entries are never in a group): somebody holds it, so it is pinned and
            // its group weighs 0 already; hand it to the caller too.
            if (entry.acquireAndPinUnderKeyLock()) {
                held = entry;
            }
            return group;
        }
    }

    /** {@inheritDoc} */
    @Override
    public void waitUnused(CacheEntry entry) throws InterruptedException {
        ensureOpen();
        awaitUnused(ownEntry(entry), Long.MAX_VALUE);
    }

    /** {@inheritDoc} */
    @Override
    public boolean waitUnused(CacheEntry entry, long timeout, TimeUnit unit) throws InterruptedException {
        ensureOpen();
        Entry own = ownEntry(entry);
        Objects.requireNonNull(unit, "unit");
        long nanos = unit.toNanos(timeout);
        return awaitUnused(own, nanos == Long.MAX_VALUE ? Long.MAX_VALUE - 1 : nanos);
    }

    /** Interrupted on entry: InterruptedException even if the entry is unused (the contract). */
    private boolean awaitUnused(Entry entry, long nanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (entry.count() <= 2) {
            return true;
        }
        boolean done = unusedWaiters.await(entry, () -> lifecycle != Lifecycle.OPEN || entry.count() <= 2, nanos);
        ensureOpen(); // closed (or broken) during the wait: the contract's IllegalStateException
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
        ensureOpen();
        Entry own = ownEntry(entry);
        own.setReferenced();
        groups.getIfPresent(own.boxedKey);
    }

    /** {@inheritDoc} */
    @Override
    public void release(CacheEntry entry) {
        ensureOpen();
        releaseReference(ownEntry(entry));
    }

    /** {@inheritDoc} */
    @Override
    public long size() {
        ensureOpen();
        return entryCount.get();
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
        ensureOpen();
        if (nrToScan < 0) {
            throw new IllegalArgumentException("nrToScan must not be negative, was " + nrToScan);
        }
        statistics.add(REQUESTED_RECLAIM_PASSES, 1);
        // Every entry present now may use its second chance once: bounded whatever creates or
        // touches run meanwhile.
        long present = entryCount.get();
        long limit = Math.min(nrToScan, Saturating.twice(present));
        long scanned = 0;
        long freed = 0;
        while (scanned < limit) {
            long budget = limit - scanned;
            List<Policy.CacheEntry<Integer, Entry[]>> coldest = eviction.coldest(stream -> takeEntries(stream.iterator(), budget));
            if (coldest.isEmpty()) {
                break;
            }
            long freedThisWalk = 0;
            boolean clearedAFlag = false;
            for (Policy.CacheEntry<Integer, Entry[]> snapshot : coldest) {
                Entry[] group = snapshot.getValue();
                Entry[] toFree = null; // the entries this scan examined and found free to go
                int toFreeCount = 0;
                boolean anySpared = false;
                for (int i = group.length - 1; i >= 0 && scanned < limit; i--) { // oldest first
                    Entry entry = group[i];
                    scanned++;
                    boolean wasReferenced = entry.clearReferenced();
                    clearedAFlag |= wasReferenced;
                    if (wasReferenced || entry.count() != 1) {
                        anySpared = true;
                    } else {
                        if (toFree == null) {
                            toFree = new Entry[i + 1];
                        }
                        toFree[toFreeCount++] = entry;
                    }
                }
                if (toFreeCount > 0) {
                    Reclaim reclaim = new Reclaim(toFree, toFreeCount);
                    groupMap.computeIfPresent(snapshot.getKey(), reclaim);
                    freedThisWalk += reclaim.freed;
                }
                if (anySpared) {
                    groups.getIfPresent(snapshot.getKey()); // second chance: an access in Caffeine's order
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
     * Collects, from Caffeine's coldest-first stream, the groups of more than one entry (only those
     * can have an unheld sibling of a held entry), until they have {@code spareWanted} entries beyond
     * their first or the groups looked at hold {@code budget} entries. Runs under Caffeine's eviction
     * lock, so it keeps no group it will not use.
     */
    private static List<Policy.CacheEntry<Integer, Entry[]>> takeSiblingGroups(
            Iterator<Policy.CacheEntry<Integer, Entry[]>> coldestFirst, long budget, long spareWanted) {
        List<Policy.CacheEntry<Integer, Entry[]>> taken = new ArrayList<>();
        long entries = 0;
        long spare = 0;
        while (entries < budget && spare < spareWanted && coldestFirst.hasNext()) {
            Policy.CacheEntry<Integer, Entry[]> next = coldestFirst.next();
            int length = next.getValue().length;
            entries += length;
            if (length > 1) {
                taken.add(next);
                spare += length - 1;
            }
        }
        return taken;
    }

    /** Collects groups from Caffeine's coldest-first stream until they hold {@code budget} entries. */
    private static List<Policy.CacheEntry<Integer, Entry[]>> takeEntries(
            Iterator<Policy.CacheEntry<Integer, Entry[]>> coldestFirst, long budget) {
        List<Policy.CacheEntry<Integer, Entry[]>> taken = new ArrayList<>();
        long entries = 0;
        while (entries < budget && coldestFirst.hasNext()) {
            Policy.CacheEntry<Integer, Entry[]> next = coldestFirst.next();
            taken.add(next);
            entries += next.getValue().length;
        }
        return taken;
    }

    /**
     * The remapping function of a reclaim: frees, under the key's lock, the entries the pass examined
     * and found unreferenced and unheld, if they are still in the group, still unreferenced and
     * held by nobody (CAS 1 to 0). Only those: an entry of the group that the pass did not examine
     * (beyond its scan limit) or spared (a second chance, or held) stays.
     */
    private final class Reclaim implements BiFunction<Integer, Entry[], Entry[]> {
        /** What the pass found free to go, in {@code freeable[0, freeableCount)}. */
        private final Entry[] freeable;
        private final int freeableCount;
        int freed;

        Reclaim(Entry[] freeable, int freeableCount) {
            this.freeable = freeable;
            this.freeableCount = freeableCount;
        }

        private boolean foundFreeable(Entry entry) {
            for (int i = 0; i < freeableCount; i++) {
                if (freeable[i] == entry) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public Entry[] apply(Integer key, Entry[] group) {
            Entry[] survivors = new Entry[group.length];
            int kept = 0;
            for (Entry entry : group) {
                if (foundFreeable(entry) && !entry.isReferenced() && entry.killIfUnheld()) {
                    freed++;
                } else {
                    survivors[kept++] = entry;
                }
            }
            if (freed == 0) {
                return group;
            }
            entryCount.addAndGet(-freed);
            if (kept == 0) {
                return null;
            }
            Entry[] result = new Entry[kept];
            System.arraycopy(survivors, 0, result, 0, kept);
            return result;
        }
    }

    /**
     * Caffeine's eviction listener: runs inside the compute that removes the group, with its key's
     * lock held. The group weighed more than 0, so no entry of it was held, and none can be pinned
     * now (pins need this lock): every count is 1 and goes to 0 here, so that a lookup still holding
     * the old group sees the entries as dead. A pinned or held entry here would mean that Caffeine
     * evicted a zero-weight group: the breach is recorded and rethrown by every later call
     * ({@link #ensureOpen}), because Caffeine only logs what its listener throws.
     */
    void onEvicted(Integer key, Entry[] group, RemovalCause cause) {
        if (group == null) {
            return;
        }
        int retired = 0;
        Entry breached = null;
        for (Entry entry : group) {
            if (!entry.isPinned() && entry.killIfUnheld()) {
                retired++;
            } else {
                breached = entry; // unreachable by the weigher invariant; never pass it silently
            }
        }
        entryCount.addAndGet(-group.length); // every entry left the map, breached ones too
        statistics.add(ENTRIES_RECLAIMED, retired);
        if (breached != null) {
            AssertionError breach = new AssertionError("Caffeine evicted an entry somebody holds: " + breached);
            // Kept only by an open cache (the first breach wins; a closed one stays closed). The
            // volatile CAS publishes it: every later ensureOpen sees it.
            if (LIFECYCLE.compareAndSet(this, Lifecycle.OPEN, Lifecycle.brokenBy(breach))) {
                // No release can succeed now (each rethrows the breach), so no waiter would ever
                // be woken by one: wake them all, to meet the breach in their ensureOpen.
                unusedWaiters.wakeAll();
            }
            throw breach;
        }
    }

    /** Run first by every background task: it counts as a background pass if the cache is at its bound. */
    private void countBackgroundPass() {
        if (entryCount.get() >= maxEntries) {
            statistics.add(BACKGROUND_RECLAIM_PASSES, 1);
        }
    }

    /** {@inheritDoc} */
    @Override
    public CacheStats stats() {
        ensureOpen();
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
                statistics.sum(CHAIN_CAP_RECLAIMS));
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
        ensureOpen();
        groups.cleanUp();
        List<Entry[]> order = eviction.coldest(CaffeineDedupCache::groupsInOrder);
        ensureOpen();
        return Snapshots.write(out, new SnapshotWalk(order));
    }

    /** The groups of Caffeine's coldest-first stream, references only. Runs under its eviction lock. */
    private static List<Entry[]> groupsInOrder(java.util.stream.Stream<Policy.CacheEntry<Integer, Entry[]>> coldest) {
        List<Entry[]> order = new ArrayList<>();
        for (Iterator<Policy.CacheEntry<Integer, Entry[]>> it = coldest.iterator(); it.hasNext(); ) {
            order.add(it.next().getValue());
        }
        return order;
    }

    /** The pairs of the groups, coldest group first, oldest value first within a group; live ones only. */
    private final class SnapshotWalk implements Snapshots.PairSource {
        private final List<Entry[]> order;
        private int group;
        /** The next index to look at in the current group, counting down (groups are newest first). */
        private int index = -1;

        SnapshotWalk(List<Entry[]> order) {
            this.order = order;
        }

        @Override
        public int next(int[] keys, long[] values, byte[] flags, int from, int max) {
            ensureOpen(); // close() dropped the groups: never end a snapshot short as if complete
            int copied = 0;
            while (copied < max) {
                if (index < 0) {
                    if (group == order.size()) {
                        break;
                    }
                    index = order.get(group++).length - 1;
                    continue;
                }
                Entry entry = order.get(group - 1)[index--];
                if (entry.count() == 0) {
                    continue; // removed since Caffeine's order was read
                }
                keys[from + copied] = entry.key;
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
        ensureOpen();
        long created = Snapshots.read(in, maxEntries - entryCount.get(),
                (key, value, reusable) -> create(key, value, reusable, false));
        ensureOpen(); // closed during the read: a restore that created nothing still reports it
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
        lifecycle = Lifecycle.CLOSED;
        if (tornDown) {
            return;
        }
        // Each step may run twice (a racing or retried close): each is idempotent.
        unpins.clear();
        groups.invalidateAll();
        groups.cleanUp();
        entryCount.set(0);
        unusedWaiters.wakeAll(); // after the volatile write of CLOSED: every waiter re-checks it
        tornDown = true;
    }

    /**
     * Throws the contract's exception after {@link #close()}, or the recorded invariant breach: one
     * volatile read (see {@link #lifecycle} for why volatile) and one comparison; the exceptions are
     * built off this path, in {@link #refuse}, so that this stays small enough to inline.
     */
    private void ensureOpen() {
        Lifecycle now = lifecycle;
        if (now != Lifecycle.OPEN) {
            refuse(now);
        }
    }

    /** Throws what a call gets from a cache that is not open (closed, or broken by a breach). */
    private static void refuse(Lifecycle now) {
        if (now == Lifecycle.CLOSED) {
            throw new IllegalStateException("cache is closed");
        }
        throw new AssertionError("cache invariant broken earlier: " + now.breach.getMessage(), now.breach);
    }

    /**
     * The exception for a caller's reference that an entry's count does not show: {@code misuse},
     * unless {@link #close()} has begun, when the call is told that the cache is closed, as every
     * call on a closed cache is. The one place every such refusal (a release, a {@code findNext}) is
     * decided, so that a call racing close() never blames the caller's references for the close.
     */
    IllegalStateException referenceNotHeld(String misuse) {
        return new IllegalStateException(isClosed() ? "cache is closed" : misuse);
    }

    /** Whether {@link #close()} has begun: one volatile read. */
    private boolean isClosed() {
        return lifecycle == Lifecycle.CLOSED;
    }

    /** The argument as an entry of this cache, or the contract's exception. */
    private Entry ownEntry(CacheEntry entry) {
        Objects.requireNonNull(entry, "entry");
        if (entry instanceof Entry && ((Entry) entry).cache == this) {
            return (Entry) entry;
        }
        throw new IllegalArgumentException("entry belongs to another cache: " + entry);
    }

    /** A short description: size bound and current size. */
    @Override
    public String toString() {
        return "CaffeineDedupCache[maxEntries=" + maxEntries + ", size=" + entryCount.get()
                + (isClosed() ? ", closed" : "") + "]";
    }
}
