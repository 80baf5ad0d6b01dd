package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The bucket's lock-and-version word, for both tables of the kernel port: the lock bit, a version
 * that optimistic lookups validate against, and (in the high half) the table's key filter, in one
 * {@code long} of a primitive array. A table names the word by its array and index; every access
 * to the word goes through here.
 *
 * <h2>Layout</h2>
 * Bit 0 is the lock bit; bits 1-31 count the critical sections (with bit 0, the low half is a
 * version, odd while a holder is inside); bits 32-63 are the table's key filter, which only the
 * holder changes ({@link #setFilterOpaque}) and {@link #unlock} publishes with the next version.
 * One load gives a lookup its bucket's version and filter together.
 *
 * <h2>Concurrency</h2>
 * Everything a table guards with the word is plain fields and array slots, written only by the
 * holder of the bit. {@link #lock} turns the word from an even version to the next odd one with an
 * acquire CAS and then issues a store-store fence; {@link #unlock} advances it to the next even
 * value with a release store. The holder may replace the bucket's arrays with larger copies; the
 * next holder sees them through the release/acquire pair.
 *
 * <p>Lookups read a bucket without its bit, as a seqlock reader
 * ({@link java.util.concurrent.locks.StampedLock#tryOptimisticRead}): load the word with acquire
 * ({@link #laHead}; odd: give up), read the chain with plain loads, then {@link #validate}: an
 * acquire fence (the chain's loads complete first) and a second load of the word, which must be
 * unchanged. Two orderings make this sound on every JMM-conforming platform, not only on x86: the
 * acquire load of the first version orders every later load after it, so the reader sees at least
 * the writes of every critical section that ended before; and the store-store fence after the lock
 * CAS orders the odd version before every store of the critical section, so a reader that saw any
 * store of a section in progress (a shifted key, a new length, a new array) sees the odd or a later
 * version on its second load. (An acquire CAS alone orders only the loads after it: on aarch64 or
 * POWER the section's stores could become visible before the odd version, which is why
 * {@code StampedLock} fences there too.) A table's racy reads must never fault: each says how.
 *
 * <p>The version has 31 bits and wraps: a validation is fooled only if exactly a multiple of 2^31
 * critical sections ran on the one bucket while the reader stalled between its two loads (and the
 * filter half of the word came back the same), which takes over a minute of nothing but writes to
 * that bucket. The reader then answers from a torn read: a miss, or a live entry out of order, never
 * a dead one (the reference is taken by increment-if-not-zero). A create that carries an absence
 * its optimistic read proved into its locked section compares the 31-bit version alone
 * ({@link #versionOf}): under the same coincidence, with the same pair inserted during the stall,
 * it inserts the pair a second time. The contract (section 5) states this bound and why it is
 * accepted.
 *
 * <p>{@link #unlock} is one load and one store, no allocation, no call: nothing there can fail and
 * leave the bit set.
 */
final class BucketLockWord {
    private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);
    /** Spins with {@link Thread#onSpinWait()} before each yield while the bit is taken. */
    private static final int SPINS_BEFORE_YIELD = 64;
    /** The lock bit. */
    static final long LOCKED = 1;
    /** The lock bit and the version: the low half of the word. */
    static final long VERSION_MASK = 0xFFFF_FFFFL;
    /** The key filter: the high half of the word. */
    static final long FILTER_MASK = ~VERSION_MASK;

    private BucketLockWord() {}

    /**
     * Takes the bit (kernel {@code hlist_bl_lock}): a CAS from the current even version to the next
     * odd one. Acquire: everything the previous holder wrote before its release store is visible
     * after it. The store-store fence then orders the odd version before every store of the
     * critical section. The opaque load first only reads the word to compare against.
     *
     * @return the even version the bit was taken from: equal to a version an optimistic read
     *     validated exactly when no critical section ran in between
     */
    static long lock(long[] words, int at) {
        long word = (long) WORDS.getOpaque(words, at);
        if ((word & LOCKED) != 0 || !WORDS.weakCompareAndSetAcquire(words, at, word, word + 1)) {
            word = lockContended(words, at);
        }
        VarHandle.storeStoreFence();
        return word & VERSION_MASK;
    }

    /** {@link #lock} once the first try failed: spins, then yields, until the bit is taken; returns the word it was taken from. */
    private static long lockContended(long[] words, int at) {
        int spins = 0;
        for (;;) {
            // Opaque load: wait for the bit to clear without writing the contended line.
            long word = (long) WORDS.getOpaque(words, at);
            if ((word & LOCKED) == 0 && WORDS.weakCompareAndSetAcquire(words, at, word, word + 1)) {
                return word;
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
     * Drops the bit (kernel {@code hlist_bl_unlock}) by advancing the version to the next even value
     * (wrapping within the low half, never carrying into the filter), with the filter as the
     * critical section left it: a release store publishes the critical section's writes. Only the
     * holder writes the word while it is odd, so a plain read of it suffices.
     */
    static void unlock(long[] words, int at) {
        long word = (long) WORDS.get(words, at);
        WORDS.setRelease(words, at, (word & FILTER_MASK) | ((word + 1) & VERSION_MASK));
    }

    /** The word an optimistic read starts from (acquire); its version is odd while a holder is inside. */
    static long laHead(long[] words, int at) {
        return (long) WORDS.getAcquire(words, at);
    }

    /** The word as its holder reads it (plain: only the holder writes it while it is odd). */
    static long lpHead(long[] words, int at) {
        return (long) WORDS.get(words, at);
    }

    /** Whether no critical section began since {@code head} was read: an acquire fence, then the word again. */
    static boolean validate(long[] words, int at, long head) {
        VarHandle.acquireFence(); // the optimistic loads complete before the word is read again
        return (long) WORDS.getOpaque(words, at) == head;
    }

    /**
     * Replaces the key filter (the high half) of a word whose bit the caller holds. Opaque: the
     * store is atomic (a plain {@code long} store need not be), and racing lookups see an odd word
     * and do not use it.
     */
    static void setFilterOpaque(long[] words, int at, long filter) {
        long word = (long) WORDS.get(words, at);
        WORDS.setOpaque(words, at, (word & VERSION_MASK) | (filter & FILTER_MASK));
    }

    /** Whether a holder was inside when {@code head} was read. */
    static boolean locked(long head) {
        return (head & LOCKED) != 0;
    }

    /** The version half of a word, as {@link #lock} returns it. */
    static long versionOf(long head) {
        return head & VERSION_MASK;
    }
}
