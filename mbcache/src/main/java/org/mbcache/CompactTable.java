package org.mbcache;

import static org.mbcache.CompactSlots.COUNT_MASK;
import static org.mbcache.CompactSlots.GENERATION_MASK;
import static org.mbcache.CompactSlots.GENERATION_SHIFT;
import static org.mbcache.CompactSlots.IDENTITY;
import static org.mbcache.CompactSlots.REFERENCED;
import static org.mbcache.CompactSlots.casMeta;
import static org.mbcache.CompactSlots.generation;
import static org.mbcache.CompactSlots.keyOf;
import static org.mbcache.CompactSlots.lvMeta;
import static org.mbcache.CompactSlots.soMeta;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import org.mbcache.internal.HashedWaitQueues;

/**
 * The storage of {@link CompactMbCache}: bucket records and slots in primitive arrays allocated in
 * pages, and a lock-free free list of slots behind a delay ring ({@link CompactDelayRing}).
 *
 * <h2>Slots</h2>
 * A slot is two {@code long}s side by side in a slot page ({@code 2^slotPageBits} slots a page, at
 * most 2^14 slots, 256 KiB: below half of G1's smallest region, so no page is a humongous object):
 * the value, then the <em>meta word</em> (key, count, flags, generation), whose layout and CAS
 * loops are {@link CompactSlots}'. A hot slot's cells are in a table of at most
 * {@value HotReferences#MAX_HOT_ENTRIES} per cache (see "Hot slots" below). Sixteen bytes at a
 * 16-byte offset from the array's first element: the JVM aligns arrays to 8 bytes only, so a slot
 * straddles two cache lines only where the page happens to start at an odd multiple of 8 (then one
 * slot in four does). Slot 0 is never used, so that a bucket reference of zero means "empty". The
 * waiters of {@code waitUnused} wait on the table ({@link #unusedWaiters}).
 *
 * <h2>The buckets</h2>
 * Any number of buckets from 1 to 2^30, not only powers of two, so that a table sized from its
 * {@code maxEntries} keeps about the same number of entries a bucket at every size. A bucket has two
 * parts, each in pages of up to 2^12 buckets:
 * <ul>
 *   <li>its <em>head</em>, two {@code long}s side by side in a head page (64 KiB): the head word
 *       (bit 0 the lock bit, bits 1-31 a version, bits 32-63 the key filter) and the wide filter
 *       (64 bits). The heads of a table of {@code n} entries take about 1.3 bytes an entry, so
 *       they stay in the processor caches where the records do not, and most misses read nothing
 *       else (below).</li>
 *   <li>its <em>record</em>, eight {@code long}s in a record page (256 KiB): sixteen {@code int}s,
 *       the chain's length (its low {@code slotBits} bits; the bits above count the removals since
 *       the filters were last rebuilt, below), then the references of the chain's newest 15
 *       entries, <em>newest first</em>. A reference is the slot index in its low {@code slotBits}
 *       bits and the key's fingerprint above. A longer chain keeps its oldest {@code length - 15}
 *       entries, oldest first, in an {@code int[]} of the bucket's ({@code overflow[b]}, 4 ints at
 *       first, doubled as needed, kept until close: a chain going up and down around 15 does not
 *       allocate each time): chain position {@code pos} (0 the oldest) is
 *       {@code overflow[b][pos]} below {@link #firstInline}{@code (length)}, and the record's
 *       inline reference {@code length - 1 - pos} from there up (inline reference 0, the newest,
 *       shares the record's first {@code long} with the length). Lookups walk newest first, so a
 *       hit in any of a chain's newest 15 reads the record and not the overflow array (two more
 *       cache misses in a row at millions of entries: the directory's element, then the array).
 *       A record is 64 bytes, so it spans one or two cache lines (arrays are only 8-byte aligned
 *       by the JVM: 7 record pages in 8 start their records off a line boundary). Newest first,
 *       the walk's first references are in the length's line at addresses that do not depend on
 *       the length read, so a hit on a chain's newer entries waits for one line of the record;
 *       oldest first it read the length and then, at an address computed from it, the record's
 *       far end, two misses in a row. Adding moves every inline reference one place up (the
 *       record's oldest, when it is full, to the overflow array's end); a removal moves at most
 *       one back ({@link #removeAt}).</li>
 * </ul>
 * No page is half of G1's smallest region (1 MiB) or more, so none is a humongous object.
 *
 * <h2>The keyed index</h2>
 * {@link KeyedIndex}'s: {@code h = a * p + b mod 2^64}, {@code p} the key premixed with a secret,
 * with {@code a} (odd), {@code b} and the secret from the cache's seed. The bucket is
 * {@code (hi(h) * buckets) >>> 32} ("fastrange": the top 32 bits of {@code h} scaled to the bucket
 * count), which for a power of two is exactly the top {@code bucketBits} bits the list layout
 * takes, so one seed gives the same buckets in both layouts. The fingerprint is
 * the top {@code 32 - slotBits} bits of the rest of that product (the bits of {@code hi(h)} below
 * the bucket's, scaled) XORed with the low half of {@code h}, so it stays informative when the
 * bucket count uses up most of the top half. The key filters take their bits from the whole keyed
 * hash instead ({@link #filterMix}), not from the fingerprint: at millions of entries the slot index
 * leaves the fingerprint a few bits (6 at 10^7 entries, 3 at 10^8), too few to tell many keys apart.
 *
 * <h2>The key filters</h2>
 * Two filters, as the list layout's: 32 bits of the key's keyed hash, mixed ({@link #filterMix}: the hash's
 * halves XORed, times an odd constant, the top half of the product, so every bit depends on the
 * whole hash and not only on the bits that pick the bucket or make the fingerprint), pick one of the
 * head word's upper 32 bits (their top five bits) and two of the wide filter's 64 (the next twelve),
 * set for every key in the chain. The lock holder sets a new key's bits when it hashes it. A removal
 * leaves the filters as they are: they then cover the keys left and the one removed, a superset,
 * which lets more absent keys through but never turns a present one away. Every
 * {@link #rebuildEvery}-th removal from a chain since the last rebuild (the eighth; the fourth where
 * {@code slotBits} is 30), counted in the record's first int above the length, rebuilds both
 * filters exactly from the keys left ({@link #refilter}). A key is not in the record, so the rebuild
 * reads each slot left, its meta word's key half, which is fixed while the bit is held (a slot
 * leaves its chain, and can be freed and reused, only under it). The removal that empties a chain
 * clears its filters, and so does close. So an even head version's filters cover every key of the
 * chain of that version, and besides them at most the {@code rebuildEvery - 1} keys removed since
 * the last rebuild. A lookup reads the head (version and filter in one load, then the wide word),
 * and answers a miss without reading the record when either filter lacks the key and the version
 * validates. Filters changed inside a critical section are published by the unlock with its even
 * version; a lookup that read either word while a holder changed it sees the version moved when it
 * validates, and retries under the bit.
 *
 * <h2>Memory ordering</h2>
 * Accessor names say the mode, JCTools-style: {@code lv} volatile load, {@code la} acquire load,
 * {@code lp}/{@code sp} plain load and store, {@code so} release store, {@code cas}
 * compare-and-set. Bucket contents (length, references, overflow arrays, the wide filter) are
 * written only by the holder of the bucket's lock bit, and read optimistically under the seqlock
 * protocol of {@link BucketLockWord} (acquire load of the head word, plain loads, acquire fence,
 * load of the head word again); the lock CAS is an acquire, followed by a store-store fence, and
 * the unlock a release store. The version has 31 bits and wraps, with that class's bound (the
 * contract, section 5): a validation is fooled only if exactly a multiple of 2^31 critical sections
 * ran on the one bucket while the reader stalled between its two loads. An optimistic reader
 * computes the first inline position from the length it read, walks the record's inline
 * references first, and loads {@code overflow[b]} (plainly) only when its walk gets below that
 * position; it indexes the array only below the array's own length, and retries, never faults,
 * where the array is {@code null} or too short for the length it read. The holder of the bit moves
 * references between the record and the overflow array ({@link #addNewest} moves the record's
 * oldest to the array, {@link #removeAt} the array's newest to the record, each shifting the
 * others) and replaces the array with a larger copy ({@link #ensureRoom}), all within one critical
 * section, after its odd version (the store-store fence). So a reader that read any reference the
 * holder moved or wrote, into either the record or the array, or saw the new array, or the new
 * length, sees the version moved when it validates (its acquire fence orders those loads before
 * the head word's second load) and retries; one whose version validates read no store of any
 * critical section after the one its first load saw published, so the length, the record and the
 * array it read, however late it loaded the array, are the chain of that version.
 * The filters are stored opaquely (atomic 64-bit stores) inside the critical section; the head
 * word's is republished by the unlock's release store with the new version.
 *
 * <p>The meta word's protocol and memory order are {@link CompactSlots}'. Slot pages and
 * handle pages are published by a release store into their directory and read with an acquire load
 * (a racing optimistic reader may follow a reference into a page it has not seen yet: it finds
 * {@code null} there and retries under the lock).
 */
final class CompactTable implements HotReferences.Host {

    static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle PAGES = MethodHandles.arrayElementVarHandle(long[][].class);
    private static final VarHandle FREE_HEAD;
    private static final VarHandle NEXT_SLOT;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            FREE_HEAD = lookup.findVarHandle(CompactTable.class, "freeHead", long.class);
            NEXT_SLOT = lookup.findVarHandle(CompactTable.class, "nextSlot", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Longs a bucket record takes: sixteen ints, the length and 15 inline references. */
    static final int RECORD_LONGS = 8;
    /** Chain positions held in the record itself, the newest; older ones are in the bucket's overflow array. */
    static final int INLINE = 15;
    /** Longs a bucket head takes: the head word and the wide filter. */
    private static final int HEAD_LONGS = 2;
    /** The first overflow array's capacity. */
    private static final int FIRST_OVERFLOW = 4;
    /**
     * 2^12 buckets a page: records of 256 KiB, heads of 64 KiB, under half of G1's smallest region
     * (1 MiB), so a page is never a humongous object (those take whole regions, and a page of
     * exactly half a region or more would waste up to half of what it takes).
     */
    private static final int BUCKET_PAGE_BITS = 12;
    private static final int BUCKET_PAGE_MASK = (1 << BUCKET_PAGE_BITS) - 1;
    private static final long LOCKED = BucketLockWord.LOCKED;
    private static final long FILTER_MASK = BucketLockWord.FILTER_MASK;
    /** The odd multiplier of {@link #filterMix} (SplitMix64's first). */
    private static final long FILTER_MULTIPLIER = 0xBF58_476D_1CE4_E5B9L;
    /**
     * Every this many removals from a chain rebuild its filters from the keys left, where the
     * record has the bits to count them ({@link #rebuildEvery}); those between leave the filters as
     * they are. Eight, not four: a rebuild reads every slot of the chain, cache misses at millions of
     * entries, paid by the create at the bound that reclaims a pair; the filters then claim on
     * average 3.5 keys that left besides a chain's 14 or so.
     */
    static final int REBUILD_EVERY = 8;
    /** The most buckets a table has. */
    static final int MAX_BUCKETS = 1 << 30;

    final int buckets;
    final int slotBits;
    final int slotMask;
    /**
     * {@link #REBUILD_EVERY}, or fewer where the record's first int lacks the bits to count that
     * many: it holds the chain's length in its low {@code slotBits} bits (a chain holds at most
     * {@code 2^slotBits - 1} slots, slot 0 being never used) and the removals since the last
     * rebuild above, so with {@code slotBits} 30 it counts to 3 and rebuilds every fourth.
     */
    final int rebuildEvery;
    final int slotPageBits;
    private final int slotPageMask;
    private final long multiplier;
    private final long increment;
    private final int premixSecret;

    private final long[][] headPages;
    private final long[][] bucketPages;
    private final int[][] overflow;
    private final long[][] slotPages;
    /** Pages allocated under this lock (rare: once per page). */
    private final Object pageLock = new Object();
    /**
     * Where {@code waitUnused} waits for a slot's callers to leave, keyed by this table: one queue
     * (waits are rare; every waiter re-checks its own slot after a wake-up).
     */
    final HashedWaitQueues unusedWaiters = new HashedWaitQueues(0);
    /**
     * What {@link #consume} compares the sums of loads-only look-aheads with ({@link #touchChain},
     * {@link #touchBucketsOfClaimable}): a value a sum almost never equals, set once. A plain field
     * that is read, and written only when a sum happens to equal it (about once in 2^64; a racy
     * write then changes nothing that matters), so that the compiler keeps the loads without a
     * store per create that every creating thread would contend on.
     */
    private long touchSentinel = System.nanoTime() | 1L << 62;

    /** The next never-used slot; slots below it have their page. */
    private volatile int nextSlot = 1;
    /** The free list: a tag in the upper 32 bits (against ABA), the top slot in the lower (0: empty). */
    private volatile long freeHead;
    /** The cache's tag, in place in its handles' top 16 bits ({@link CompactHandles}); final, read by every handle check. */
    final long handleTag = CompactHandles.newTag();
    /** Freed slots on their way to the free list ({@link #free}). */
    private final CompactDelayRing delayRing;

    /**
     * An empty table.
     *
     * @param buckets the bucket count, in {@code [1, 2^30]}
     * @param slotBits log2 of the most slots
     * @param slotPageBits log2 of the slots a page
     * @param seed the keyed index's seed ({@link KeyedIndex#seed})
     */
    CompactTable(int buckets, int slotBits, int slotPageBits, long[] seed) {
        if (buckets < 1 || buckets > MAX_BUCKETS) {
            throw new IllegalArgumentException("buckets must be in [1, 2^30], was " + buckets);
        }
        this.buckets = buckets;
        this.slotBits = slotBits;
        this.slotMask = (1 << slotBits) - 1;
        this.rebuildEvery = Math.min(REBUILD_EVERY, 1 << (32 - slotBits));
        this.slotPageBits = slotPageBits;
        this.slotPageMask = (1 << slotPageBits) - 1;
        this.multiplier = KeyedIndex.multiplier(seed);
        this.increment = KeyedIndex.increment(seed);
        this.premixSecret = KeyedIndex.premixSecret(seed);
        int pages = (int) ((buckets + (long) BUCKET_PAGE_MASK) >>> BUCKET_PAGE_BITS);
        headPages = new long[pages][];
        bucketPages = new long[pages][];
        for (int p = 0; p < pages; p++) {
            int inPage = Math.min(BUCKET_PAGE_MASK + 1, buckets - (p << BUCKET_PAGE_BITS));
            headPages[p] = new long[HEAD_LONGS * inPage];
            bucketPages[p] = new long[RECORD_LONGS * inPage];
        }
        overflow = new int[buckets][];
        slotPages = new long[1 << (slotBits - slotPageBits)][];
        delayRing = new CompactDelayRing(slotBits);
    }

    int bucketCount() {
        return buckets;
    }

    // ---------------------------------------------------------------------------------------------
    // The keyed index (KeyedIndex's family and seed expansion)
    // ---------------------------------------------------------------------------------------------

    /**
     * The key's keyed hash ({@link KeyedIndex#keyedHash(int, int, long, long)}: {@code a * p + b mod
     * 2^64} of the premixed key {@code p}): its bucket ({@link #bucketOfHash}), its fingerprint
     * ({@link #fingerprintOfHash}) and its filter bits ({@link #filterMixOfHash}) are all taken from
     * it, so a lookup or a create computes it once and passes it on.
     */
    long keyedHash(int key) {
        return KeyedIndex.keyedHash(key, premixSecret, multiplier, increment);
    }

    /** The bucket of a key, by its {@link #keyedHash}. */
    int bucketOfHash(long hash) {
        return (int) (((hash >>> 32) * buckets) >>> 32);
    }

    /** The bucket of a key ({@link #bucketOfHash} of its {@link #keyedHash}). */
    int bucketOf(int key) {
        return bucketOfHash(keyedHash(key));
    }

    /** The fingerprint of a key, by its {@link #keyedHash}: in place above the slot bits of a reference. */
    int fingerprintOfHash(long hash) {
        int bits = (int) ((hash >>> 32) * buckets) ^ (int) hash;
        return bits & ~slotMask;
    }

    /** The key's fingerprint ({@link #fingerprintOfHash} of its {@link #keyedHash}). */
    int fingerprintOf(int key) {
        return fingerprintOfHash(keyedHash(key));
    }

    int fingerprintOfRef(int ref) {
        return ref & ~slotMask;
    }

    int slotOfRef(int ref) {
        return ref & slotMask;
    }

    /**
     * The key's 32 bits for the filters: its keyed hash folded onto itself (the top half XORed into
     * the bottom) and multiplied by an odd constant, the top half of the product. Every bit of it
     * depends on the whole keyed hash, the low half included (the bits the bucket leaves alone), so
     * keys of one bucket, and keys of one bucket with one fingerprint, spread over all its values.
     * (The keyed hash alone would not do: its bit {@code j} depends only on the key's bits up to
     * {@code j}.)
     */
    int filterMix(int key) {
        return filterMixOfHash(keyedHash(key));
    }

    /** The {@link #filterMix} of a key, by its {@link #keyedHash}. */
    int filterMixOfHash(long hash) {
        return (int) (((hash ^ (hash >>> 32)) * FILTER_MULTIPLIER) >>> 32);
    }

    /** The head word's filter bit of a {@link #filterMix} (in place: one of bits 32-63). */
    static long filterBit(int mix) {
        return 1L << (32 + (mix >>> 27));
    }

    /** The wide filter's bits of a {@link #filterMix}: two, picked by the twelve bits below the head's five. */
    static long wideFilterBits(int mix) {
        return (1L << ((mix >>> 21) & 63)) | (1L << ((mix >>> 15) & 63));
    }

    // ---------------------------------------------------------------------------------------------
    // Bucket heads: the lock bit, the version and the filters
    // ---------------------------------------------------------------------------------------------

    private long[] headPage(int b) {
        return headPages[b >>> BUCKET_PAGE_BITS];
    }

    private static int headIndex(int b) {
        return (b & BUCKET_PAGE_MASK) * HEAD_LONGS;
    }

    /** Takes bucket {@code b}'s lock bit: {@link BucketLockWord#lock}; returns the even version it was taken from. */
    long lock(int b) {
        return BucketLockWord.lock(headPage(b), headIndex(b));
    }

    /** Drops bucket {@code b}'s lock bit: {@link BucketLockWord#unlock}. */
    void unlock(int b) {
        BucketLockWord.unlock(headPage(b), headIndex(b));
    }

    /** The head word an optimistic read starts from: {@link BucketLockWord#laHead}. */
    long laVersion(int b) {
        return BucketLockWord.laHead(headPage(b), headIndex(b));
    }

    /** Whether no critical section began since {@code head} was read: {@link BucketLockWord#validate}. */
    boolean validate(int b, long head) {
        return BucketLockWord.validate(headPage(b), headIndex(b), head);
    }

    /**
     * Whether an optimistic read that loaded {@code head} may answer "absent" for a key whose
     * {@link #filterMix} is {@code mix} without reading the record: the version is even and
     * validates, and one of the two filters lacks the key. The wide word is read after the head word (an acquire
     * load) and counts only because the validation follows it. No branch on either filter's answer
     * (a branch taken at random is mispredicted that often).
     */
    boolean turnsAway(int b, long head, int mix) {
        long wide = (long) LONGS.getOpaque(headPage(b), headIndex(b) + 1);
        boolean lacks = ((filterBit(mix) & ~head) | (wideFilterBits(mix) & ~wide)) != 0;
        // non-short-circuit &: the validation runs after the wide word's load whatever the filters say
        return (head & LOCKED) == 0 & validate(b, head) & lacks;
    }

    /** Adds a key, by its {@link #filterMix}, to the bucket's filters. Bit held. */
    private void addToFilters(int b, int mix) {
        long[] page = headPage(b);
        int at = headIndex(b);
        LONGS.setOpaque(page, at, (long) LONGS.get(page, at) | filterBit(mix));
        LONGS.setOpaque(page, at + 1, (long) LONGS.get(page, at + 1) | wideFilterBits(mix));
    }

    /** Empties the bucket's filters. Bit held. */
    private void clearFilters(int b) {
        setFilters(b, 0, 0);
    }

    /** Replaces the bucket's filters (opaque stores, the head word's version kept). Bit held. */
    private void setFilters(int b, long head, long wide) {
        long[] page = headPage(b);
        int at = headIndex(b);
        BucketLockWord.setFilterOpaque(page, at, head);
        LONGS.setOpaque(page, at + 1, wide);
    }

    // ---------------------------------------------------------------------------------------------
    // Bucket records: the chain (plain; under the bit, or read optimistically and validated)
    // ---------------------------------------------------------------------------------------------

    private long[] recordPage(int b) {
        return bucketPages[b >>> BUCKET_PAGE_BITS];
    }

    private static int recordBase(int b) {
        return (b & BUCKET_PAGE_MASK) * RECORD_LONGS;
    }

    /** Int {@code j} (0: length, 1-15: the record's inline references, newest first) of bucket {@code b}'s record. Plain. */
    private int lpInt(int b, int j) {
        long word = recordPage(b)[recordBase(b) + (j >>> 1)];
        return (int) (word >>> ((j & 1) << 5));
    }

    private void spInt(int b, int j, int value) {
        long[] page = recordPage(b);
        int at = recordBase(b) + (j >>> 1);
        int shift = (j & 1) << 5;
        long word = page[at];
        page[at] = (word & ~(0xFFFF_FFFFL << shift)) | ((value & 0xFFFF_FFFFL) << shift);
    }

    /**
     * The chain's length, in {@code [0, 2^slotBits)} (the record's first int without the removals
     * counted above it, {@link #rebuildEvery}). Plain: under the bit, or optimistically (then any
     * value of that range, to be validated).
     */
    int length(int b) {
        return lpInt(b, 0) & slotMask;
    }

    /**
     * The chain position of the record's oldest inline reference in a chain of {@code length}:
     * {@code max(0, length - INLINE)}. The positions below it, the chain's oldest, are in the
     * overflow array at their own index; position {@code pos} at or above it is inline reference
     * {@code length - 1 - pos} ({@link #inlineRef}). Never negative, whatever length was read.
     */
    static int firstInline(int length) {
        return Math.max(0, length - INLINE);
    }

    /** The reference at chain position {@code pos} (0 oldest), {@code pos < length}. Bit held. */
    int refAt(int b, int pos) {
        int length = length(b);
        return pos >= firstInline(length) ? lpInt(b, length - pos) : overflow[b][pos];
    }

    /**
     * The record's inline reference {@code i} ({@code i < INLINE}; 0 the newest, which is chain
     * position {@code length - 1}; {@code i} is chain position {@code length - 1 - i}). Plain;
     * optimistic readers validate.
     */
    int inlineRef(int b, int i) {
        return lpInt(b, 1 + i);
    }

    /**
     * The overflow array as an optimistic reader sees it (plain): possibly stale, possibly
     * {@code null}, possibly shorter than the {@link #firstInline} of the length it read. The reader
     * indexes it only below its own length and validates.
     */
    int[] lpOverflow(int b) {
        return overflow[b];
    }

    /**
     * Makes room for one more reference in bucket {@code b}'s chain, allocating before anything
     * changes (so a Throwable leaves the bucket as it was): when the record is full, room in the
     * overflow array for the record's oldest reference, which {@link #addNewest} moves there. Bit
     * held. A larger array replaces the old one whole (a copy): an optimistic reader holding the old
     * one reads it consistently.
     */
    void ensureRoom(int b) {
        int length = length(b);
        if (length < INLINE) {
            return;
        }
        int[] spill = overflow[b];
        int needed = length - INLINE + 1;
        if (spill == null || spill.length < needed) {
            int capacity = spill == null ? FIRST_OVERFLOW : spill.length * 2;
            overflow[b] = spill == null ? new int[capacity] : Arrays.copyOf(spill, capacity);
        }
    }

    /**
     * Appends a reference as the newest and adds its key, by the key's {@link #filterMix}, to the
     * filters. Bit held, {@link #ensureRoom} done. A full record first moves its oldest inline
     * reference (the last) to the end of the overflow array (chain position {@code length - INLINE},
     * the overflow's newest). Then every inline reference moves one place up, the last falling off
     * the record's end (moved, or zero past a shorter chain), and the new one becomes the first:
     * the record's eight longs each shifted by one int, whatever the length. The removals counted
     * since the last rebuild stay.
     */
    void addNewest(int b, int ref, int mix) {
        long[] page = recordPage(b);
        int base = recordBase(b);
        long lengthWord = page[base];
        int length = (int) lengthWord & slotMask;
        if (length >= INLINE) {
            overflow[b][length - INLINE] = (int) (page[base + RECORD_LONGS - 1] >>> 32);
        }
        for (int w = RECORD_LONGS - 1; w > 0; w--) {
            page[base + w] = page[base + w] << 32 | page[base + w - 1] >>> 32;
        }
        int word = (int) lengthWord;
        page[base] = (ref & 0xFFFF_FFFFL) << 32 | (((word & ~slotMask) | (length + 1)) & 0xFFFF_FFFFL);
        addToFilters(b, mix);
    }

    /**
     * Removes the reference at {@code pos}, keeping the order of the others. The filters keep the
     * removed key's bits (they still cover every key left), except on every {@link #rebuildEvery}-th
     * removal since the last rebuild, which rebuilds them from the keys left ({@link #refilter}), and
     * the removal that empties the chain, which clears them. Bit held.
     *
     * <p>The record keeps the newest {@code min(length, INLINE)}, newest first. Removed from the
     * record (inline reference {@code i = length - 1 - pos}), the older inline references move one
     * place down over it and the record's last place takes the overflow's newest, in a chain longer
     * than the record (whose overflow array's index {@code first - 1} is then vacated), or zero.
     * Removed from the overflow array, the overflow's newer references move one place down over it
     * and the record stays as it is (each of its references is one position lower, as is the first
     * inline position {@link #firstInline}, and its inline index is the same). Either way at most
     * fifteen moves in the record, and in the overflow array only those newer than the removed
     * position.
     */
    void removeAt(int b, int pos) {
        int word = lpInt(b, 0);
        int length = word & slotMask;
        int left = length - 1;
        int first = firstInline(length);
        int[] spill = first == 0 ? null : overflow[b];
        if (pos < first) {
            System.arraycopy(spill, pos + 1, spill, pos, first - 1 - pos);
        } else {
            for (int j = 1 + length - 1 - pos; j < INLINE; j++) {
                spInt(b, j, lpInt(b, j + 1));
            }
            spInt(b, INLINE, spill == null ? 0 : spill[first - 1]);
        }
        if (spill != null) {
            spill[first - 1] = 0;
        }
        int removals = (word >>> slotBits) + 1;
        if (left == 0) {
            spInt(b, 0, 0);
            clearFilters(b);
        } else if (removals >= rebuildEvery) {
            spInt(b, 0, left);
            refilter(b, left);
        } else {
            spInt(b, 0, removals << slotBits | left);
        }
    }

    /**
     * Rebuilds bucket {@code b}'s filters from the keys of its chain's {@code length} slots: the
     * filters then let through no key that left. A chained slot's key is fixed while the bit is held
     * (a slot leaves its chain, and so can be freed and refilled, only under it), so its meta word's
     * upper half is read as it is; the lower half, the count and flags, changes by CAS meanwhile and is
     * not used. An opaque load: atomic, and not merged with or hoisted above the loop's other loads.
     * One slot read a key, paid every {@link #rebuildEvery} removals. Bit held.
     */
    private void refilter(int b, int length) {
        long head = 0;
        long wide = 0;
        for (int pos = 0; pos < length; pos++) {
            int slot = slotOfRef(refAt(b, pos));
            long meta = (long) LONGS.getOpaque(slotPage(slot), valueIndex(slot) + 1);
            int mix = filterMix(keyOf(meta));
            head |= filterBit(mix);
            wide |= wideFilterBits(mix);
        }
        setFilters(b, head, wide);
    }

    /** The position of {@code slot} in bucket {@code b}'s chain, oldest first, or -1. Bit held. */
    int positionFromOldest(int b, int slot) {
        int length = length(b);
        for (int pos = 0; pos < length; pos++) {
            if (slotOfRef(refAt(b, pos)) == slot) {
                return pos;
            }
        }
        return -1;
    }

    /** The position of {@code slot} in bucket {@code b}'s chain, or -1. Bit held. */
    int positionOf(int b, int slot) {
        for (int pos = length(b) - 1; pos >= 0; pos--) {
            if (slotOfRef(refAt(b, pos)) == slot) {
                return pos;
            }
        }
        return -1;
    }

    /** Empties the chain and its filters, and forgets the removals counted (close). Bit held. */
    void clear(int b) {
        int length = Math.min(length(b), INLINE);
        for (int pos = 0; pos < length; pos++) {
            spInt(b, 1 + pos, 0);
        }
        spInt(b, 0, 0);
        overflow[b] = null;
        clearFilters(b);
    }

    // ---------------------------------------------------------------------------------------------
    // Slots
    // ---------------------------------------------------------------------------------------------

    /** The page of {@code slot}, or {@code null} if this thread has not seen it published. Acquire. */
    long[] laSlotPage(int slot) {
        return (long[]) PAGES.getAcquire(slotPages, slot >>> slotPageBits);
    }

    /** The page of a slot known to be allocated (reached under a bucket bit, or through a held handle). */
    long[] slotPage(int slot) {
        long[] page = slotPages[slot >>> slotPageBits];
        return page != null ? page : laSlotPage(slot);
    }

    /** Index of {@code slot}'s value in its page; its meta word is the next long. */
    int valueIndex(int slot) {
        return (slot & slotPageMask) << 1;
    }

    /** The slots handed out so far, free ones included: the clock's range is {@code [1, end)}. */
    int end() {
        return nextSlot;
    }

    /**
     * Loads, and only loads, the bucket lines that claiming slots {@code [from, to)} will need: for
     * each slot whose meta word shows a claimable pair (one reference, the cache's; not
     * referenced), its bucket's head word and its chain's lines ({@link #touchChain}). The loads are
     * independent of one another, so the processor overlaps their cache misses; the claims that
     * follow, each behind a locked instruction that would wait for its own misses one after the
     * other, then find these lines in the cache. Plain racy loads whose values mean nothing: the
     * sum is returned only so that the compiler keeps them. Slots below {@link #end} only.
     *
     * @return a sum of the words loaded, to be consumed by the caller
     */
    long touchBucketsOfClaimable(int from, int to) {
        long sum = 0;
        for (int slot = from; slot < to; slot++) {
            long[] page = slotPages[slot >>> slotPageBits];
            if (page == null) {
                continue;
            }
            long meta = page[valueIndex(slot) + 1];
            if (((int) meta & (COUNT_MASK | REFERENCED)) == 1) {
                int b = bucketOf((int) (meta >>> 32));
                sum += headPage(b)[headIndex(b)] + touchChain(b);
            }
        }
        return sum;
    }

    /**
     * Loads, and only loads, the lines of bucket {@code b}'s chain that a critical section on it
     * reads: the first and last long of its record (a record spans one or two lines) and, if the
     * bucket has an overflow array, the array's first line (its length and oldest references; a
     * claim walks the chain from the oldest) after its element of {@code overflow}. Loaded before
     * the lock bit's CAS, which waits for every load before it, these misses overlap one another
     * and whatever else is in flight; loaded after it, by the critical section, they would come one
     * after the other. Plain racy loads whose values mean nothing (an array replaced meanwhile is
     * as good as any: the section reads the bucket again under the bit). Never faults.
     *
     * @return a sum of the words loaded, to be consumed by the caller
     */
    long touchChain(int b) {
        long[] record = recordPage(b);
        int base = recordBase(b);
        long sum = record[base] + record[base + RECORD_LONGS - 1];
        int[] spill = overflow[b];
        return spill == null ? sum : sum + spill.length;
    }

    /**
     * Loads, and only loads, the words a lookup's optimistic walk of bucket {@code b} reads first:
     * its head word and the first and last long of its record (the length with the newest
     * references, in one or two lines), not the overflow array, which a hit among the chain's
     * newest 15 never reads. Plain racy loads whose values mean nothing, as {@link #touchChain}'s.
     *
     * @return a sum of the words loaded, to be consumed by the caller
     */
    long touchLookup(int b) {
        long[] record = recordPage(b);
        int base = recordBase(b);
        return headPage(b)[headIndex(b)] + record[base] + record[base + RECORD_LONGS - 1];
    }

    /** Keeps the loads whose sum is {@code touched} (see {@link #touchSentinel}). */
    void consume(long touched) {
        if (touched == touchSentinel) {
            touchSentinel = touched + 1;
        }
    }

    /**
     * A free slot, popped from the free list or new at the end (its page allocated first, under the
     * page lock; a Throwable there changes nothing), or, when neither has one, one of the delay ring's
     * ({@link #drainDelayRing}, so that no freed slot is out of reach); 0 if every slot up to
     * {@code 2^slotBits} is in use. The slot's count is zero and it is owned by the caller until it
     * makes it live or frees it. A racing allocate that drains the ring at the same moment may leave
     * this one 0 while it still pushes the slots it took: the caller's synchronous reclaim and retry
     * ({@code CompactMbCache.allocateSlot}) then finds them.
     */
    int allocate() {
        for (;;) {
            int slot = pop();
            if (slot != 0 || (slot = takeNew()) != 0) {
                return slot;
            }
            if (drainDelayRing() == 0 && (int) freeHead == 0) {
                return 0;
            }
        }
    }

    /** The free list's top slot, popped; 0 if the list is empty. */
    private int pop() {
        for (;;) {
            long head = (long) FREE_HEAD.getVolatile(this);
            int slot = (int) head;
            if (slot == 0) {
                return 0;
            }
            // The pusher wrote the link before its CAS; this thread's volatile load of the head saw
            // that CAS. If the slot was popped and reused meanwhile, the link is garbage and the CAS
            // below fails on the tag.
            long[] page = slotPage(slot);
            int next = (int) page[valueIndex(slot)];
            if (FREE_HEAD.compareAndSet(this, head, ((head >>> 32) + 1) << 32 | (next & 0xFFFF_FFFFL))) {
                return slot;
            }
        }
    }

    /** A never-used slot from the end, its page allocated first; 0 once the end is past {@link #slotMask}. */
    private int takeNew() {
        for (;;) {
            int slot = nextSlot;
            if (slot > slotMask) {
                return 0;
            }
            ensureSlotPage(slot >>> slotPageBits);
            if (NEXT_SLOT.compareAndSet(this, slot, slot + 1)) {
                return slot;
            }
        }
    }

    private void ensureSlotPage(int p) {
        if (PAGES.getAcquire(slotPages, p) != null) {
            return;
        }
        synchronized (pageLock) {
            if (slotPages[p] == null) {
                PAGES.setRelease(slotPages, p, new long[2 << slotPageBits]);
            }
        }
    }

    /**
     * Frees the slot of a pair that left the cache (claimed, count zero, and unhashed), its
     * generation advanced first: a handle of that pair is stale by its generation from here on,
     * whether or not the cache is closed later, and the slot's next pair goes live with this
     * generation. So the generation counts the pairs a slot held, and a stale handle is taken for a
     * new occupant's only after 65,536 of them. The meta word's store is a release (atomic, and
     * after the claim that zeroed the count): nobody else writes a word whose count is zero (every
     * CAS loop but the claim refuses it, and the claim needs count one). Allocation-free.
     *
     * <p>The slot then goes into the delay ring ({@link CompactDelayRing#exchange}), not onto the
     * free list, and the slot it displaces, freed about one ring length of frees earlier, onto the
     * list. So a slot is handed out again only after about {@link CompactDelayRing#size} further
     * frees, and the generations of a cache's slots advance together instead of one slot taking
     * every reuse (a last-in first-out list alone gives the slot of a key deleted and created in a
     * loop to each of its pairs). Memory order: the freer's stores to the slot (the generation's
     * release store, and everything before it) precede its exchange, a volatile write; the free
     * that displaces the slot reads that write with its own exchange, a volatile read, so happens
     * after the stores; its push writes the link (release) and publishes it with the free list's
     * CAS, which the popper's volatile load of the head reads. So the popper (or a drainer,
     * {@link #drainDelayRing}, whose exchange reads the freer's likewise) sees the advanced
     * generation before it makes the slot live with it.
     */
    void free(int slot) {
        long[] page = slotPage(slot);
        int at = valueIndex(slot);
        long meta = lvMeta(page, at);
        long generation = (long) ((generation(meta) + 1) & GENERATION_MASK) << GENERATION_SHIFT;
        soMeta(page, at, (meta & ~((long) GENERATION_MASK << GENERATION_SHIFT)) | generation);
        int displaced = delayRing.exchange(slot);
        if (displaced != 0) {
            push(displaced, slotPage(displaced), valueIndex(displaced));
        }
    }

    /**
     * Moves every slot of the delay ring to the free list, the newest first, so the oldest ends on
     * top and is handed out first: the drained slots are reused in the order they were freed, each
     * after all the others ({@link CompactDelayRing#take}; memory order as in {@link #free}); how
     * many it moved. For {@link #allocate} once no other slot is left, and for tests and the stress
     * races that want a freed slot reused soon. Allocation-free.
     */
    int drainDelayRing() {
        int moved = 0;
        int oldest = delayRing.oldest();
        for (int i = delayRing.size() - 1; i >= 0; i--) {
            int slot = delayRing.take(oldest + i);
            if (slot != 0) {
                push(slot, slotPage(slot), valueIndex(slot));
                moved++;
            }
        }
        return moved;
    }

    /**
     * Puts back a slot that {@link #allocate} handed out and that never went live (its create found
     * the pair cached, or the chain full, or failed), its word as it was: no pair held it, so its
     * generation stays, and it goes straight onto the free list (no pair's handle can be stale on
     * it but the last pair's, whose generation the slot's next pair does not have). Allocation-free.
     */
    void freeUnused(int slot) {
        push(slot, slotPage(slot), valueIndex(slot));
    }

    /**
     * Pushes a slot whose count is zero onto the free list: the link goes into the slot's value word
     * (a release store, after {@link #free}'s generation, which happens before it, through the
     * ring's exchange where another thread pushes: a racing {@code value(handle)} that reads the
     * link, whose acquire fence orders that load before its load of the meta word, sees the new
     * generation and throws; the link itself is published to the free list by the CAS).
     */
    private void push(int slot, long[] page, int at) {
        for (;;) {
            long head = (long) FREE_HEAD.getVolatile(this);
            LONGS.setRelease(page, at, (long) (int) head);
            if (FREE_HEAD.compareAndSet(this, head, ((head >>> 32) + 1) << 32 | slot)) {
                return;
            }
        }
    }

    /**
     * Free slots on the list and in the delay ring (walks both; for tests and the bench's
     * accounting). Not concurrent-safe.
     */
    int freeSlots() {
        int n = 0;
        for (int slot = (int) freeHead; slot != 0 && n <= slotMask; slot = (int) slotPage(slot)[valueIndex(slot)]) {
            n++;
        }
        return n + delayRing.occupied();
    }

    // ---------------------------------------------------------------------------------------------
    // Hot slots (HotReferences.Host): the cells of at most MAX_HOT_ENTRIES slots, and the vote
    // ---------------------------------------------------------------------------------------------

    /** The cells of at most MAX_HOT_ENTRIES hot slots, each named by its occupant (identity bits and slot). */
    private final HotCellTable hotCells = new HotCellTable();
    /** The hot-mode vote over failed CASes of slots' meta words. */
    private final ContentionVote contentionVote = new ContentionVote();
    /** Per slot of {@link #contentionVote}, the handle (slot and generation) it favours; racy on purpose. */
    private final long[] contended = new long[ContentionVote.SLOTS];

    @Override
    public long lvWord(long at) {
        int slot = (int) at;
        return lvMeta(slotPage(slot), valueIndex(slot));
    }

    @Override
    public boolean casWord(long at, long expected, long updated) {
        int slot = (int) at;
        return casMeta(slotPage(slot), valueIndex(slot), expected, updated);
    }

    /** The cells of the slot's occupant whose meta word is {@code word}: found by its identity bits and the slot. */
    @Override
    public long[] hotCells(long at, long word) {
        return hotCells.cells((int) at, null, word & IDENTITY, at);
    }

    @Override
    public boolean publishHotCells(long at, long word, long[] cells) {
        return hotCells.publish((int) at, null, word & IDENTITY, at, cells);
    }

    @Override
    public void retireHotCells(long at, long[] cells) {
        hotCells.retire(cells);
    }

    /** Slots with cells now (hot ones, and a switch in progress). */
    int hotSlots() {
        return hotCells.size();
    }

    /**
     * Notes a failed CAS on the meta word of the occupant {@code handle} (slot and generation) and
     * answers whether it has been contended often enough to switch to hot mode ({@link ContentionVote},
     * by handle).
     */
    boolean noteContention(long handle) {
        int slot = ContentionVote.slotOf((int) handle);
        int verdict = contentionVote.tally(slot, contended[slot] == handle);
        if (verdict == ContentionVote.TAKE_OVER) {
            contended[slot] = handle;
        }
        return verdict == ContentionVote.SWITCH;
    }

    // ---------------------------------------------------------------------------------------------
    // Accounting
    // ---------------------------------------------------------------------------------------------

    /**
     * Bytes held by the arrays (bucket heads and records, overflow directory and arrays, slot and
     * handle pages, the delay ring).
     */
    long footprintBytes() {
        long bytes = 2 * (16L + 4L * bucketPages.length) + 16L + 4L * overflow.length
                + 2 * (16L + 4L * slotPages.length) + delayRing.footprintBytes();
        for (int p = 0; p < bucketPages.length; p++) {
            bytes += 2 * 16L + 8L * (bucketPages[p].length + headPages[p].length);
        }
        for (int[] spill : overflow) {
            if (spill != null) {
                bytes += 16L + 4L * spill.length;
            }
        }
        for (int p = 0; p < slotPages.length; p++) {
            if (slotPages[p] != null) {
                bytes += 16L + 8L * slotPages[p].length;
            }
        }
        return bytes;
    }
}
