package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.security.SecureRandom;
import java.util.Arrays;

/**
 * The hash table (kernel {@code c_bucket}, an array of {@code struct mb_bucket}) with its keyed
 * index, the per-bucket lock bits and the optimistic reads that let lookups run without them.
 *
 * <h2>Layout</h2>
 * Stored by column, so that a lookup touches as few cache lines as it can. Bucket {@code b} is:
 * <ul>
 *   <li>{@code heads[b]}, the bucket's head word, a {@code long}: bit 0 is the bucket's lock bit;
 *       bits 1-31 count the critical sections, a version that lookups validate against (below);
 *       bits 32-63 are the key filter (below). The head words of all buckets sit in one primitive
 *       array that is never replaced, so a spinner always spins on the word the holder will
 *       clear, and one load gives a lookup its bucket's version and filter together.</li>
 *   <li>{@code wideFilters[b]}: the second key filter, 64 bits (below). A miss the head word's
 *       filter lets through reads it next.</li>
 *   <li>{@code words[b]}: one {@code int[]} with the chain's length, the number of creates in
 *       progress, the number of keys removed since the key filter was rebuilt, and then one
 *       fingerprint per entry, oldest first (below). A miss both filters let through reads this
 *       array, and no other.</li>
 *   <li>{@code entries[b]}: the chain's entries, parallel to their fingerprints. Loaded only once
 *       a fingerprint matched, and only the entries whose fingerprint matched are dereferenced.</li>
 *   <li>{@code requests[b]}: what only writers touch, the in-progress request list of the 2019
 *       patch as (key, value) pairs. Allocated the first time the bucket sees a request and reused
 *       after: the kernel kept each request on its creator's stack, and this keeps the steady state
 *       as free of allocation.</li>
 * </ul>
 * "Newest first" is a walk from the end of the chain downwards. Until a bucket's first create its
 * arrays are shared empty ones that are never written, so a table of 2^30 buckets allocates no
 * per-bucket array up front.
 *
 * <h2>Fingerprints</h2>
 * An entry's slot in {@code words[b]} holds {@link #fingerprint}{@code (key, value)}: in the upper
 * 16 bits the key's fingerprint, the 16 bits of the keyed hash just below the bucket's bits
 * ({@link #keyFingerprint}); in the lower 16, a keyed multiply-shift hash of the value. A lookup by
 * key compares the upper halves, a lookup by pair (get, the duplicate check, deleteOrGet) the whole
 * slot, and only then dereferences the entry to compare its key and value themselves. So among the
 * values of one key (ext4 keeps up to a chain cap's worth of blocks with equal content hashes, and
 * a flood of one key fills a chain with them) a lookup by pair reads one entry, not every entry of
 * that key; two different keys in one bucket share a key fingerprint one time in 65,536 and merely
 * cost a dereference. Same memory as storing the key: the key itself lives in the entry.
 *
 * <h2>The key filter</h2>
 * The upper 32 bits of the head word have bit {@link #filterBit}{@code (key)} set for every key in
 * the chain (a Bloom filter with one hash function): a lookup whose bit is clear is a miss after one
 * load, without reading the chain. The bit is the top five bits of the key's fingerprint, so it is
 * as unpredictable to an attacker as the bucket, and a rebuild reads it off the fingerprints
 * without hashing anything. Only the lock holder changes the filter: a create sets its key's bit,
 * and removals leave theirs until more than a quarter of the chain's length has left since the
 * last rebuild (so an emptied chain has an empty filter); then {@link #refilter} rebuilds it from
 * the fingerprints left. A rebuild reads the whole chain, so it is paid once per several removals.
 * {@link #unlock} publishes the filter with the new version. So the filter in an even head word
 * covers the chain of that version: it may claim a key that is not there (one lookup in eight at 4
 * distinct keys a bucket, two in five at 16, a little more with stale bits), never lacks one that
 * is. A miss it answers would need no validation (version and filter come from one atomic load),
 * but it is validated anyway, with the wide filter's (below).
 *
 * <p>Two in five is too many: at the design load of 16 keys a bucket, a miss that reads the chain
 * costs a cache miss or two, most of a miss's time. So a second, wide filter of 64 bits per bucket
 * ({@code wideFilters[b]}, two bits a key, {@link #wideFilterBits}: one picked by the six
 * fingerprint bits below the head filter's five, so it is independent of the head bit, the other
 * by the lowest five) is kept the same way, and a lookup that the head filter lets through asks it
 * next: one more load, which hits pay too (its address depends on the bucket alone, so it overlaps
 * the chain's loads), and about one absent key in sixteen still reads the chain (0.40 * 0.15; with
 * one bit a key in the wide word, 0.40 * 0.22, one in eleven). The wide word is not in the head
 * word's load, so a "no" from it counts only once {@link #validate} confirms the version it was
 * read under ({@link #turnsAway}): the holder writes it after the odd version (the store-store
 * fence of {@link #lock}) and before the even one (the release of {@link #unlock}). A lookup asks
 * both filters and validates whatever the head filter says, and combines the answers without a
 * branch on either: a branch that goes one way four times in ten is mispredicted about as often,
 * and the misprediction discards the loads of the lookups after it. Eight bytes a bucket: half a
 * byte an entry at 16 a bucket. It has an array of its own rather than a slot beside the head
 * word: interleaved, the two words would share a line, which saves little where the wide word's
 * load overlaps the others anyway, and one array of 2^31 longs for {@code bucketBits} 30 is more
 * than a Java array can hold.
 *
 * <h2>The keyed index and the lock word</h2>
 * A key's bucket is {@link KeyedIndex}'s; the head word is a {@link BucketLockWord}, whose class
 * comment has the seqlock argument that lets lookups read a chain without the bit. Racy reads of
 * this table never fault: keys come from one {@code int[]} that also holds their count, every
 * published array's count fits its own capacity, and an index into {@code entries[b]} is checked
 * against that array.
 *
 * <p>A hit takes its reference with increment-if-not-zero <em>after</em> it validates: if the
 * version is unchanged, no critical section ran while the chain was read, so the entry found was in
 * the chain, and the newest match, at that version, where the lookup linearizes. An entry's count
 * only reaches zero under its bucket bit (reclaim, {@code deleteOrGet}, the chain cap), in the
 * critical section that unhashes it, and never rises again; so an increment-if-not-zero that
 * succeeds after the validation finds the entry still in its chain, and one that fails (the entry
 * claimed meanwhile) sends the lookup to retry under the lock, as a moved version does. A lookup
 * thus never holds a reference it gives back: a {@code deleteOrGet} or a reclaim pass that finds
 * an entry held finds a holder that keeps it.
 *
 * <p>Paths that must not fail halfway are kept shallow and allocation-free: {@link #unlock} is
 * {@link BucketLockWord#unlock}, and every method that may allocate (a chain or request array growing) does so
 * before it changes anything, so an {@link OutOfMemoryError} there leaves the bucket as it was.
 */
final class ListTable {
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final long LOCKED = BucketLockWord.LOCKED;
    private static final long VERSION_MASK = BucketLockWord.VERSION_MASK;
    private static final long FILTER_MASK = BucketLockWord.FILTER_MASK;

    // Layout of words[b].
    static final int LENGTH = 0;
    static final int REQUESTS = 1;
    /** Keys removed from the chain since its key filter was last rebuilt. */
    static final int STALE = 2;
    static final int KEYS = 3;

    /** Every bucket's words until its first create: never written. */
    private static final int[] NO_WORDS = new int[KEYS];
    private static final ListEntry[] NO_ENTRIES = {};

    /**
     * What an optimistic lookup returns when the version moved under it, or a lock holder was in the
     * bucket: the answer is unknown and the caller asks again under the lock.
     */
    static final ListEntry RETRY_LOCKED = newSentinel();

    /**
     * What {@link ListWalk#deleteOrAcquire} answers when it removed the pair. Here and not in
     * {@code ListWalk}, so that it is made when the first table is, before any operation: a static
     * initializer that a cache's first operation ran could fail there and leave its class unusable.
     */
    static final ListEntry DELETED = newSentinel();

    /**
     * A new sentinel entry: an answer compared by identity ({@link #RETRY_LOCKED}, {@link #DELETED}),
     * never hashed, listed or handed out. Its owner belongs to no cache and throws an
     * {@link AssertionError} from every method, so a sentinel that leaked into an entry's protocol
     * fails at its first use.
     */
    private static ListEntry newSentinel() {
        return new ListEntry(Unowned.INSTANCE, 0, 0, false);
    }

    /** The owner of the sentinels ({@link #newSentinel}): no cache; every method throws. */
    private static final class Unowned implements ListEntry.Owner {
        static final Unowned INSTANCE = new Unowned();

        /** The failure of every method: a sentinel was used as an entry. */
        private static <T> T refuse() {
            throw new AssertionError("a sentinel entry has no cache");
        }

        @Override
        public HotCellTable hotCells() {
            return refuse();
        }

        @Override
        public boolean noteContention(ListEntry entry) {
            return refuse();
        }

        @Override
        public IllegalStateException referenceNotHeld(String misuse) {
            return refuse();
        }

        @Override
        public void ensureOpen() {
            refuse();
        }

        @Override
        public void release(ListEntry entry) {
            refuse();
        }

        @Override
        public void releaseReference(ListEntry entry) {
            refuse();
        }
    }

    /** Per bucket: lock bit, version and key filter in one word (the class comment's layout). */
    private final long[] heads;
    /**
     * Per bucket: the second key filter, 64 bits (the class comment's "The key filter"). Written
     * only by the bit's holder, read by optimistic lookups that validate against the head word.
     */
    private final long[] wideFilters;
    private final int[][] words;
    private final ListEntry[][] entries;
    /** Per bucket: the request list's (key, value) pairs, {@code words[b][REQUESTS]} of them. */
    private final long[][] requests;
    private final int bucketBits;
    /** The keyed index's multiplier (odd), increment and premix secret (see the class comment). */
    private final long multiplier;
    private final long increment;
    private final int premixSecret;
    /** The value fingerprint's multiplier (odd). */
    private final long valueMultiplier;

    /**
     * An empty table of {@code 2^bucketBits} buckets.
     *
     * @param hashSeed the keyed index's seed, or {@code null} to draw one from {@link SecureRandom}
     */
    ListTable(int bucketBits, Long hashSeed) {
        int count = 1 << bucketBits;
        this.bucketBits = bucketBits;
        heads = new long[count];
        wideFilters = new long[count];
        words = new int[count][];
        entries = new ListEntry[count][];
        requests = new long[count][];
        Arrays.fill(words, NO_WORDS);
        Arrays.fill(entries, NO_ENTRIES);
        long[] seed = KeyedIndex.seed(hashSeed);
        multiplier = KeyedIndex.multiplier(seed);
        increment = KeyedIndex.increment(seed);
        valueMultiplier = seed[2] | 1L;
        premixSecret = KeyedIndex.premixSecret(seed);
    }

    int count() {
        return words.length;
    }

    /**
     * The keyed hash of a key ({@link KeyedIndex#keyedHash}): its top {@code bucketBits}
     * bits pick the bucket, the next 16 are the key's fingerprint.
     */
    private long keyedHash(int key) {
        return KeyedIndex.keyedHash(key, premixSecret, multiplier, increment);
    }

    /** The bucket of a key (kernel {@code mb_cache_entry_head}): the keyed index of the class comment. */
    int bucketOf(int key) {
        return bucketBits == 0 ? 0 : (int) (keyedHash(key) >>> (64 - bucketBits));
    }

    /**
     * The key's fingerprint: the 16 bits of the keyed hash below the bucket's bits ({@code bucketBits
     * <= 30}, so they exist).
     */
    int keyFingerprint(int key) {
        return (int) (keyedHash(key) >>> (48 - bucketBits)) & 0xFFFF;
    }

    /** The slot of a pair in {@code words[b]}: key fingerprint above, value fingerprint below. */
    int fingerprint(int key, long value) {
        return fingerprintOfPrint(keyFingerprint(key), value);
    }

    /** {@link #fingerprint} of a pair whose key's {@link #keyFingerprint} is {@code keyPrint}. */
    private int fingerprintOfPrint(int keyPrint, long value) {
        return keyPrint << 16 | (int) ((valueMultiplier * value) >>> 48);
    }

    /**
     * The key's bit in its bucket's key filter, in place in the head word: the top five bits of its
     * fingerprint pick one of bits 32-63.
     */
    long filterBit(int key) {
        return filterBitOfSlot(keyFingerprint(key) << 16);
    }

    /** The filter bit of the key whose fingerprint is in {@code slot}'s upper half. */
    private static long filterBitOfSlot(int slot) {
        return 1L << (32 + (slot >>> 27));
    }

    /**
     * The key's two bits in its bucket's wide filter (one, when they coincide): one picked by the
     * fingerprint's six bits below the five that pick {@link #filterBit}, so it is independent of
     * that bit; the other by its lowest five bits, in the half of the word its top bit picks.
     */
    long wideFilterBits(int key) {
        return wideFilterBitsOfSlot(keyFingerprint(key) << 16);
    }

    /** The wide-filter bits of the key whose fingerprint is in {@code slot}'s upper half. */
    private static long wideFilterBitsOfSlot(int slot) {
        int print = slot >>> 16;
        return (1L << ((print >>> 5) & 63)) | (1L << ((print & 31) | ((print >>> 10) & 32)));
    }

    // ---------------------------------------------------------------------------------------------
    // The lock bit and the version
    // ---------------------------------------------------------------------------------------------

    /** Takes bucket {@code b}'s lock bit: {@link BucketLockWord#lock}; returns the even version it was taken from. */
    long lock(int b) {
        return BucketLockWord.lock(heads, b);
    }

    /** Drops bucket {@code b}'s lock bit: {@link BucketLockWord#unlock}. */
    void unlock(int b) {
        BucketLockWord.unlock(heads, b);
    }

    /**
     * Replaces the key filter of a bucket whose bit the caller holds. Opaque: the store is atomic (a
     * plain {@code long} store need not be), and racing lookups see an odd word and do not use it.
     */
    private void setFilterOpaque(int b, long filter) {
        BucketLockWord.setFilterOpaque(heads, b, filter);
    }

    /**
     * Replaces the wide filter of a bucket whose bit the caller holds. Opaque, for the reason
     * {@link #setFilterOpaque} is; racing lookups validate against the head word, which is odd
     * while the holder is inside (the store-store fence of {@link #lock} orders this store after it).
     */
    private void setWideFilterOpaque(int b, long filter) {
        LONGS.setOpaque(wideFilters, b, filter);
    }

    /** The version to validate an optimistic read against; odd while a holder is inside. Acquire. */
    private long laVersion(int b) {
        return BucketLockWord.laHead(heads, b);
    }

    /** Whether no critical section began since {@code version} was read (see the class comment). */
    private boolean validate(int b, long version) {
        return BucketLockWord.validate(heads, b, version);
    }

    /**
     * Whether the key filters, the head word {@code head} and the wide word {@code wide}, lack the
     * key whose {@link #keyFingerprint} is {@code keyPrint}: if either does, the chain surely does not
     * hold it. Bit operations only, with no branch on either filter's answer ({@link #turnsAway} says
     * why).
     */
    private static boolean filtersLack(long head, long wide, int keyPrint) {
        int slot = keyPrint << 16;
        return ((filterBitOfSlot(slot) & ~head) | (wideFilterBitsOfSlot(slot) & ~wide)) != 0;
    }

    /**
     * Bucket {@code b}'s wide filter. Opaque: an optimistic reader must validate a "no" against the
     * version it read first (the loads after that acquire load stay after it); under the bit, the
     * holder's own value.
     */
    private long wideFilter(int b) {
        return (long) LONGS.getOpaque(wideFilters, b);
    }

    /**
     * Whether an optimistic read at {@code version} may answer "absent" without reading the chain:
     * the version is even and still current (validated as {@link #validate} does), and one of the
     * two filters lacks the key of fingerprint {@code keyPrint}. The head filter's answer came with
     * the version in one load; the wide word is read after it (the version's load is an acquire) and
     * counts only because the validation follows it.
     *
     * <p>Without branches on the filters: both words are read, the version is validated and the
     * answers are combined with bit operations whatever the head filter said. To an absent key the
     * filters answer at random (the head filter passes about four in ten at 16 keys a bucket), so a
     * branch on each answer is mispredicted that often, and each misprediction throws away the loads
     * the processor had started for the lookups after this one. The one branch left, on the result,
     * goes the same way for all but the few absent keys both filters let through.
     */
    private boolean turnsAway(int b, long version, int keyPrint) {
        long wide = wideFilter(b);
        // non-short-circuit &: validate runs (after the wide word's load) whatever the filters say
        return (version & LOCKED) == 0 & validate(b, version) & filtersLack(version, wide, keyPrint);
    }

    /** Whether bucket {@code b}'s key filters may hold {@code key}, as of its last unlock (for tests). */
    boolean filterMayHold(int b, int key) {
        return !filtersLack(laVersion(b), wideFilter(b), keyFingerprint(key));
    }

    // ---------------------------------------------------------------------------------------------
    // Optimistic lookups (no lock): an answer, or RETRY_LOCKED
    // ---------------------------------------------------------------------------------------------

    /**
     * Optimistic {@link #findReusable}: the newest reusable live entry with {@code key} below
     * {@code after} (from the chain head if {@code after} is {@code null} or left the chain),
     * referenced for the caller; {@code null} if the chain surely has none; {@link #RETRY_LOCKED}
     * if the read could not be validated.
     */
    ListEntry tryFindReusable(int b, int key, ListEntry after) {
        // Before the acquire load, so that the JIT can share the keyed hash with the bucket's
        // computation (after an acquire it would compute it again).
        int keyPrint = keyFingerprint(key);
        long version = laVersion(b);
        if (turnsAway(b, version, keyPrint)) {
            return null;
        }
        if ((version & LOCKED) != 0) {
            return RETRY_LOCKED;
        }
        int[] w = words[b];
        int from = Math.min(w[LENGTH], w.length - KEYS);
        ListEntry[] chain = null;
        if (after != null) {
            chain = entries[b];
            int afterSlot = fingerprint(after.key, after.value);
            for (int i = from - 1; i >= 0; i--) {
                if (w[KEYS + i] == afterSlot && i < chain.length && chain[i] == after) {
                    from = i;
                    break;
                }
            }
        }
        for (int i = from - 1; i >= 0; i--) {
            if (w[KEYS + i] >>> 16 == keyPrint) {
                if (chain == null) {
                    chain = entries[b];
                }
                if (i >= chain.length) {
                    return RETRY_LOCKED;
                }
                ListEntry entry = chain[i];
                if (entry != null && entry.key == key && entry.hasFlag(ListEntry.REUSABLE)
                        && ListEntry.count(entry.lvState()) != 0) {
                    return validatedHit(b, version, entry, key);
                }
            }
        }
        return validate(b, version) ? null : RETRY_LOCKED;
    }

    /**
     * Optimistic {@link #indexOf} plus a reference: the entry with exactly this pair, referenced for
     * the caller; {@code null} if the chain surely lacks it; {@link #RETRY_LOCKED} if unvalidated.
     */
    ListEntry tryGet(int b, int key, long value) {
        int keyPrint = keyFingerprint(key); // before the acquire load, as in tryFindReusable
        long version = laVersion(b);
        if (turnsAway(b, version, keyPrint)) {
            return null;
        }
        if ((version & LOCKED) != 0) {
            return RETRY_LOCKED;
        }
        ListEntry entry = readPair(b, keyPrint, key, value);
        if (entry != null && entry != RETRY_LOCKED && ListEntry.count(entry.lvState()) != 0) {
            return validatedHit(b, version, entry, key);
        }
        return entry != RETRY_LOCKED && validate(b, version) ? null : RETRY_LOCKED;
    }

    /** What {@link #versionWithout} answers when the pair was in the chain at a validated version. */
    static final long CONTAINED = -1;
    /** What {@link #versionWithout} answers when its read could not be validated. */
    static final long UNKNOWN = -2;

    /**
     * Optimistic {@link #indexOf}, for a create's duplicate check. Writes nothing.
     *
     * @return {@link #CONTAINED} if the pair was in the chain at a validated version, where a create
     *     would have been refused (an entry in its chain at a stable version is alive: see the class
     *     comment); else the version (even, {@code >= 0}) at which the chain surely lacked it: if the
     *     caller's {@link #lock} returns the same version, no critical section ran in between and the
     *     chain still lacks it, so the caller need not scan it again; {@link #UNKNOWN} if the read
     *     could not be validated: the caller decides under the lock
     */
    long versionWithout(int b, int key, long value) {
        int keyPrint = keyFingerprint(key); // before the acquire load, as in tryFindReusable
        long version = laVersion(b);
        if (turnsAway(b, version, keyPrint)) {
            return version & VERSION_MASK;
        }
        if ((version & LOCKED) != 0) {
            return UNKNOWN;
        }
        ListEntry entry = readPair(b, keyPrint, key, value);
        if (!validate(b, version) || entry == RETRY_LOCKED) {
            return UNKNOWN;
        }
        return entry != null ? CONTAINED : version & VERSION_MASK;
    }

    /**
     * The optimistic scan of {@link #tryGet} and {@link #versionWithout}, newest first: the entry with
     * exactly this pair as read, not yet validated; {@code null} if the read found none;
     * {@link #RETRY_LOCKED} if the read met fingerprints beyond the entries array it loaded.
     */
    private ListEntry readPair(int b, int keyPrint, int key, long value) {
        int[] w = words[b];
        int slot = fingerprintOfPrint(keyPrint, value);
        ListEntry[] chain = null;
        for (int i = Math.min(w[LENGTH], w.length - KEYS) - 1; i >= 0; i--) {
            if (w[KEYS + i] == slot) {
                if (chain == null) {
                    chain = entries[b];
                }
                if (i >= chain.length) {
                    return RETRY_LOCKED;
                }
                ListEntry entry = chain[i];
                if (entry != null && entry.key == key && entry.value == value) {
                    return entry;
                }
            }
        }
        return null;
    }

    /**
     * The candidate a read found, referenced for the caller, if the read validates and the entry is
     * still alive when the reference is taken; else a retry under the lock. The reference is taken
     * only after the validation, so a lookup never holds a reference it gives back (a
     * {@code deleteOrGet} or reclaim pass that finds the entry held finds a holder it is handed to):
     * at a validated version every entry of the chain is alive, and an entry leaves its chain only
     * dead (claimed under the lock), so a reference taken on it alive ({@link ListEntry#tryAcquire},
     * which refuses count zero) is taken on an entry still in its chain.
     */
    private ListEntry validatedHit(int b, long version, ListEntry entry, int key) {
        if (validate(b, version) && entry.key == key && entry.tryAcquire()) {
            return entry;
        }
        return RETRY_LOCKED;
    }

    // ---------------------------------------------------------------------------------------------
    // Under the lock bit
    // ---------------------------------------------------------------------------------------------

    /** Entries in bucket {@code b}'s chain. Lock held. */
    int length(int b) {
        return words[b][LENGTH];
    }

    /** The entry at chain index {@code index}. Lock held. */
    ListEntry entryAt(int b, int index) {
        return entries[b][index];
    }

    /** Index of the pair in bucket {@code b}'s chain, newest first, or -1. Lock held. */
    int indexOf(int b, int key, long value) {
        int keyPrint = keyFingerprint(key);
        if (filtersLack(BucketLockWord.lpHead(heads, b), wideFilter(b), keyPrint)) {
            return -1;
        }
        int[] w = words[b];
        ListEntry[] chain = entries[b];
        int slot = fingerprintOfPrint(keyPrint, value);
        for (int i = w[LENGTH] - 1; i >= 0; i--) {
            if (w[KEYS + i] == slot && chain[i].key == key && chain[i].value == value) {
                return i;
            }
        }
        return -1;
    }

    /** Index of this very entry in bucket {@code b}'s chain, or -1 if it left it. Lock held. */
    int indexOfEntry(int b, ListEntry entry) {
        int[] w = words[b];
        ListEntry[] chain = entries[b];
        int slot = fingerprint(entry.key, entry.value);
        for (int i = w[LENGTH] - 1; i >= 0; i--) {
            if (w[KEYS + i] == slot && chain[i] == entry) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The newest reusable live entry with this key at a chain index below {@code from},
     * referenced for the caller, or {@code null}. Lock held.
     */
    ListEntry findReusable(int b, int key, int from) {
        int[] w = words[b];
        int keyPrint = keyFingerprint(key);
        for (int i = from - 1; i >= 0; i--) {
            if (w[KEYS + i] >>> 16 == keyPrint) {
                ListEntry entry = entries[b][i];
                if (entry.key == key && entry.hasFlag(ListEntry.REUSABLE) && entry.tryAcquire()) {
                    return entry;
                }
            }
        }
        return null;
    }

    /**
     * Makes room for one more entry in bucket {@code b}'s chain (kernel: none; the port's chain cap).
     * Room is a room under the cap. Allocates before anything changes, so an {@link OutOfMemoryError}
     * leaves the bucket as it was. Lock held.
     */
    void ensureRoom(int b) {
        int[] w = words[b];
        int length = w[LENGTH];
        if (KEYS + length < w.length) {
            return;
        }
        int capacity = grownCapacity(length);
        int[] grownWords = Arrays.copyOf(w, KEYS + capacity);
        ListEntry[] grownEntries = Arrays.copyOf(entries[b], capacity);
        words[b] = grownWords; // publish both only once both exist
        entries[b] = grownEntries;
    }

    /**
     * Hashes the entry at the head of the chain (kernel {@code hlist_bl_add_head}). Lock held. Call
     * {@link #ensureRoom} first, in the same critical section: this one never allocates.
     */
    void addNewest(int b, ListEntry entry) {
        int[] w = words[b];
        int length = w[LENGTH];
        w[KEYS + length] = fingerprint(entry.key, entry.value);
        entries[b][length] = entry;
        w[LENGTH] = length + 1;
        setFilterOpaque(b, (BucketLockWord.lpHead(heads, b) & FILTER_MASK) | filterBit(entry.key));
        setWideFilterOpaque(b, (long) LONGS.get(wideFilters, b) | wideFilterBits(entry.key));
    }

    /** Unhashes the entry at chain index {@code index}, keeping the order of the rest. Lock held. */
    void removeAt(int b, int index) {
        shiftOut(b, index);
        noteRemovals(b, 1);
    }

    /** The chain shift of {@link #removeAt}, leaving the filter to the caller. Lock held. */
    private void shiftOut(int b, int index) {
        int[] w = words[b];
        ListEntry[] chain = entries[b];
        int last = w[LENGTH] - 1;
        System.arraycopy(w, KEYS + index + 1, w, KEYS + index, last - index);
        System.arraycopy(chain, index + 1, chain, index, last - index);
        chain[last] = null;
        w[LENGTH] = last;
    }

    /**
     * Counts keys that left bucket {@code b}'s chain, whose bits the key filter still has, and
     * rebuilds the filter once they are more than a quarter of the chain. Lock held; no allocation.
     */
    private void noteRemovals(int b, int removed) {
        int[] w = words[b];
        w[STALE] += removed;
        if (4 * w[STALE] > w[LENGTH]) {
            refilter(b);
        }
    }

    /**
     * Rebuilds bucket {@code b}'s key filter from the keys in its chain: the filter then claims no
     * key that left. Lock held; no allocation.
     */
    private void refilter(int b) {
        int[] w = words[b];
        long filter = 0;
        long wide = 0;
        for (int i = w[LENGTH] - 1; i >= 0; i--) {
            filter |= filterBitOfSlot(w[KEYS + i]);
            wide |= wideFilterBitsOfSlot(w[KEYS + i]);
        }
        w[STALE] = 0;
        setFilterOpaque(b, filter);
        setWideFilterOpaque(b, wide);
    }

    /**
     * The chain cap: while bucket {@code b}'s chain has {@code cap} or more entries, claims its oldest
     * entry that nobody holds (count 1 to 0) and unhashes it. Second chance: a referenced entry
     * met on the way is passed over once, its flag cleared unless somebody holds it (the cap cannot
     * take a held entry, so its flag is kept for a reclaim that can), and an entry touched since the
     * walk looked at it is passed over too ({@link ListEntry#tryClaim(int)}); only when no
     * unreferenced unheld entry is left does the oldest unheld one go regardless. Held entries are
     * never touched, so when this returns the chain is longer than the cap only by entries somebody
     * holds. At most two walks of the chain. Lock held; no allocation.
     *
     * @return the entries claimed; the caller takes them off the entry count and the LRU list
     */
    int reclaimForRoom(int b, int cap) {
        int claimed = 0;
        for (int pass = 0; pass < 2 && words[b][LENGTH] >= cap; pass++) {
            int i = 0;
            while (i < words[b][LENGTH] && words[b][LENGTH] >= cap) {
                ListEntry entry = entries[b][i];
                if (pass == 0 && entry.hasFlag(ListEntry.REFERENCED)) {
                    if (!entry.heldByAnyCaller()) {
                        entry.setFlag(ListEntry.REFERENCED, false);
                    }
                    i++;
                } else if (entry.tryClaim(pass == 0 ? ListEntry.REFERENCED : 0)) { // a touch since the look is seen
                    shiftOut(b, i);
                    claimed++;
                } else {
                    i++;
                }
            }
        }
        if (claimed != 0) {
            noteRemovals(b, claimed);
        }
        return claimed;
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
     * pairs array only grows when more creates than ever before are in flight in this bucket at once,
     * so in the steady state recording a request allocates nothing. Allocates before it changes
     * anything. Lock held.
     */
    void addRequest(int b, int key, long value) {
        if (words[b] == NO_WORDS) {
            words[b] = new int[KEYS];
        }
        int[] w = words[b];
        int count = w[REQUESTS];
        long[] pairs = requests[b];
        if (pairs == null || 2 * count == pairs.length) {
            requests[b] = pairs = pairs == null
                    ? new long[2] : Arrays.copyOf(pairs, 2 * grownCapacity(count));
        }
        pairs[2 * count] = key;
        pairs[2 * count + 1] = value;
        w[REQUESTS] = count + 1;
    }

    /**
     * Forgets a create in progress (kernel {@code list_del(&req.lnode)}). Lock held; no allocation.
     *
     * @return {@code false} if there was no such request: only after {@code close} dropped them all
     */
    boolean removeRequest(int b, int key, long value) {
        int[] w = words[b];
        long[] pairs = requests[b];
        int last = 2 * (w[REQUESTS] - 1);
        for (int i = last; i >= 0; i -= 2) {
            if (pairs[i] == key && pairs[i + 1] == value) {
                pairs[i] = pairs[last];
                pairs[i + 1] = pairs[last + 1];
                w[REQUESTS]--;
                return true;
            }
        }
        return false;
    }

    /**
     * Withdraws a request whose create failed (its allocation threw): lock, forget, unlock, in one
     * shallow method that allocates nothing, so it can run in the handler of an
     * {@link OutOfMemoryError} as well as anywhere. (No Java code can promise the same for a
     * {@link StackOverflowError} raised inside it: keeping the path two calls deep is what keeps
     * the odds of one there as small as they can be.)
     */
    void withdrawRequest(int b, int key, long value) {
        lock(b);
        try {
            removeRequest(b, key, value);
        } finally {
            unlock(b);
        }
    }

    /**
     * Kills and unhashes every entry of bucket {@code b} (part of {@code mb_cache_destroy}). Lock
     * held. Publishes the shared empty arrays (length 0, which fits every capacity), so an optimistic
     * reader racing the close reads a consistent, empty chain.
     */
    void killAll(int b) {
        int[] w = words[b];
        ListEntry[] chain = entries[b];
        for (int i = 0; i < w[LENGTH]; i++) {
            chain[i].kill();
        }
        entries[b] = NO_ENTRIES;
        words[b] = NO_WORDS;
        requests[b] = null;
        setFilterOpaque(b, 0);
        setWideFilterOpaque(b, 0);
    }

    /** Grows by half, from 4: at 16 entries a bucket the arrays are a fifth empty at most. */
    private static int grownCapacity(int length) {
        return Math.max(4, length + (length >> 1));
    }
}
