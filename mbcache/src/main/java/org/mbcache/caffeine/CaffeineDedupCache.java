package org.mbcache.caffeine;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Weigher;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiFunction;
import org.mbcache.CacheEntry;
import org.mbcache.CacheStats;
import org.mbcache.DedupCache;
import org.mbcache.internal.HashedWaitQueues;

/**
 * A {@link DedupCache} on top of a bounded Caffeine cache, with the full mbcache contract: the
 * comparison baseline for the kernel port {@link org.mbcache.MbCache}.
 *
 * <h2>Layout</h2>
 * The Caffeine cache maps each 32-bit key (boxed) to that key's <em>group</em>: an immutable array of
 * its entries, newest first, the kernel's hash chain restricted to one key. A {@code (key, value)} pair
 * therefore needs no 96-bit composite key object: the int key finds the group, and the value is a
 * scan of a group that almost always holds one entry. Groups are copy-on-write; every change to a
 * group (insert, remove, pin, unpin) is an {@code asMap()} atomic compute on its key, so all changes of
 * one key are serialized by Caffeine's per-key lock, while lookups read the current group without any
 * lock through {@link Policy#getIfPresentQuietly}. Each entry keeps its reference count (the cache's
 * own reference counts 1) and a PINNED bit in one volatile int, and its flags in another.
 *
 * <h2>How held entries are kept (the journal-corruption race)</h2>
 * Caffeine evicts by its own policy, so a held entry must be out of that policy's reach. The
 * {@link Weigher} gives a group weight 0 while any of its entries is <em>pinned</em>, and otherwise its
 * number of entries; the cache's maximum weight is {@code maxEntries}. Caffeine never evicts a
 * zero-weight entry: its eviction re-reads the node's weight under the node's lock, inside the same
 * map compute that would remove it, and keeps ("resurrects") the node when the weight is 0
 * ({@code BoundedLocalCache.evictEntry} in Caffeine 3.2; the pinning tests fail should a later
 * version drop that re-check). The
 * PINNED bit is set and cleared only inside computes on the key, and the weigher runs in the same
 * compute, so "an entry is pinned" implies "its group weighs 0" whenever eviction can look. The
 * invariant that makes it safe is "held implies pinned" (count {@code >= 2} implies PINNED):
 * <ul>
 *   <li>a lookup takes a reference without any lock only if the entry is pinned: a CAS of the count
 *       word from {@code (c, PINNED)} to {@code (c + 1, PINNED)}, however small {@code c};</li>
 *   <li>an unpinned entry is first pinned inside an {@code asMap().computeIfPresent} on its key
 *       (the entry is its own remapping function, so nothing of ours is allocated), which Caffeine
 *       re-weighs to 0 before it releases the lock; the reference is then taken by that same
 *       lock-free CAS (should an unpin drain get in between, the CAS sees the entry unpinned and
 *       the lookup pins it again);</li>
 *   <li>a release only decrements the count: the entry stays pinned (so the next lookup of a hot
 *       entry is again a lock-free CAS) and goes, once, on a lazy-unpin stack;</li>
 *   <li>unpinning (a batch drain of that stack) clears PINNED inside a compute by a CAS from exactly
 *       {@code (1, PINNED)} to {@code (1)}: on the same word as the lookups' CAS, so a lookup either
 *       gets there first (count 2: the entry stays pinned) or sees it unpinned and takes the locked
 *       path. Then Caffeine re-weighs the group, and can evict it.</li>
 * </ul>
 * Every removal of ours (reclaim, {@code deleteOrGet}) drops the cache's reference by a CAS from count
 * 1 to 0 inside a compute; Caffeine's own eviction only ever sees unpinned entries at count 1 and
 * retires them to 0 in its eviction listener, which runs inside the removing compute. A lookup that
 * finds count 0 skips the entry.
 *
 * <p>Unpinning is lazy because pinned but unheld entries cost nothing until the cache holds more
 * than {@code maxEntries}: below that, Caffeine would not evict anything anyway. A drain is handed
 * to the executor once the stack holds {@code unpinBatch = maxEntries / 16} entries and the cache
 * holds more than {@code maxEntries}, and a create that finds the cache over its bound with such a
 * backlog asks for one too; the drain unpins all but the {@code unpinBatch / 2} newest live entries
 * on the stack (the hot ones, which the next lookups would only pin again). So pinned but unheld
 * entries add at most about {@code maxEntries / 16} to the size once the cache is over its bound.
 * At or below the bound, a drain (due when the stack holds twice as many entries as the cache, so
 * that dead ones do not pile up) only unlinks the dead entries: a read-mostly cache at its bound
 * keeps its entries pinned, and its lookups are lock-free CASes. The unit
 * Caffeine evicts is the group, so while one entry of a key is pinned, the key's other entries (hash
 * collisions: rare with 32-bit keys) are out of Caffeine's reach too; {@link #shrink}, which works
 * entry by entry, still frees them.
 *
 * <h2>Cost per operation, compared with {@link org.mbcache.MbCache}</h2>
 * MbCache: one bucket spinlock and one reference-count CAS per lookup, no allocation on lookups nor on
 * refused duplicates. Here:
 * <ul>
 *   <li>{@code findFirst}/{@code get} of a pinned entry (held now, or used since the last unpin
 *       drain: every used entry while the cache is at or below its bound, the hot ones above it): a
 *       lock-free map read plus one CAS, no lock and no allocation of ours. Of an unpinned entry:
 *       the same read plus one Caffeine {@code computeIfPresent} to pin it (a map bin lock, the
 *       node's monitor, the weigher, Caffeine's own capture arrays and a write-buffer task for the
 *       weight change, and maintenance on the executor), about as much again later for the unpin.
 *       Every Caffeine write is expensive when its maintenance runs on a busy pool: once its write
 *       buffer is full, the writer spins and then runs the maintenance itself. So the design keeps
 *       pins sticky and unpins only under eviction pressure. Caffeine counts the pin as an access
 *       (recency and frequency); later lock-free lookups are not counted (neither are the kernel's).</li>
 *   <li>a miss: one lock-free read. Every call that takes an int key boxes it; outside
 *       {@code [-128, 127]} that is a 16-byte {@code Integer} per call unless escape analysis removes
 *       it (the kernel port allocates nothing): the 16 to 18 B/op of the lookups below.</li>
 *   <li>{@code release}: a CAS, plus, the first time since the last drain, a push onto the intrusive
 *       unpin stack (a CAS, no allocation) and a counter increment.</li>
 *   <li>{@code create}: a lock-free duplicate check (a refused duplicate allocates nothing but the
 *       key box); otherwise the entry, a one-entry group and Caffeine's {@code putIfAbsent} (its
 *       plain insert), or, for a key that already has a group, a grown group and one compute;
 *       Caffeine then schedules its maintenance on the executor.</li>
 *   <li>{@code deleteOrGet}: a lock-free read, then one compute that either removes the entry (CAS
 *       1 to 0) or takes a reference for the caller; the kernel's does the same under its bucket lock.</li>
 *   <li>{@code touch}: an atomic flag update (skipped if set) plus a {@code getIfPresent}, which
 *       records the access in Caffeine's lossy read buffer and so feeds its frequency sketch.</li>
 *   <li>{@code shrink}: a snapshot of Caffeine's eviction order under its eviction lock (which runs
 *       pending maintenance first), then one compute per group with something to free.</li>
 * </ul>
 *
 * <p>Measured (mbcache-bench {@code Micro} and {@code Mixed}, 1 thread, keys uniform, load full:
 * 65,536 pairs, maxEntries 65,536, executor the common pool; JMH 1 fork, 3 x 1 s warm-up, 3 x 500 ms
 * measurement, two runs each, on a noisy 2-core machine), before and after lookups stopped
 * unpinning at the bound, pins stopped allocating and creates of a new key stopped computing:
 * <table>
 *   <caption>ns/op and B/op, range over two runs: before, then after</caption>
 *   <tr><th>benchmark</th><th>before</th><th>after</th></tr>
 *   <tr><td>findFirstHit (findFirst + release)</td><td>6,400-8,000 ns, 610-620 B</td><td>560-590 ns, 18 B</td></tr>
 *   <tr><td>getRelease (get + release)</td><td>4,900-12,700 ns, 605-643 B</td><td>490-590 ns, 18 B</td></tr>
 *   <tr><td>findCompareTouch</td><td>4,600-7,500 ns, 988 B</td><td>1,100-1,300 ns, 18-19 B</td></tr>
 *   <tr><td>createNew (full cache: evicts)</td><td>1,700-3,400 ns, 650-662 B</td><td>650-1,200 ns, 340 B</td></tr>
 *   <tr><td>churn (create + deleteOrGet)</td><td>1,300-2,300 ns, 842 B</td><td>1,100-2,800 ns, 530 B</td></tr>
 *   <tr><td>createDuplicate</td><td>530-540 ns, 18 B</td><td>490-520 ns, 18 B</td></tr>
 *   <tr><td>findFirstMiss</td><td>50-66 ns, 16 B</td><td>43-51 ns, 16 B</td></tr>
 *   <tr><td>Mixed (1 reader, 1 writer)</td><td>7,500-21,000 ns, 680-720 B</td><td>3,700-5,600 ns, 160-250 B</td></tr>
 * </table>
 * Before, every lookup at full load went through two computes (pin, and a later unpin: a drain ran
 * every {@code maxEntries / 16} releases because the cache was at its bound), each a Caffeine write;
 * after, a lookup pins an entry once and later lookups are lock-free. A pin still costs a compute
 * the first time (a cold cache's first pass, or under eviction pressure) and a write-heavy cache
 * still pays Caffeine's write path (capture arrays, write-buffer tasks, maintenance), which the
 * kernel port does not have.
 *
 * <h2>Reclaim</h2>
 * Automatic reclaim is Caffeine's: Window TinyLFU over the groups, with the group's entry count as its
 * weight, instead of the kernel's second-chance LRU over entries. {@link #touch} sets the entry's
 * referenced flag and records an access with Caffeine. Caffeine's maintenance and the unpin drains run
 * on the executor ({@link ForkJoinPool#commonPool()} unless {@linkplain Builder#executor set}), the
 * analogue of the kernel's background pass. Because that work is buffered, a create that sees
 * {@code size() >= 2 * maxEntries} drains the unpin stack and calls {@link Cache#cleanUp()} on its own
 * thread, the analogue of the kernel's synchronous pass: seen from one thread, {@code size()} never
 * exceeds {@code 2 * maxEntries} plus the creates in flight on other threads and the entries that are
 * held (which nothing may free). A same-thread executor ({@code Runnable::run}) runs all of it on the
 * calling threads. Caffeine may also evict a brand-new entry at once (admission), which the contract
 * allows.
 *
 * <p>{@link #shrink} maps the kernel's pass onto Caffeine's {@link Policy.Eviction#coldest(
 * java.util.function.Function) coldest} order: it walks groups coldest first and, within a group, its
 * entries oldest first; each entry counts as scanned. A referenced entry has its flag cleared and
 * gets a second chance, a held one is skipped (its flag cleared too), any other entry, pinned or not,
 * is freed by a CAS of its count from 1 to 0 inside a compute. It differs from the kernel in that a
 * survivor is not moved to the tail of a list: the pass records an access for its group instead,
 * which Caffeine applies to its own order (and may drop, its read buffer being lossy), so a later pass
 * may look at the same held entries again first. When a walk reached the end of Caffeine's order
 * without using up {@code nrToScan}, another walk follows, unless the last one freed nothing and
 * cleared no flag: then nothing more can be freed, and {@code shrink(Long.MAX_VALUE)} returns.
 *
 * <h2>Statistics</h2>
 * Caffeine's own {@code recordStats()} is not enabled: it would time every compute with two clock
 * reads and count the pin and unpin computes as "loads", and its hit and miss counters count groups,
 * not entries. The counter it would give that does map (evictions by weight, that is entries) is
 * taken from the same eviction notification, in the eviction listener. Everything else is counted
 * here, in {@link LongAdder}s. Background passes are tasks (Caffeine maintenance or unpin drains) run
 * on the executor that start with {@code size() >= maxEntries}.
 *
 * <p>Not registered with {@link org.mbcache.MbCache}'s memory-pressure registry: a heap-pressure
 * shrink of this backend would have to be wired by the caller through {@link #shrink}.
 */
public final class CaffeineDedupCache implements DedupCache {

    /** maxEntries of {@link #builder()} when none is given: ext4's (1024 buckets, 16 per bucket). */
    static final long DEFAULT_MAX_ENTRIES = 16_384;

    /**
     * A group's weight: 0 while any of its entries is pinned (held by a caller now, or lately and not
     * yet unpinned), so that Caffeine's size eviction never takes it; its entry count otherwise.
     * Called by Caffeine inside the compute that produced the group, with the key's lock held; the
     * PINNED bits change only under that lock, so what it reads is what the compute left.
     */
    private static final Weigher<Integer, Entry[]> PINNED_GROUPS_WEIGH_NOTHING = (key, group) -> {
        for (Entry entry : group) {
            if (entry.isPinned()) {
                return 0;
            }
        }
        return group.length;
    };

    private final long maxEntries;
    /** {@code 2 * maxEntries}, saturated: a create that sees this many entries runs maintenance itself. */
    private final long synchronousReclaimThreshold;
    private final Cache<Integer, Entry[]> groups;
    private final ConcurrentMap<Integer, Entry[]> groupMap;
    private final Policy<Integer, Entry[]> policy;
    private final Policy.Eviction<Integer, Entry[]> eviction;
    private final HashedWaitQueues unusedWaiters = new HashedWaitQueues(6);
    /** Runs Caffeine's maintenance and the unpin drains: the builder's executor, stopped by close(). */
    private final Executor maintenanceExecutor;

    /** Released entries still pinned, waiting to be unpinned in a batch (intrusive stack). */
    private final AtomicReference<Entry> unpinStack = new AtomicReference<>();
    /** Entries pushed onto {@link #unpinStack} and not yet drained. */
    private final AtomicLong unpinBacklog = new AtomicLong();
    private final AtomicBoolean unpinDrainScheduled = new AtomicBoolean();
    /** Held by every unpin drain: one at a time, and a synchronous pass waits for a running one. */
    private final ReentrantLock drainLock = new ReentrantLock();
    /** Backlog at which a drain is handed to the executor: {@code max(1, maxEntries / 16)}. */
    private final long unpinBatch;

    /** Entries in the cache: incremented before an entry is visible, decremented when it leaves. */
    private final AtomicLong entryCount = new AtomicLong();
    private volatile boolean closed;

    private final LongAdder creates = new LongAdder();
    private final LongAdder duplicatesRefused = new LongAdder();
    private final LongAdder lookupHits = new LongAdder();
    private final LongAdder lookupMisses = new LongAdder();
    private final LongAdder deletes = new LongAdder();
    private final LongAdder entriesReclaimed = new LongAdder();
    private final LongAdder backgroundReclaimPasses = new LongAdder();
    private final LongAdder synchronousReclaimPasses = new LongAdder();
    private final LongAdder requestedReclaimPasses = new LongAdder();

    private CaffeineDedupCache(long maxEntries, Executor executor) {
        this.maxEntries = maxEntries;
        this.synchronousReclaimThreshold = maxEntries > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : 2 * maxEntries;
        this.unpinBatch = Math.max(1, maxEntries / 16);
        Executor maintenance = task -> {
            if (!closed) { // close() stops background reclaim
                executor.execute(() -> runMaintenance(task));
            }
        };
        this.maintenanceExecutor = maintenance;
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
     * A builder; by default {@code maxEntries} is 16,384 and the executor
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
        private int chainCap;

        private Builder() {}

        /**
         * Sets the most values one key keeps while nobody holds them: a create that would give a key
         * more first reclaims that key's oldest unheld value. Default: as {@code MbCache}'s default
         * chain cap for the same {@code maxEntries}.
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
         * Sets the executor that runs Caffeine's maintenance (eviction): the background reclaim.
         * {@code Runnable::run} runs it on the calling threads instead.
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
            return new CaffeineDedupCache(maxEntries, executor);
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

    /** Entries waiting on the lazy-unpin stack (live or dead): for tests. */
    long unpinBacklog() {
        return unpinBacklog.get();
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
        volatile int state = 1;

        /**
         * {@link #REUSABLE}, {@link #REFERENCED} and {@link #UNPIN_QUEUED}, in one word changed only by
         * atomic {@code getAndBitwiseOr/And} (volatile mode), so setting one flag never loses a
         * concurrent change of another (kernel fix a44e84a9b776). Volatile reads: a reader must not
         * keep using a stale value in a loop (ext4 would spin on a stale reusable bit); opaque would
         * do for coherence, and volatile costs the same plain load on x86.
         */
        volatile int flags;

        /** The next entry on the lazy-unpin stack; written before the push's CAS publishes it. */
        Entry nextToUnpin;

        Entry(CaffeineDedupCache cache, Integer boxedKey, long value, boolean reusable) {
            this.cache = cache;
            this.boxedKey = boxedKey;
            this.key = boxedKey;
            this.value = value;
            this.flags = reusable ? REUSABLE : 0;
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
            return (flags & REUSABLE) != 0;
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
            if ((flags & REFERENCED) == 0) {
                FLAGS.getAndBitwiseOr(this, REFERENCED);
            }
        }

        /** Clears REFERENCED; returns whether it was set. */
        boolean clearReferenced() {
            return (flags & REFERENCED) != 0
                    && ((int) FLAGS.getAndBitwiseAnd(this, ~REFERENCED) & REFERENCED) != 0;
        }

        boolean isReferenced() {
            return (flags & REFERENCED) != 0;
        }

        /** Sets UNPIN_QUEUED; returns whether this call set it (and so must push the entry). */
        boolean markUnpinQueued() {
            return (flags & UNPIN_QUEUED) == 0
                    && ((int) FLAGS.getAndBitwiseOr(this, UNPIN_QUEUED) & UNPIN_QUEUED) == 0;
        }

        void clearUnpinQueued() {
            FLAGS.getAndBitwiseAnd(this, ~UNPIN_QUEUED);
        }

        static int count(int state) {
            return state & COUNT_MASK;
        }

        int count() {
            return count(state);
        }

        /** Whether this entry currently keeps its group at weight 0. */
        boolean isPinned() {
            return (state & PINNED) != 0;
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
                int s = state;
                if (count(s) == 0) {
                    return -1;
                }
                if ((s & PINNED) == 0) {
                    return 0;
                }
                checkOverflow(s);
                if (STATE.compareAndSet(this, s, s + 1)) {
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
                int s = state;
                if (count(s) == 0) {
                    return false;
                }
                checkOverflow(s);
                if (STATE.compareAndSet(this, s, (s + 1) | PINNED)) {
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
                    int s = state;
                    if (count(s) == 0 || (s & PINNED) != 0 || STATE.compareAndSet(this, s, s | PINNED)) {
                        break;
                    }
                }
            }
            return group;
        }

        /** Drops the cache's reference if nobody else holds one: count 1 to dead. Only inside a compute. */
        boolean killIfUnheld() {
            for (;;) {
                int s = state;
                if (count(s) != 1) {
                    return false;
                }
                if (STATE.compareAndSet(this, s, 0)) {
                    return true;
                }
            }
        }

        /**
         * Clears PINNED if nobody but the cache holds the entry. Only inside a compute on the key. A
         * lookup's lock-free increment and this CAS are on the same word, so either the lookup wins
         * (count 2: the entry stays pinned) or this does (the lookup then sees it unpinned and pins
         * it again under the lock).
         */
        void unpinIfUnheld() {
            for (;;) {
                int s = state;
                if (s != (1 | PINNED)) {
                    return;
                }
                if (STATE.compareAndSet(this, s, 1)) {
                    return;
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
                int s = state;
                int count = count(s);
                if (count <= 1) {
                    throw new IllegalStateException("entry released more often than it was handed out: " + this);
                }
                if (STATE.compareAndSet(this, s, s - 1)) {
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
            int s = state;
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
        if (remaining <= 2) {
            unusedWaiters.wake(entry); // after the volatile CAS above: see HashedWaitQueues
        }
        if (remaining == 1 && entry.markUnpinQueued()) {
            pushToUnpin(entry);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Lazy unpinning
    // ---------------------------------------------------------------------------------------------

    /**
     * Pushes an entry onto the lazy-unpin stack (an intrusive Treiber stack: no allocation). Pinned
     * but unheld entries cost nothing while the cache is below {@code maxEntries} (Caffeine would not
     * evict anyway), so a drain is due only once the backlog reaches {@link #unpinBatch} and either
     * the cache is full or the stack holds more entries than the cache (dead ones: the stack must not
     * grow without bound). It is handed to the executor; at four batches (an executor that falls
     * behind) this thread drains.
     */
    private void pushToUnpin(Entry entry) {
        Entry head;
        do {
            head = unpinStack.get();
            entry.nextToUnpin = head; // published by the CAS below
        } while (!unpinStack.compareAndSet(head, entry));
        long backlog = unpinBacklog.incrementAndGet();
        if (backlog < unpinBatch) {
            return;
        }
        long size = entryCount.get();
        if (size <= maxEntries && backlog <= 2 * size) {
            return; // no eviction is due (pinned entries cost nothing yet), few dead entries queued
        }
        if (!scheduleUnpinDrain() && backlog >= 4 * unpinBatch && drainLock.tryLock()) {
            try { // a drain was pending already and has not started: the executor is behind
                drainUnpins(drainKeep());
            } finally {
                drainLock.unlock();
            }
        }
    }

    /**
     * Hands one unpin drain to the executor unless one is pending (or drains here if it refuses).
     *
     * @return whether this call scheduled (or ran) one; {@code false} if one was pending already
     */
    private boolean scheduleUnpinDrain() {
        if (!unpinDrainScheduled.compareAndSet(false, true)) {
            return false;
        }
        try {
            maintenanceExecutor.execute(runScheduledUnpinDrain);
        } catch (RuntimeException rejected) {
            unpinDrainScheduled.set(false);
            runScheduledUnpinDrain.run();
        }
        return true;
    }

    /** The unpin drain handed to the executor: one preallocated task. */
    private final Runnable runScheduledUnpinDrain = () -> {
        drainLock.lock();
        try {
            drainUnpins(drainKeep());
        } finally {
            drainLock.unlock();
            unpinDrainScheduled.set(false);
        }
    };

    /**
     * How many of the newest live entries a background drain leaves pinned on the stack: above
     * {@code maxEntries}, {@code unpinBatch / 2} (the hot ones, which the next lookups would pin
     * again at once); at or below it none needs to become evictable, so the drain only unlinks the
     * dead ones.
     */
    private long drainKeep() {
        return entryCount.get() > maxEntries ? unpinBatch / 2 : Long.MAX_VALUE;
    }

    /**
     * Walks the lazy-unpin stack, newest first, with {@link #drainLock} held (one drain at a time,
     * and a synchronous pass that waits for the lock finds every earlier drain finished). Dead
     * entries are unlinked; of the live ones the newest {@code keep} stay on the stack, pinned, and
     * every other one is unlinked and, if only the cache holds it, unpinned: one compute on its key
     * ({@link #UNPIN_UNHELD}), after which Caffeine weighs the group again by its entry count, so
     * its eviction can take it. Only this (single) consumer changes the links below the head;
     * releases only push onto the head, so unlinking there needs no CAS. The UNPIN_QUEUED flag is
     * cleared before an unlinked entry is looked at, so a release after this look pushes it again.
     *
     * @param keep how many live entries to leave queued; 0 takes the whole stack
     */
    private void drainUnpins(long keep) {
        long unlinked = 0;
        if (keep == 0) {
            Entry entry = unpinStack.getAndSet(null);
            while (entry != null) {
                Entry next = entry.nextToUnpin;
                unpinUnlinked(entry);
                unlinked++;
                entry = next;
            }
        } else {
            Entry kept = unpinStack.get(); // the head stays: only a CAS could take it off
            if (kept == null) {
                return;
            }
            long live = 1;
            Entry entry = kept.nextToUnpin;
            while (entry != null) {
                Entry next = entry.nextToUnpin;
                if (live < keep && entry.count() != 0) {
                    live++;
                    kept = entry;
                } else {
                    kept.nextToUnpin = next;
                    unpinUnlinked(entry);
                    unlinked++;
                }
                entry = next;
            }
        }
        if (unlinked > 0) {
            unpinBacklog.addAndGet(-unlinked);
        }
    }

    /** An entry just unlinked from the stack: off it for good, unpinned if only the cache holds it. */
    private void unpinUnlinked(Entry entry) {
        entry.nextToUnpin = null;
        entry.clearUnpinQueued();
        if (entry.isPinned() && entry.count() == 1 && !closed) {
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
     * <p>A duplicate already cached is refused by a lock-free read of the key's group, allocating
     * nothing but the key box. Otherwise, if the key had no group, the entry becomes one by
     * Caffeine's {@code putIfAbsent}; if it had one (or another creator's group got there first),
     * the entry is inserted by one {@code asMap().compute} on the key, which re-checks for the pair
     * under the key's lock. Either way the insert is atomic, so of racing creators of one pair
     * exactly one inserts (there is no "being created" state to see; a creator that loses that race
     * has allocated its entry in vain, as in the kernel's allocate-first create). If the cache is
     * over its bound with a backlog of lately used pinned entries, a drain is handed to the
     * executor; if it holds {@code 2 * maxEntries} entries or more, this thread waits for any drain
     * in progress, unpins every unheld entry on the stack and runs Caffeine's pending maintenance
     * ({@link Cache#cleanUp()}) before returning.
     */
    @Override
    public boolean create(int key, long value, boolean reusable) {
        ensureOpen();
        Integer boxedKey = key;
        Entry[] group = currentGroup(boxedKey);
        if (group != null && indexOfValue(group, value) >= 0) {
            duplicatesRefused.increment();
            return false;
        }
        Entry entry = new Entry(this, boxedKey, value, reusable);
        if (!(group == null && insertFirst(boxedKey, entry))) {
            Insert insert = new Insert(entry);
            groupMap.compute(boxedKey, insert);
            if (!insert.inserted) {
                duplicatesRefused.increment();
                return false;
            }
        }
        creates.increment();
        long size = entryCount.get();
        if (size > maxEntries && unpinBacklog.get() >= unpinBatch) {
            scheduleUnpinDrain(); // lately held entries must become evictable again
        }
        if (size >= synchronousReclaimThreshold) {
            synchronousReclaimPasses.increment();
            drainLock.lock(); // waits for a drain in progress: then every unheld entry is unpinned
            try {
                drainUnpins(0); // every lately held entry becomes evictable again
            } finally {
                drainLock.unlock();
            }
            groups.cleanUp(); // and Caffeine evicts down to maxEntries now, on this thread
        }
        return true;
    }

    /**
     * The common create: the key had no group, so the entry becomes a group of its own by one
     * {@code putIfAbsent}, Caffeine's plain insert (no compute: none of the capture arrays and the
     * lambda of its {@code remap}). The group weighs 1: nobody can have pinned an entry that was
     * not visible yet. Counted before it is visible (size never undercounts), uncounted if another
     * group got there first; then the caller falls back to the compute.
     */
    private boolean insertFirst(Integer boxedKey, Entry entry) {
        entryCount.incrementAndGet();
        if (groupMap.putIfAbsent(boxedKey, new Entry[] {entry}) == null) {
            return true;
        }
        entryCount.decrementAndGet();
        return false;
    }

    /** The remapping function of a create: prepends the entry unless the pair is already there. */
    private final class Insert implements BiFunction<Integer, Entry[], Entry[]> {
        private final Entry entry;
        boolean inserted;

        Insert(Entry entry) {
            this.entry = entry;
        }

        @Override
        public Entry[] apply(Integer key, Entry[] group) {
            if (group != null && indexOfValue(group, entry.value) >= 0) {
                return group;
            }
            entryCount.incrementAndGet(); // before Caffeine publishes the new group: size() never undercounts
            inserted = true;
            return prepend(entry, group);
        }
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

    private Entry countLookup(Entry found) {
        (found != null ? lookupHits : lookupMisses).increment();
        return found;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Continues after {@code entry} in the key's current group; if {@code entry} is no longer in it,
     * restarts from the newest. The reference to {@code entry} is released after the next one is
     * taken, as in the kernel.
     */
    @Override
    public CacheEntry findNext(CacheEntry entry) {
        Entry previous = ownEntry(entry);
        ensureOpen();
        if (previous.count() < 2) {
            throw new IllegalStateException("findNext of an entry the caller does not hold: " + previous);
        }
        Entry next = null;
        try {
            Entry[] group = currentGroup(previous.boxedKey);
            if (group != null) {
                next = firstReusable(group, indexOf(group, previous) + 1); // -1 + 1: from the newest
            }
        } finally {
            releaseReference(previous);
        }
        return countLookup(next);
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
            return null;
        }
        DeleteOrGet deleteOrGet = new DeleteOrGet(value);
        groupMap.computeIfPresent(boxedKey, deleteOrGet);
        if (deleteOrGet.deleted) {
            deletes.increment();
        }
        return deleteOrGet.held;
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
        Entry own = ownEntry(entry);
        ensureOpen();
        awaitUnused(own, Long.MAX_VALUE);
    }

    /** {@inheritDoc} */
    @Override
    public boolean waitUnused(CacheEntry entry, long timeout, TimeUnit unit) throws InterruptedException {
        Entry own = ownEntry(entry);
        Objects.requireNonNull(unit, "unit");
        ensureOpen();
        long nanos = unit.toNanos(timeout);
        return awaitUnused(own, nanos == Long.MAX_VALUE ? Long.MAX_VALUE - 1 : Math.max(0L, nanos));
    }

    private boolean awaitUnused(Entry entry, long nanos) throws InterruptedException {
        if (entry.count() <= 2) {
            return true;
        }
        boolean done = unusedWaiters.await(entry, () -> closed || entry.count() <= 2, nanos);
        ensureOpen(); // closed during the wait: the contract's IllegalStateException
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
        Entry own = ownEntry(entry);
        ensureOpen();
        own.setReferenced();
        groups.getIfPresent(own.boxedKey);
    }

    /** {@inheritDoc} */
    @Override
    public void release(CacheEntry entry) {
        Entry own = ownEntry(entry);
        ensureOpen();
        releaseReference(own);
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
     * as described in the class documentation.
     */
    @Override
    public long shrink(long nrToScan) {
        ensureOpen();
        if (nrToScan < 0) {
            throw new IllegalArgumentException("nrToScan must not be negative, was " + nrToScan);
        }
        requestedReclaimPasses.increment();
        long scanned = 0;
        long freed = 0;
        while (scanned < nrToScan) {
            long budget = nrToScan - scanned;
            List<Policy.CacheEntry<Integer, Entry[]>> coldest = eviction.coldest(stream -> takeEntries(stream.iterator(), budget));
            if (coldest.isEmpty()) {
                break;
            }
            long freedThisWalk = 0;
            boolean clearedAFlag = false;
            for (Policy.CacheEntry<Integer, Entry[]> snapshot : coldest) {
                Entry[] group = snapshot.getValue();
                boolean anyToFree = false;
                boolean anySpared = false;
                for (int i = group.length - 1; i >= 0 && scanned < nrToScan; i--) { // oldest first
                    Entry entry = group[i];
                    scanned++;
                    boolean wasReferenced = entry.clearReferenced();
                    clearedAFlag |= wasReferenced;
                    if (wasReferenced || entry.count() != 1) {
                        anySpared = true;
                    } else {
                        anyToFree = true;
                    }
                }
                if (anyToFree) {
                    Reclaim reclaim = new Reclaim(group);
                    groupMap.computeIfPresent(snapshot.getKey(), reclaim);
                    freedThisWalk += reclaim.freed;
                }
                if (anySpared) {
                    groups.getIfPresent(snapshot.getKey()); // second chance: an access in Caffeine's order
                }
            }
            freed += freedThisWalk;
            boolean reachedTheEnd = scanned < nrToScan;
            if (!reachedTheEnd || (freedThisWalk == 0 && !clearedAFlag)) {
                break;
            }
        }
        if (freed > 0) {
            entriesReclaimed.add(freed);
        }
        return freed;
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
     * The remapping function of a reclaim: frees, under the key's lock, the entries of the scanned
     * snapshot that are still in the group, still unreferenced and held by nobody (CAS 1 to 0).
     */
    private final class Reclaim implements BiFunction<Integer, Entry[], Entry[]> {
        private final Entry[] scanned;
        int freed;

        Reclaim(Entry[] scanned) {
            this.scanned = scanned;
        }

        @Override
        public Entry[] apply(Integer key, Entry[] group) {
            Entry[] survivors = new Entry[group.length];
            int kept = 0;
            for (Entry entry : group) {
                if (indexOf(scanned, entry) >= 0 && !entry.isReferenced() && entry.killIfUnheld()) {
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
     * the old group sees the entries as dead.
     */
    private void onEvicted(Integer key, Entry[] group, RemovalCause cause) {
        if (group == null) {
            return;
        }
        int retired = 0;
        for (Entry entry : group) {
            if (!entry.isPinned() && entry.killIfUnheld()) {
                retired++;
            } else {
                // Unreachable by the weigher invariant; never corrupt silently.
                throw new AssertionError("Caffeine evicted a held entry: " + entry);
            }
        }
        entryCount.addAndGet(-retired);
        entriesReclaimed.add(retired);
    }

    /** Runs one Caffeine maintenance task on the executor, counting it as a background pass if due. */
    private void runMaintenance(Runnable task) {
        if (entryCount.get() >= maxEntries) {
            backgroundReclaimPasses.increment();
        }
        task.run();
    }

    /** {@inheritDoc} */
    @Override
    public CacheStats stats() {
        ensureOpen();
        return new CacheStats(
                creates.sum(),
                duplicatesRefused.sum(),
                lookupHits.sum(),
                lookupMisses.sum(),
                deletes.sum(),
                entriesReclaimed.sum(),
                backgroundReclaimPasses.sum(),
                synchronousReclaimPasses.sum(),
                requestedReclaimPasses.sum(),
                0L);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Marks the cache closed (which also stops handing maintenance to the executor), drops every
     * group from Caffeine, and wakes every {@code waitUnused}.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        unpinStack.set(null);
        groups.invalidateAll();
        groups.cleanUp();
        entryCount.set(0);
        unusedWaiters.wakeAll(); // after the volatile write of closed: every waiter re-checks it
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("cache is closed");
        }
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
                + (closed ? ", closed" : "") + "]";
    }
}
