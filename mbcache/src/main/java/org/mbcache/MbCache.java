package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.mbcache.internal.HashedWaitQueues;

/**
 * The kernel port: Linux {@code fs/mbcache.c} (the 2016 "mbcache2" rewrite with the 2019 request
 * list and the 2022 race fixes) for the JVM. The contract is {@link DedupCache}'s; this page says how
 * the port keeps it, in the order {@code mbcache.c} itself is written: data structures first, then
 * the functions that use them, each naming the kernel function it ports.
 *
 * <h2>Implementation overview</h2>
 *
 * <p><b>Entries</b> ({@link Entry}, 40 bytes with compressed oops) carry their key, value, owning
 * cache, one link for the LRU list, and a single {@code int} <em>state word</em> that holds the
 * reference count and the three flags (reusable, referenced, waiters). Putting count and flags in
 * one word is what makes every flag update atomic with every other flag and with the count (kernel
 * fix a44e84a9b776 was a lost flag update); the whole reference-counting protocol is the handful of
 * CAS loops on that word inside {@code Entry}, and nowhere else.
 *
 * <p><b>Buckets</b> ({@link Buckets}): {@code 2^bucketBits} of them, indexed by the kernel's
 * {@link #hash32 hash_32}. A bucket keeps its chain not as linked nodes but as parallel arrays: one
 * {@code int[]} with the chain's length, the bucket's statistics counters and then its keys, and one
 * array of the entries, oldest at index 0 and newest at the end, so "newest first" is a walk
 * downwards. At the design load (16 entries a bucket) a miss reads that one {@code int[]}, and a hit
 * dereferences only the entry whose key matched; a linked chain would touch 16 nodes. Next to the
 * chain lives the bucket's <em>in-progress request list</em> (the pairs being created right now,
 * kernel {@code struct mb_cache_req} kept on the creator's stack). All of it is guarded by the
 * bucket's <em>lock bit</em>: bit 0 of the bucket's slot in one primitive {@code int[]} of lock
 * words, taken with a CAS (acquire) through a {@link VarHandle} and dropped with a release store
 * that also advances the bucket's version (the word's other bits), spinning with
 * {@link Thread#onSpinWait()} and yielding under contention, like the kernel's {@code hlist_bl_lock}
 * bit spinlock. Every operation that changes a chain, and every lookup that hands out an entry, holds
 * that bucket's bit. A lookup whose key is not in the chain at all may answer without it: it reads
 * the keys optimistically and trusts the answer only if the bucket's version did not move (a
 * seqlock read, {@link Buckets#surelyLacks}), so a miss writes no shared cache line.
 *
 * <p><b>Reference counts</b> follow the kernel: the cache holds one reference to each entry it
 * contains, and each caller handed an entry one more. Lookups take theirs with
 * increment-if-not-zero. Only two operations drop the cache's own reference, and both do it while
 * holding the entry's bucket bit and unhash the entry before they let go of it: reclaim with a CAS
 * of the count from 1 to 0, {@link #deleteOrGet} with a CAS from 2 (cache and caller) to 0. So an
 * entry with a count above zero is always in its chain, an entry in a chain always has a count above
 * zero, and nobody ever removes an entry somebody else holds. A {@link #release} that would take the
 * count to the cache's own reference or below is refused with an {@link IllegalStateException}: an
 * over-release can never free an entry, and the count only reaches zero through the two claims.
 *
 * <p><b>The LRU list</b> ({@link Lru}) holds every entry in creation order for the second-chance
 * scan. The kernel appends under one global {@code c_list_lock}; taken by every create, that lock
 * made creates 15 times slower at two threads in this project's measurements. Here a create only
 * pushes its entry onto a lock-free append buffer (one atomic exchange); a reclaim pass, holding
 * the list lock, first drains the buffer onto the list's tail, so the list is exactly in the order
 * in which creates appended, and the pass takes effect as if at the moment it started (creates that
 * overlap it are appended after the entries it moves to the tail). Entries removed by
 * {@code deleteOrGet} are unlinked lazily: a pass drops them when it meets them, and a purge runs
 * once they outnumber the live entries, so they neither count as scanned nor pile up.
 *
 * <p><b>Counting.</b> {@link #size()} is one atomic counter, touched by creates and removals only.
 * Hits, misses, creates, refused duplicates and deletes are counted per bucket, under the bucket
 * bit the operation holds anyway; a miss found without the bit (a seqlock read of the chain's keys)
 * is counted in per-thread stripes. No lookup writes a counter another core writes.
 *
 * <p><b>Reclaim</b> (section 4 of the contract): a create that finds {@code size() >= maxEntries}
 * schedules one background pass of {@code maxEntries / 16} on the cache's executor (at most one
 * pending); at {@code size() >= 2 * maxEntries} it also runs a pass of 64 itself. Every cache is also
 * registered with the process-wide {@link MemoryPressureRegistry}, the JVM's stand-in for the
 * kernel's registered shrinker.
 *
 * <p><b>Memory ordering, in one place.</b> Chain arrays, request lists, per-bucket counters and the
 * LRU list are plain fields guarded by a lock (bucket bit or LRU lock): the lock's acquire CAS and
 * release store order them. The one read of chain state without the lock is the seqlock miss: plain
 * loads of the keys between an acquire load of the bucket's version and an acquire fence followed
 * by a second load of it; a lock holder's writes all come after its CAS made the version odd, so a
 * scan that saw any of them sees a version that moved. The entry state word is changed outside bucket locks (release, touch,
 * setReusable), so every change is a CAS (volatile semantics) and every read that decides something
 * is a volatile load. A new entry is published to other threads only through a bucket unlock
 * (release) or the append buffer's exchange (volatile), both after its constructor ran, so its plain
 * initial writes are visible wherever it is found. The accessors that carry a memory order are named
 * JCTools-style: {@code lv} load volatile, {@code la} load acquire, {@code lp}/{@code sp} load/store
 * plain, {@code so} store release ("ordered"), {@code cas} compare-and-set; where a
 * {@link VarHandle} is called directly, its access mode is in the method's name.
 *
 * <p>Default executor for background reclaim: one shared daemon thread, {@code mbcache-reclaim},
 * started on first use (the kernel's system workqueue). Pass your own with
 * {@link Builder#executor(Executor)}.
 */
public final class MbCache implements DedupCache {

    /** Entries a create-time synchronous reclaim pass scans (kernel {@code SYNC_SHRINK_BATCH}). */
    static final int SYNC_SHRINK_BATCH = 64;
    /** The background pass scans {@code maxEntries / SHRINK_DIVISOR} (kernel {@code SHRINK_DIVISOR}). */
    static final int SHRINK_DIVISOR = 16;
    /** Largest {@code bucketBits}: a table of 2^30 buckets is the most a Java array index allows. */
    static final int MAX_BUCKET_BITS = 30;
    /** Default {@code bucketBits}: ext4's. */
    static final int DEFAULT_BUCKET_BITS = 10;

    /**
     * The kernel's {@code hash_32(key, bits)}: multiply by the golden-ratio constant as an unsigned
     * 32-bit number and keep the top {@code bits} bits; bucket 0 when {@code bits == 0}.
     */
    static int hash32(int key, int bits) {
        return bits == 0 ? 0 : (key * 0x61C88647) >>> (32 - bits);
    }

    // ------------------------------------------------------------------------------------------
    // Entry: struct mb_cache_entry
    // ------------------------------------------------------------------------------------------

    /**
     * One cache entry (kernel {@code struct mb_cache_entry}) and the reference-counting protocol on
     * its state word.
     *
     * <p>State word layout: bits 0-27 the reference count; bit 28 {@link #REFERENCED}; bit 29
     * {@link #REUSABLE}; bit 30 {@link #WAITERS} (a thread waits in {@code waitUnused} for this
     * entry). The count is zero exactly when the entry has left its chain.
     */
    static final class Entry implements CacheEntry {
        static final int COUNT_MASK = (1 << 28) - 1;
        static final int REFERENCED = 1 << 28;
        static final int REUSABLE = 1 << 29;
        static final int WAITERS = 1 << 30;

        private static final VarHandle STATE;
        private static final VarHandle LRU_NEXT;

        static {
            try {
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                STATE = lookup.findVarHandle(Entry.class, "state", int.class);
                LRU_NEXT = lookup.findVarHandle(Entry.class, "lruNext", Entry.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final int key;
        final long value;
        final MbCache cache;
        /** Count and flags; see the class comment. Changed only by CAS. */
        private volatile int state;
        /**
         * The LRU link: while the entry sits in the append buffer, the next older buffered entry
         * (written by its creator, released); once drained, the next newer entry of the LRU list
         * (plain, under the LRU lock).
         */
        private Entry lruNext;

        /** A new entry at count 2: the cache's reference and the creator's, dropped once listed. */
        Entry(MbCache cache, int key, long value, boolean reusable) {
            this.cache = cache;
            this.key = key;
            this.value = value;
            // Plain store, not a volatile one (which would cost a full fence per create): the entry
            // reaches other threads only through a bucket unlock or the append buffer's exchange.
            STATE.set(this, 2 | (reusable ? REUSABLE : 0));
        }

        static int count(int state) {
            return state & COUNT_MASK;
        }

        int lvState() {
            return state;
        }

        private boolean casState(int expected, int updated) {
            return STATE.compareAndSet(this, expected, updated);
        }

        /**
         * Takes a reference unless the count already reached zero (kernel {@code atomic_inc_not_zero}).
         *
         * @return {@code false} if the entry is dead
         */
        boolean tryAcquire() {
            for (;;) {
                int s = lvState();
                int count = count(s);
                if (count == 0) {
                    return false;
                }
                if (count == COUNT_MASK) {
                    throw new IllegalStateException("too many references to " + this);
                }
                if (casState(s, s + 1)) {
                    return true;
                }
            }
        }

        /**
         * Drops one caller's reference (the count part of kernel {@code mb_cache_entry_put}). A count
         * of 1 is the cache's own reference and 0 a dead entry: releasing then is an over-release,
         * refused without touching the count.
         *
         * @return the new state word, so the caller can see whether waiters need waking
         */
        int releaseReference() {
            for (;;) {
                int s = lvState();
                if (count(s) <= 1) {
                    throw new IllegalStateException(
                            "entry released more often than it was handed out: " + this);
                }
                if (casState(s, s - 1)) {
                    return s - 1;
                }
            }
        }

        /**
         * Drops the cache's reference if the count is exactly {@code expectedCount}: 1 for reclaim,
         * 2 for {@code deleteOrGet} (the cache's and the caller's). Flags survive; the count goes to 0.
         * Called with the entry's bucket bit held, so the caller unhashes it before anyone looks.
         */
        boolean tryClaim(int expectedCount) {
            for (;;) {
                int s = lvState();
                if (count(s) != expectedCount) {
                    return false;
                }
                if (casState(s, s & ~COUNT_MASK)) {
                    return true;
                }
            }
        }

        /** Drops every reference at once: only {@code close()} does this. */
        void kill() {
            for (;;) {
                int s = lvState();
                if (casState(s, s & ~COUNT_MASK)) {
                    return;
                }
            }
        }

        /** Sets or clears one flag, never losing a concurrent change of the count or another flag. */
        void setFlag(int flag, boolean on) {
            for (;;) {
                int s = lvState();
                int updated = on ? s | flag : s & ~flag;
                if (s == updated || casState(s, updated)) {
                    return;
                }
            }
        }

        /**
         * Sets {@link #WAITERS} unless the entry is already unused (count at most 2).
         *
         * @return {@code true} if the caller must wait (the flag is now set); {@code false} if unused
         */
        boolean markWaitingUnlessUnused() {
            for (;;) {
                int s = lvState();
                if (count(s) <= 2) {
                    return false;
                }
                if ((s & WAITERS) != 0 || casState(s, s | WAITERS)) {
                    return true;
                }
            }
        }

        boolean hasFlag(int flag) {
            return (lvState() & flag) != 0;
        }

        Entry lpLruNext() {
            return lruNext;
        }

        void spLruNext(Entry next) {
            lruNext = next;
        }

        Entry laLruNext() {
            return (Entry) LRU_NEXT.getAcquire(this);
        }

        void soLruNext(Entry next) {
            LRU_NEXT.setRelease(this, next);
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
            return hasFlag(REUSABLE);
        }

        @Override
        public void setReusable(boolean reusable) {
            cache.ensureOpen();
            setFlag(REUSABLE, reusable);
        }

        @Override
        public void close() {
            cache.release(this);
        }

        @Override
        public String toString() {
            int s = lvState();
            return "MbCache.Entry[key=" + key + ", value=" + value + ", refcount=" + count(s)
                    + ((s & REUSABLE) != 0 ? ", reusable" : "")
                    + ((s & REFERENCED) != 0 ? ", referenced" : "") + "]";
        }
    }

    // ------------------------------------------------------------------------------------------
    // Buckets: struct mb_bucket[] (hlist_bl_head + req_list), with one lock bit per bucket
    // ------------------------------------------------------------------------------------------

    /**
     * The hash table (kernel {@code c_bucket}, an array of {@code struct mb_bucket}), stored by
     * column so that a lookup at the design load touches as few cache lines as it can.
     *
     * <p>Bucket {@code b} is:
     * <ul>
     *   <li>{@code lockWords[b]}, bit 0: the bucket's lock bit; the bits above count the critical
     *       sections, so that a lookup can find a miss without taking the lock (see
     *       {@link #surelyLacks}). The lock words of all buckets sit in one small primitive array that
     *       is never replaced, so a spinner always spins on the word the holder will clear. At 4 bytes
     *       a bucket the array stays in the core's caches.</li>
     *   <li>{@code words[b]}: one {@code int[]} with the chain's length, the number of creates in
     *       progress, the bucket's five statistics counters (each a 64-bit count kept as two ints),
     *       and then the chain's keys, oldest first. A miss reads this array alone: the length, the
     *       counter it bumps and the keys are adjacent, and no node is dereferenced.</li>
     *   <li>{@code entries[b]}: the chain's entries, parallel to its keys. Only an entry whose key
     *       matched is dereferenced.</li>
     *   <li>{@code requests[b]}: the in-progress request list of the 2019 patch as (key, value)
     *       pairs, allocated the first time the bucket sees a create and reused after: the kernel
     *       kept each request on its creator's stack, and this keeps the steady state just as free of
     *       allocation.</li>
     * </ul>
     * "Newest first" is a walk from the end of the chain downwards. Everything but the lock words is
     * plain fields and array slots guarded by the bucket's lock bit: the holder may replace
     * {@code words[b]} or {@code entries[b]} with a larger copy, and the next holder sees the new
     * arrays through the lock's release/acquire pair.
     */
    static final class Buckets {
        private static final VarHandle LOCK_WORD = MethodHandles.arrayElementVarHandle(int[].class);
        /** Spins with {@link Thread#onSpinWait()} before each yield while the bit is taken. */
        private static final int SPINS_BEFORE_YIELD = 64;
        private static final int LOCKED = 1;
        private static final Entry[] NO_ENTRIES = {};

        // Layout of words[b].
        static final int LENGTH = 0;
        static final int REQUESTS = 1;
        static final int CREATES = 2;
        static final int DUPLICATES_REFUSED = 4;
        static final int LOOKUP_HITS = 6;
        static final int LOOKUP_MISSES = 8;
        static final int DELETES = 10;
        static final int KEYS = 12;

        private final int[] lockWords;
        private final int[][] words;
        private final Entry[][] entries;
        private final long[][] requests;

        Buckets(int count) {
            lockWords = new int[count];
            words = new int[count][];
            entries = new Entry[count][];
            requests = new long[count][];
            for (int b = 0; b < count; b++) {
                words[b] = new int[KEYS];
                entries[b] = NO_ENTRIES;
            }
        }

        int count() {
            return lockWords.length;
        }

        /**
         * Takes bucket {@code b}'s lock bit (kernel {@code hlist_bl_lock}): a CAS from the current even
         * value to the next odd one. Acquire: everything the previous holder wrote before its release
         * store is visible after it. The opaque load first only reads the word to compare against.
         */
        void lock(int b) {
            int word = (int) LOCK_WORD.getOpaque(lockWords, b);
            if ((word & LOCKED) != 0 || !LOCK_WORD.weakCompareAndSetAcquire(lockWords, b, word, word + 1)) {
                lockContended(b);
            }
        }

        private void lockContended(int b) {
            int spins = 0;
            for (;;) {
                // Opaque load: wait for the bit to clear without writing the contended line.
                int word = (int) LOCK_WORD.getOpaque(lockWords, b);
                if ((word & LOCKED) == 0 && LOCK_WORD.weakCompareAndSetAcquire(lockWords, b, word, word + 1)) {
                    return;
                }
                if (++spins < SPINS_BEFORE_YIELD) {
                    Thread.onSpinWait();
                } else {
                    spins = 0;
                    Thread.yield();
                }
            }
        }

        /**
         * Drops the lock bit (kernel {@code hlist_bl_unlock}) by advancing the word to the next even
         * value, the bucket's new version: a release store publishes our writes. Only the holder
         * writes the word while it is odd, so a plain read of it suffices.
         */
        void unlock(int b) {
            LOCK_WORD.setRelease(lockWords, b, (int) LOCK_WORD.get(lockWords, b) + 1);
        }

        /**
         * Whether bucket {@code b}'s chain surely holds no entry with this key, decided without the
         * lock (a seqlock read, as {@link java.util.concurrent.locks.StampedLock#tryOptimisticRead}):
         * read the lock word's version (acquire), scan the keys with plain racy reads, then check
         * that the version has not moved. Any critical section on the bucket in between (or one in
         * progress) makes the answer {@code false}, and the caller takes the lock. Plain reads of an
         * {@code int[]} never tear, a length and the keys it counts come from the same array, and a
         * chain only ever shifts towards index 0 or is copied whole, so a scan that the version
         * vouches for saw every key the chain held.
         */
        boolean surelyLacks(int b, int key) {
            int version = (int) LOCK_WORD.getAcquire(lockWords, b);
            if ((version & LOCKED) != 0) {
                return false;
            }
            int[] w = words[b];
            for (int i = KEYS + w[LENGTH] - 1; i >= KEYS; i--) {
                if (w[i] == key) {
                    return false;
                }
            }
            VarHandle.acquireFence(); // the scan's loads complete before the version is read again
            return (int) LOCK_WORD.getOpaque(lockWords, b) == version;
        }

        /** Adds one to a 64-bit counter kept as (low, high) ints in {@code words[b]}. Lock held. */
        void count(int b, int counter) {
            int[] w = words[b];
            if (++w[counter] == 0) {
                w[counter + 1]++;
            }
        }

        /** A 64-bit counter of bucket {@code b}. Lock held. */
        long counter(int b, int counter) {
            int[] w = words[b];
            return ((long) w[counter + 1] << 32) | (w[counter] & 0xFFFF_FFFFL);
        }

        /** Entries in bucket {@code b}'s chain. Lock held. */
        int length(int b) {
            return words[b][LENGTH];
        }

        /** The entry at chain index {@code index}. Lock held. */
        Entry entryAt(int b, int index) {
            return entries[b][index];
        }

        /** Index of the pair in bucket {@code b}'s chain, newest first, or -1. Lock held. */
        int indexOf(int b, int key, long value) {
            int[] w = words[b];
            Entry[] chain = entries[b];
            for (int i = w[LENGTH] - 1; i >= 0; i--) {
                if (w[KEYS + i] == key && chain[i].value == value) {
                    return i;
                }
            }
            return -1;
        }

        /** Index of this very entry in bucket {@code b}'s chain, or -1 if it left it. Lock held. */
        int indexOfEntry(int b, Entry entry) {
            int[] w = words[b];
            Entry[] chain = entries[b];
            for (int i = w[LENGTH] - 1; i >= 0; i--) {
                if (w[KEYS + i] == entry.key && chain[i] == entry) {
                    return i;
                }
            }
            return -1;
        }

        /**
         * The newest reusable live entry with this key at a chain index below {@code from},
         * referenced for the caller, or {@code null}. Lock held.
         */
        Entry findReusable(int b, int key, int from) {
            int[] w = words[b];
            for (int i = from - 1; i >= 0; i--) {
                if (w[KEYS + i] == key) {
                    Entry entry = entries[b][i];
                    if (entry.hasFlag(Entry.REUSABLE) && entry.tryAcquire()) {
                        return entry;
                    }
                }
            }
            return null;
        }

        /** Hashes the entry at the head of the chain (kernel {@code hlist_bl_add_head}). Lock held. */
        void addNewest(int b, Entry entry) {
            int[] w = words[b];
            int length = w[LENGTH];
            if (KEYS + length == w.length) {
                int capacity = grownCapacity(length);
                words[b] = w = Arrays.copyOf(w, KEYS + capacity);
                entries[b] = Arrays.copyOf(entries[b], capacity);
            }
            w[KEYS + length] = entry.key;
            entries[b][length] = entry;
            w[LENGTH] = length + 1;
        }

        /** Unhashes the entry at chain index {@code index}, keeping the order of the rest. Lock held. */
        void removeAt(int b, int index) {
            int[] w = words[b];
            Entry[] chain = entries[b];
            int last = w[LENGTH] - 1;
            System.arraycopy(w, KEYS + index + 1, w, KEYS + index, last - index);
            System.arraycopy(chain, index + 1, chain, index, last - index);
            chain[last] = null;
            w[LENGTH] = last;
        }

        /** Whether a create of the pair is in progress in bucket {@code b}. Lock held. */
        boolean hasRequest(int b, int key, long value) {
            int count = words[b][REQUESTS];
            if (count == 0) {
                return false; // the common case: no need to touch the pairs array at all
            }
            long[] pairs = requests[b];
            for (int i = 2 * count - 2; i >= 0; i -= 2) {
                if (pairs[i] == key && pairs[i + 1] == value) {
                    return true;
                }
            }
            return false;
        }

        /**
         * Records a create in progress (kernel: {@code list_add(&req.lnode, &bucket->req_list)}). The
         * pairs array only grows when more creates than ever before are in flight in this bucket at
         * once, so in the steady state recording a request allocates nothing. Lock held.
         */
        void addRequest(int b, int key, long value) {
            int[] w = words[b];
            int count = w[REQUESTS];
            long[] pairs = requests[b];
            if (pairs == null || 2 * count == pairs.length) {
                requests[b] = pairs = pairs == null ? new long[2] : Arrays.copyOf(pairs, 2 * grownCapacity(count));
            }
            pairs[2 * count] = key;
            pairs[2 * count + 1] = value;
            w[REQUESTS] = count + 1;
        }

        /** Forgets a create in progress (kernel {@code list_del(&req.lnode)}). Lock held. */
        void removeRequest(int b, int key, long value) {
            int[] w = words[b];
            long[] pairs = requests[b];
            int last = 2 * (w[REQUESTS] - 1);
            for (int i = last; i >= 0; i -= 2) {
                if (pairs[i] == key && pairs[i + 1] == value) {
                    pairs[i] = pairs[last];
                    pairs[i + 1] = pairs[last + 1];
                    w[REQUESTS]--;
                    return;
                }
            }
            throw new AssertionError("no request for key " + key + ", value " + value);
        }

        /** Kills and unhashes every entry of bucket {@code b} (part of {@code mb_cache_destroy}). Lock held. */
        void killAll(int b) {
            int[] w = words[b];
            Entry[] chain = entries[b];
            for (int i = 0; i < w[LENGTH]; i++) {
                chain[i].kill();
            }
            entries[b] = NO_ENTRIES;
            words[b] = Arrays.copyOf(w, KEYS);
            words[b][LENGTH] = 0;
        }

        /** Grows by half, from 4: at 16 entries a bucket the arrays are a fifth empty at most. */
        private static int grownCapacity(int length) {
            return Math.max(4, length + (length >> 1));
        }
    }

    /**
     * A counter split into per-thread cells on separate cache lines (the idea of
     * {@link java.util.concurrent.atomic.LongAdder}, without its shared base word): a thread adds to the
     * cell its id picks, so threads on different cores never write the same line. Adds are atomic
     * ({@code getAndAdd}), so two threads that share a cell lose nothing; the sum is exact once the
     * adders are quiet.
     */
    static final class StripedCounter {
        private static final VarHandle CELL = MethodHandles.arrayElementVarHandle(long[].class);
        /** Cells 16 longs (128 bytes) apart: apart also for the adjacent-line prefetcher. */
        private static final int STRIDE = 16;
        private static final int MAX_STRIPES = 64;

        private final long[] cells;
        private final int mask;

        StripedCounter() {
            int cpus = Runtime.getRuntime().availableProcessors();
            int stripes = 2;
            while (stripes < 2 * cpus && stripes < MAX_STRIPES) {
                stripes <<= 1;
            }
            cells = new long[stripes * STRIDE];
            mask = stripes - 1;
        }

        @SuppressWarnings("deprecation") // Thread.getId: threadId() arrived in Java 19, this targets 17
        void increment() {
            CELL.getAndAdd(cells, ((int) Thread.currentThread().getId() & mask) * STRIDE, 1L);
        }

        long sum() {
            long sum = 0;
            for (int i = 0; i < cells.length; i += STRIDE) {
                sum += (long) CELL.getVolatile(cells, i);
            }
            return sum;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Lru: c_list, c_list_lock, fed by a lock-free append buffer
    // ------------------------------------------------------------------------------------------

    /**
     * The LRU list of all entries in creation order (kernel {@code c_list}), with its lock
     * ({@code c_list_lock}) and the lock-free append buffer that keeps creates off that lock.
     *
     * <p>The append buffer is a stack of entries linked through {@code lruNext}, newest on top. A
     * creator sets its entry's link to {@link #LINK_PENDING}, exchanges the entry onto the top, then
     * stores the previous top into the link with release semantics. The drainer takes the whole
     * stack with one exchange, waits out any link still pending (a creator between its two steps),
     * and reverses the stack onto the tail of the list. The list itself is plain fields under
     * {@link #lock}, linked oldest to newest through {@code lruNext}.
     */
    static final class Lru {
        private static final VarHandle APPEND_TOP;
        private static final VarHandle DEAD_ENTRIES;
        /** Placeholder link of an entry pushed but not yet linked to the entry below it. */
        private static final Entry LINK_PENDING = new Entry(null, 0, 0, false);

        static {
            try {
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                APPEND_TOP = lookup.findVarHandle(Lru.class, "appendTop", Entry.class);
                DEAD_ENTRIES = lookup.findVarHandle(Lru.class, "deadEntries", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** Guards the list fields below; held by reclaim passes, purges and close. */
        final ReentrantLock lock = new ReentrantLock();
        private Entry head;
        private Entry tail;
        /** Entries on the list, dead ones included. */
        private long length;

        /** Top of the append buffer: the newest entry not yet drained. */
        private volatile Entry appendTop;
        /** Entries removed by {@code deleteOrGet} but still linked (list or buffer). */
        private volatile long deadEntries;

        /** Appends a new entry (kernel: {@code list_add_tail(&entry->e_list, &cache->c_list)}). */
        void append(Entry entry) {
            entry.spLruNext(LINK_PENDING);
            Entry below = (Entry) APPEND_TOP.getAndSet(this, entry);
            entry.soLruNext(below);
        }

        /** Moves everything appended so far onto the list's tail, oldest first. Lock held. */
        void drainAppendBuffer() {
            if (appendTop == null) {
                return;
            }
            Entry newest = (Entry) APPEND_TOP.getAndSet(this, null);
            Entry older = null;
            Entry current = newest;
            long drained = 0;
            while (current != null) {
                Entry below = awaitLink(current);
                current.spLruNext(older);
                older = current;
                current = below;
                drained++;
            }
            // 'older' is now the oldest drained entry, linked oldest to newest up to 'newest'.
            if (tail == null) {
                head = older;
            } else {
                tail.spLruNext(older);
            }
            tail = newest;
            length += drained;
        }

        /** The entry below {@code entry} in the buffer, once its creator has linked it. */
        private static Entry awaitLink(Entry entry) {
            Entry below;
            int spins = 0;
            while ((below = entry.laLruNext()) == LINK_PENDING) {
                // The creator is between its exchange and its link store: a few instructions,
                // unless it was descheduled there, which yielding lets it finish.
                if (++spins % 64 == 0) {
                    Thread.yield();
                } else {
                    Thread.onSpinWait();
                }
            }
            return below;
        }

        /** Unlinks and returns the oldest entry, or {@code null}. Lock held. */
        Entry pollOldest() {
            Entry oldest = head;
            if (oldest != null) {
                head = oldest.lpLruNext();
                if (head == null) {
                    tail = null;
                }
                oldest.spLruNext(null);
                length--;
            }
            return oldest;
        }

        /** Links an entry at the tail (kernel {@code list_move_tail}, after the poll). Lock held. */
        void addNewest(Entry entry) {
            entry.spLruNext(null);
            if (tail == null) {
                head = entry;
            } else {
                tail.spLruNext(entry);
            }
            tail = entry;
            length++;
        }

        long length() {
            return length;
        }

        /** Counts one more dead entry left linked; returns how many there are now. */
        long addDeadEntry() {
            return (long) DEAD_ENTRIES.getAndAdd(this, 1L) + 1;
        }

        void forgetDeadEntries(long count) {
            if (count != 0) {
                DEAD_ENTRIES.getAndAdd(this, -count);
            }
        }

        /** Unlinks every dead entry (count 0) from the list. Lock held. Returns how many. */
        long purgeDead() {
            drainAppendBuffer();
            long purged = 0;
            Entry previous = null;
            Entry current = head;
            while (current != null) {
                Entry next = current.lpLruNext();
                if (Entry.count(current.lvState()) == 0) {
                    if (previous == null) {
                        head = next;
                    } else {
                        previous.spLruNext(next);
                    }
                    if (current == tail) {
                        tail = previous;
                    }
                    current.spLruNext(null);
                    purged++;
                } else {
                    previous = current;
                }
                current = next;
            }
            length -= purged;
            forgetDeadEntries(purged);
            return purged;
        }

        /** Drops everything (part of {@code mb_cache_destroy}). Lock held. */
        void clear() {
            APPEND_TOP.getAndSet(this, null);
            head = null;
            tail = null;
            length = 0;
            DEAD_ENTRIES.setVolatile(this, 0L);
        }
    }

    // ------------------------------------------------------------------------------------------
    // The cache: struct mb_cache
    // ------------------------------------------------------------------------------------------

    private static final VarHandle ENTRY_COUNT;
    private static final VarHandle RECLAIM_PENDING;
    private static final VarHandle CLOSED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            ENTRY_COUNT = lookup.findVarHandle(EntryCount.class, "value", long.class);
            RECLAIM_PENDING = lookup.findVarHandle(MbCache.class, "reclaimPending", boolean.class);
            CLOSED = lookup.findVarHandle(MbCache.class, "closed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The entry count (kernel {@code c_entry_count}), alone on its cache lines: it changes on every
     * create and removal, and must not drag the read-mostly cache fields along.
     */
    static final class EntryCount {
        long p01, p02, p03, p04, p05, p06, p07;
        volatile long value;
        long p11, p12, p13, p14, p15, p16, p17;
    }

    private final Buckets buckets;
    private final int bucketBits;
    private final long maxEntries;
    private final CreateStrategy createStrategy;
    private final int chainCap;
    private final Executor executor;
    private final Lru lru = new Lru();
    private final EntryCount entryCount = new EntryCount();
    /** Misses {@link Buckets#surelyLacks} found without the bucket lock, so without its counters. */
    private final StripedCounter unlockedMisses = new StripedCounter();
    /**
     * Where {@code waitUnused} sleeps (kernel {@code wait_var_event} on {@code e_refcnt}). Waits are
     * rare, so a few queues serve the whole cache; see {@link #releaseReference} for the wake-up side.
     */
    private final HashedWaitQueues unusedWaiters = new HashedWaitQueues(2);
    private final MemoryPressureRegistry.Registration pressureRegistration;
    private final Runnable backgroundReclaim = this::backgroundReclaim;

    /** One background pass scheduled and not yet finished (kernel: {@code c_shrink_work} queued). */
    private volatile boolean reclaimPending;
    private volatile boolean closed;

    // Reclaim statistics: reclaim is not a hot path, and these are written under the LRU lock.
    private long entriesReclaimed;
    private long backgroundReclaimPasses;
    private long synchronousReclaimPasses;
    private long requestedReclaimPasses;

    private MbCache(Builder builder) {
        this.bucketBits = builder.bucketBits;
        this.maxEntries = builder.maxEntries > 0 ? builder.maxEntries : (1L << bucketBits) << 4;
        this.createStrategy = builder.createStrategy;
        this.chainCap = builder.chainCap > 0 ? builder.chainCap : 64;
        this.executor = builder.executor != null ? builder.executor : ReclaimThread.EXECUTOR;
        this.buckets = new Buckets(1 << bucketBits);
        this.pressureRegistration = MemoryPressureRegistry.INSTANCE.register(this);
    }

    /**
     * A new cache of {@code 2^bucketBits} buckets with the defaults: {@code maxEntries} 16 per bucket,
     * {@link CreateStrategy#REQUEST_LIST}, background reclaim on the shared daemon thread (kernel
     * {@code mb_cache_create}).
     *
     * @throws IllegalArgumentException if {@code bucketBits} is outside {@code [0, 30]}
     */
    public static MbCache create(int bucketBits) {
        return builder().bucketBits(bucketBits).build();
    }

    /** A builder with the defaults: 2^10 buckets, 16 entries per bucket, {@code REQUEST_LIST}. */
    public static Builder builder() {
        return new Builder();
    }

    /** Configures and builds an {@link MbCache}. Not thread-safe; each {@link #build()} makes a new cache. */
    public static final class Builder {
        private int bucketBits = DEFAULT_BUCKET_BITS;
        private long maxEntries;
        private Executor executor;
        private CreateStrategy createStrategy = CreateStrategy.REQUEST_LIST;
        private Long hashSeed;
        private int chainCap;

        private Builder() {}

        /**
         * Fixes the secret seed of the keyed bucket index, for reproducible tests and benchmarks.
         * By default every cache draws its own seed from {@link java.security.SecureRandom}, so that
         * nobody who chooses keys can aim them at one bucket. Never fix it in production.
         *
         * @param hashSeed any value; the same seed always gives the same bucket for a key
         * @return this builder
         */
        public Builder hashSeed(long hashSeed) {
            this.hashSeed = hashSeed;
            return this;
        }

        /**
         * The most entries nobody holds that one bucket chain keeps: a create that would make a chain
         * longer first reclaims that chain's oldest unheld entries. Default: from the load at twice
         * {@code maxEntries}, far above any chain honest keys make (see {@link MbCache#chainCap()}).
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
         * log2 of the bucket count (kernel {@code bucket_bits}); default 10, as ext4.
         *
         * @throws IllegalArgumentException if outside {@code [0, 30]}
         */
        public Builder bucketBits(int bucketBits) {
            if (bucketBits < 0 || bucketBits > MAX_BUCKET_BITS) {
                throw new IllegalArgumentException(
                        "bucketBits must be in [0, " + MAX_BUCKET_BITS + "], was " + bucketBits);
            }
            this.bucketBits = bucketBits;
            return this;
        }

        /**
         * The size at which creates start background reclaim (kernel {@code c_max_entries}); at twice
         * this they also reclaim synchronously. Default {@code bucketCount << 4}.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder maxEntries(long maxEntries) {
            if (maxEntries <= 0) {
                throw new IllegalArgumentException("maxEntries must be positive, was " + maxEntries);
            }
            this.maxEntries = maxEntries;
            return this;
        }

        /**
         * Where background reclaim passes run. Default: one shared daemon thread,
         * {@code mbcache-reclaim}, for all caches that do not name their own.
         *
         * @throws NullPointerException if {@code executor} is null
         */
        public Builder executor(Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * How creates refuse duplicates; default {@link CreateStrategy#REQUEST_LIST}.
         *
         * @throws NullPointerException if {@code createStrategy} is null
         */
        public Builder createStrategy(CreateStrategy createStrategy) {
            this.createStrategy = Objects.requireNonNull(createStrategy, "createStrategy");
            return this;
        }

        /** A new, empty cache, registered for memory-pressure reclaim until it is closed. */
        public MbCache build() {
            return new MbCache(this);
        }
    }

    /** The bucket of a key (kernel {@code mb_cache_entry_bucket}). */
    private int bucketOf(int key) {
        return hash32(key, bucketBits);
    }

    /** log2 of the number of buckets. */
    public int bucketBits() {
        return bucketBits;
    }

    /** The size at which creates start reclaiming. */
    public long maxEntries() {
        return maxEntries;
    }

    /** The longest a bucket chain may grow with entries nobody holds. */
    public int chainCap() {
        return chainCap;
    }

    /** How this cache refuses duplicates. */
    public CreateStrategy createStrategy() {
        return createStrategy;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_create}, with the request list of the 2019 patch when the
     * strategy is {@link CreateStrategy#REQUEST_LIST}: then a refused duplicate allocates nothing,
     * and an accepted create allocates the entry alone.
     */
    @Override
    public boolean create(int key, long value, boolean reusable) {
        ensureOpen();
        reclaimIfLarge();
        int bucket = bucketOf(key);
        Entry entry = createStrategy == CreateStrategy.REQUEST_LIST
                ? hashWithRequest(bucket, key, value, reusable)
                : hashAllocatedFirst(bucket, key, value, reusable);
        if (entry == null) {
            return false;
        }
        // Only now may anyone free it: listed and counted first (kernel fix 5fc4cbd9fde5).
        lru.append(entry);
        ENTRY_COUNT.getAndAdd(entryCount, 1L);
        releaseReference(entry); // kernel: mb_cache_entry_put, which wakes waiters too
        return true;
    }

    /** The reclaim triggers at the top of kernel {@code mb_cache_entry_create}. */
    private void reclaimIfLarge() {
        long count = lvEntryCount();
        if (count >= maxEntries) {
            scheduleBackgroundReclaim();
            if (count >= 2 * maxEntries) {
                reclaim(SYNC_SHRINK_BATCH, ReclaimKind.SYNCHRONOUS);
            }
        }
    }

    /** Steps 1-4 of the request-list create (contract section 5); the hashed entry or null. */
    private Entry hashWithRequest(int bucket, int key, long value, boolean reusable) {
        buckets.lock(bucket);
        try {
            if (buckets.hasRequest(bucket, key, value) || buckets.indexOf(bucket, key, value) >= 0) {
                buckets.count(bucket, Buckets.DUPLICATES_REFUSED);
                return null;
            }
            buckets.addRequest(bucket, key, value);
        } finally {
            buckets.unlock(bucket);
        }
        Entry entry;
        try {
            entry = new Entry(this, key, value, reusable);
        } catch (Throwable allocationFailure) { // OutOfMemoryError: withdraw the request (kernel -ENOMEM)
            buckets.lock(bucket);
            try {
                buckets.removeRequest(bucket, key, value);
            } finally {
                buckets.unlock(bucket);
            }
            throw allocationFailure;
        }
        // One critical section swaps the request for the entry: no twin can slip in between.
        buckets.lock(bucket);
        try {
            buckets.removeRequest(bucket, key, value);
            buckets.addNewest(bucket, entry);
            buckets.count(bucket, Buckets.CREATES);
        } finally {
            buckets.unlock(bucket);
        }
        return entry;
    }

    /** Mainline create: allocate, then one critical section checks and hashes; the entry or null. */
    private Entry hashAllocatedFirst(int bucket, int key, long value, boolean reusable) {
        Entry entry = new Entry(this, key, value, reusable);
        buckets.lock(bucket);
        try {
            if (buckets.indexOf(bucket, key, value) >= 0) {
                buckets.count(bucket, Buckets.DUPLICATES_REFUSED);
                return null;
            }
            buckets.addNewest(bucket, entry);
            buckets.count(bucket, Buckets.CREATES);
        } finally {
            buckets.unlock(bucket);
        }
        return entry;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_find_first}. A key the bucket surely lacks is answered without
     * the bucket lock ({@link Buckets#surelyLacks}): a miss then writes no shared cache line.
     */
    @Override
    public CacheEntry findFirst(int key) {
        ensureOpen();
        int bucket = bucketOf(key);
        if (buckets.surelyLacks(bucket, key)) {
            unlockedMisses.increment();
            return null;
        }
        return find(bucket, key, null);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_find_next}: the walk continues below {@code entry} in its chain,
     * and only then is {@code entry} released, so it cannot be reclaimed from under the walk.
     */
    @Override
    public CacheEntry findNext(CacheEntry entry) {
        ensureOpen();
        Entry previous = ownEntry(entry);
        if (Entry.count(previous.lvState()) <= 1) {
            throw new IllegalStateException("findNext of an entry the caller does not hold: " + previous);
        }
        Entry next = find(bucketOf(previous.key), previous.key, previous);
        try {
            releaseReference(previous);
        } catch (IllegalStateException overRelease) {
            // The caller's reference was not there after all (released concurrently): undo our find.
            if (next != null) {
                releaseReference(next);
            }
            throw overRelease;
        }
        return next;
    }

    /**
     * The walk of kernel {@code __entry_find}: the newest reusable live entry with {@code key},
     * below {@code after} in the chain if {@code after} is still there, else from the chain head.
     */
    private Entry find(int bucket, int key, Entry after) {
        buckets.lock(bucket);
        try {
            int from = buckets.length(bucket);
            if (after != null) {
                int at = buckets.indexOfEntry(bucket, after);
                if (at >= 0) {
                    from = at;
                }
            }
            Entry found = buckets.findReusable(bucket, key, from);
            buckets.count(bucket, found != null ? Buckets.LOOKUP_HITS : Buckets.LOOKUP_MISSES);
            return found;
        } finally {
            buckets.unlock(bucket);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_get}, with the same lock-free miss as {@link #findFirst}.
     */
    @Override
    public CacheEntry get(int key, long value) {
        ensureOpen();
        int bucket = bucketOf(key);
        if (buckets.surelyLacks(bucket, key)) {
            unlockedMisses.increment();
            return null;
        }
        buckets.lock(bucket);
        try {
            int index = buckets.indexOf(bucket, key, value);
            if (index >= 0) {
                Entry entry = buckets.entryAt(bucket, index);
                if (entry.tryAcquire()) {
                    buckets.count(bucket, Buckets.LOOKUP_HITS);
                    return entry;
                }
            }
            buckets.count(bucket, Buckets.LOOKUP_MISSES);
            return null;
        } finally {
            buckets.unlock(bucket);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_entry_delete_or_get} (the 2022 fix of the journal-corruption race
     * 65f8b80053a1): take a reference as {@code get} does, then claim the entry with a CAS of the
     * count from 2 (the cache and us) to 0. Done under the bucket bit, so the claimed entry is unhashed
     * before any other thread can find it dead in its chain.
     */
    @Override
    public CacheEntry deleteOrGet(int key, long value) {
        ensureOpen();
        int bucket = bucketOf(key);
        buckets.lock(bucket);
        try {
            int index = buckets.indexOf(bucket, key, value);
            if (index < 0) {
                return null;
            }
            Entry entry = buckets.entryAt(bucket, index);
            if (!entry.tryAcquire()) {
                return null;
            }
            if (!entry.tryClaim(2)) {
                return entry; // somebody else holds it: hand it over, referenced
            }
            buckets.removeAt(bucket, index);
            buckets.count(bucket, Buckets.DELETES);
        } finally {
            buckets.unlock(bucket);
        }
        ENTRY_COUNT.getAndAdd(entryCount, -1L);
        if (lru.addDeadEntry() > Math.max(SYNC_SHRINK_BATCH, lvEntryCount())) {
            purgeDeadEntries();
        }
        return null;
    }

    /**
     * Unlinks the entries {@code deleteOrGet} left on the LRU list, once they outnumber the live ones,
     * so churn without reclaim cannot grow the list without bound. Skipped if a pass holds the list:
     * the next delete tries again.
     */
    private void purgeDeadEntries() {
        if (lru.lock.tryLock()) {
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
        Entry own = ownEntry(entry);
        Objects.requireNonNull(unit, "unit");
        long nanos = unit.toNanos(timeout);
        return awaitUnused(own, nanos == Long.MAX_VALUE ? Long.MAX_VALUE - 1 : nanos);
    }

    /**
     * Sleeps until the entry's count is at most 2, or the cache closes (then an
     * {@link IllegalStateException}); {@code false} if {@code nanos} ran out first
     * ({@code Long.MAX_VALUE}: no limit).
     *
     * <p>No lost wake-up: the condition, evaluated after the queue has counted this waiter, sets the
     * entry's {@link Entry#WAITERS} bit in the same CAS loop that re-reads the count. A release whose
     * CAS comes after that sees the bit and wakes the queue; one that comes before left a count the
     * condition sees (the handshake is spelled out on {@link HashedWaitQueues}).
     */
    private boolean awaitUnused(Entry entry, long nanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        boolean unused = unusedWaiters.await(entry, () -> closed || !entry.markWaitingUnlessUnused(), nanos);
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
        ownEntry(entry).setFlag(Entry.REFERENCED, true);
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
     * {@link Entry#WAITERS} bit, read from the same CAS that dropped the count, keeps the wait queues
     * off the common path: a release nobody waits for touches nothing but the entry.
     */
    private void releaseReference(Entry entry) {
        int state = entry.releaseReference();
        if ((state & Entry.WAITERS) != 0 && Entry.count(state) <= 2) {
            entry.setFlag(Entry.WAITERS, false);
            unusedWaiters.wake(entry);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_count} (the shrinker's {@code count_objects}).
     */
    @Override
    public long size() {
        ensureOpen();
        return lvEntryCount();
    }

    private long lvEntryCount() {
        return (long) ENTRY_COUNT.getVolatile(entryCount);
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
        return reclaim(nrToScan, ReclaimKind.REQUESTED);
    }

    /** What started a reclaim pass, for {@link CacheStats}. */
    enum ReclaimKind { BACKGROUND, SYNCHRONOUS, REQUESTED }

    /**
     * One reclaim pass over up to {@code nrToScan} entries from the LRU head (kernel
     * {@code mb_cache_shrink}). A referenced or held entry loses its referenced flag and moves to the
     * tail; any other is claimed (count 1 to 0) and unhashed. Entries {@code deleteOrGet} already
     * removed are dropped without counting. Unlike the kernel, the pass stops once a whole turn of the
     * list freed nothing and cleared no flag, so it ends even when every entry is held.
     *
     * @return the number of entries freed
     */
    private long reclaim(long nrToScan, ReclaimKind kind) {
        lru.lock.lock();
        try {
            countReclaimPass(kind);
            long freed = 0;
            long deadDropped = 0;
            long fruitless = 0; // entries moved in a row without freeing one or clearing a flag
            // Drained once: the pass acts on the list as it stood when it started, and the creates
            // it overlaps stay in the buffer, behind the entries it moves to the tail. Reading the
            // buffer's top for every entry would pull that line, which every create writes, away
            // from the creating cores once per entry scanned.
            lru.drainAppendBuffer();
            while (nrToScan > 0 && fruitless < lru.length()) {
                Entry entry = lru.pollOldest();
                if (entry == null) {
                    break;
                }
                int state = entry.lvState();
                if (Entry.count(state) == 0) {
                    deadDropped++;
                    continue;
                }
                nrToScan--;
                if ((state & Entry.REFERENCED) == 0 && Entry.count(state) == 1 && claimForReclaim(entry)) {
                    freed++;
                    fruitless = 0;
                    continue;
                }
                if ((state & Entry.REFERENCED) != 0) {
                    entry.setFlag(Entry.REFERENCED, false);
                    fruitless = 0;
                } else {
                    fruitless++;
                }
                lru.addNewest(entry);
            }
            lru.forgetDeadEntries(deadDropped);
            entriesReclaimed += freed;
            ENTRY_COUNT.getAndAdd(entryCount, -freed);
            return freed;
        } finally {
            lru.lock.unlock();
        }
    }

    /** Claims an unused entry (count 1 to 0) and unhashes it, under its bucket bit. LRU lock held. */
    private boolean claimForReclaim(Entry entry) {
        int bucket = bucketOf(entry.key);
        buckets.lock(bucket);
        try {
            if (!entry.tryClaim(1)) {
                return false;
            }
            buckets.removeAt(bucket, buckets.indexOfEntry(bucket, entry));
            return true;
        } finally {
            buckets.unlock(bucket);
        }
    }

    private void countReclaimPass(ReclaimKind kind) {
        switch (kind) {
            case BACKGROUND -> backgroundReclaimPasses++;
            case SYNCHRONOUS -> synchronousReclaimPasses++;
            case REQUESTED -> requestedReclaimPasses++;
        }
    }

    /** Schedules one background pass unless one is pending (kernel: {@code queue_work(c_shrink_work)}). */
    private void scheduleBackgroundReclaim() {
        if (!reclaimPending && RECLAIM_PENDING.compareAndSet(this, false, true)) {
            try {
                executor.execute(backgroundReclaim);
            } catch (RejectedExecutionException rejected) {
                // The executor is shut down or full: creates fall back on the synchronous pass at 2x.
                reclaimPending = false;
            }
        }
    }

    /** The background pass (kernel {@code mb_cache_shrink_worker}). */
    private void backgroundReclaim() {
        try {
            if (!closed) {
                reclaim(Math.max(1, maxEntries / SHRINK_DIVISOR), ReclaimKind.BACKGROUND);
            }
        } finally {
            reclaimPending = false;
        }
    }

    /**
     * The memory-pressure shrinker: scans half the entries, so unused unreferenced entries go first
     * and a second notification reaches the referenced ones. Called by {@link MemoryPressureRegistry}.
     */
    void onMemoryPressure() {
        if (closed) {
            return;
        }
        long count = lvEntryCount();
        if (count > 0) {
            reclaim(Math.max(1, count / 2), ReclaimKind.REQUESTED);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Sums the per-bucket counters, each bucket read under its bit.
     */
    @Override
    public CacheStats stats() {
        ensureOpen();
        long creates = 0;
        long duplicatesRefused = 0;
        long lookupHits = 0;
        long lookupMisses = unlockedMisses.sum();
        long deletes = 0;
        for (int bucket = 0; bucket < buckets.count(); bucket++) {
            buckets.lock(bucket);
            try {
                creates += buckets.counter(bucket, Buckets.CREATES);
                duplicatesRefused += buckets.counter(bucket, Buckets.DUPLICATES_REFUSED);
                lookupHits += buckets.counter(bucket, Buckets.LOOKUP_HITS);
                lookupMisses += buckets.counter(bucket, Buckets.LOOKUP_MISSES);
                deletes += buckets.counter(bucket, Buckets.DELETES);
            } finally {
                buckets.unlock(bucket);
            }
        }
        lru.lock.lock();
        try {
            return new CacheStats(creates, duplicatesRefused, lookupHits, lookupMisses, deletes,
                    entriesReclaimed, backgroundReclaimPasses, synchronousReclaimPasses,
                    requestedReclaimPasses, 0L);
        } finally {
            lru.lock.unlock();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Kernel {@code mb_cache_destroy}, plus leaving the memory-pressure registry. Entries callers
     * still hold are dropped too; releasing them afterwards is an {@link IllegalStateException}.
     */
    @Override
    public void close() {
        if (!CLOSED.compareAndSet(this, false, true)) {
            return;
        }
        MemoryPressureRegistry.INSTANCE.unregister(pressureRegistration);
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
            ENTRY_COUNT.setVolatile(entryCount, 0L);
        } finally {
            lru.lock.unlock();
        }
        unusedWaiters.wakeAll();
    }

    /**
     * Entries linked on the LRU list and its append buffer, including removed ones not yet purged:
     * what the list costs in memory. Package-private, for tests of the lazy unlinking.
     */
    long linkedEntries() {
        lru.lock.lock();
        try {
            lru.drainAppendBuffer();
            return lru.length();
        } finally {
            lru.lock.unlock();
        }
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

    @Override
    public String toString() {
        return "MbCache[bucketBits=" + bucketBits + ", maxEntries=" + maxEntries + ", createStrategy="
                + createStrategy + (closed ? ", closed" : ", size=" + lvEntryCount()) + "]";
    }

    /** The default background-reclaim executor, created on first use (initialization-on-demand holder). */
    private static final class ReclaimThread {
        static final Executor EXECUTOR = Executors.newSingleThreadExecutor(task -> {
            Thread thread = new Thread(task, "mbcache-reclaim");
            thread.setDaemon(true);
            return thread;
        });
    }
}
