package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The chain records of a {@link CompactTable}: for each bucket whose chain has entries outside its
 * line (pool slots, or home slots lent by other lines: its <em>pool entries</em>), one record that
 * holds those entries' slots and where they fall among the chain's home entries. The home entries
 * themselves, and their order, are in the bucket's header (its order list); a record never names
 * them, so a chain of seven home entries and two pool entries takes a 16-byte record.
 *
 * <h2>A record</h2>
 * A record of class {@code c} is {@code 4 << c} consecutive ints ({@link #capacity}) of one page:
 * <ul>
 *   <li>int 0, {@link #POOL_COUNT}: {@code n}, the chain's pool entries;</li>
 *   <li>ints {@code [1, 1 + M)}, the <em>interleave</em>: bit {@code pos} of the {@code M} words
 *       ({@link #maskWords}) is set where chain position {@code pos} (0 the oldest) is a pool entry,
 *       clear where it is a home entry; the chain's length is {@code n} plus its order list's;</li>
 *   <li>ints {@code [1 + M, 2M)}: for each interleave word {@code w >= 1}, the pool entries at the
 *       positions of the words before it, so that a position's pool index is one
 *       {@link Integer#bitCount} away ({@link #poolIndexAt});</li>
 *   <li>ints from {@code 2M} ({@link #refBase}): the pool entries' slots, oldest first, at most
 *       {@link #refCapacity} of them.</li>
 * </ul>
 * The interleave has room for {@code refCapacity + 7} positions, so a chain whose record holds its
 * pool entries always has room for a home entry more. A record is allocated when a chain first
 * takes a pool entry, replaced by a larger one (a copy) when its pool entries outgrow it, and given
 * back ({@link #clear}) when its last pool entry leaves. A replaced or given-back record goes onto
 * its class's free list and is reused by the next bucket that needs one of its class.
 *
 * <h2>Pages and the directory</h2>
 * A bucket's record is named by its <em>directory entry</em>, an {@code int}: the page (bits
 * 12-31, unsigned, from 1: an entry of 0 names no record) and the record's index in the page (bits
 * 0-11). A page holds records of one class, named in its int 0 ({@link #PAGE_CLASS}), written
 * before the page is published and never changed, so a reader takes a record's capacity from the
 * page its entry names, never from a record. Records of a class up to {@link #pageInts} ints (at
 * most 2^16, 256 KiB, scaled down for small tables) share pages: a class's first page holds 16,
 * each next one twice as many as the one before, up to 4,096 records and {@link #pageInts} ints,
 * so a class few chains need takes little; a larger record has a page of its own. So a table has
 * at most {@link #MAX_PAGES} (2^20) pages, room for about 2^32 records of the smallest class, far
 * beyond what its heap holds, and records of at most 2^30 ints; a chain that would need more fails
 * its create with an {@link IllegalStateException} before anything changes ({@link #reserve}). The
 * table holds no object per bucket or record. Records that a replacement freed stay on their
 * class's free list (memory a table's peak left behind, not a limit).
 *
 * <h2>Memory ordering</h2>
 * A record and a bucket's directory entry are written only by the holder of the bucket's lock bit
 * (plain stores), and read optimistically under the bucket's seqlock, as the header's chain bits
 * are ({@link CompactTable}'s "Memory ordering"): an optimistic reader ({@link CompactWalk}) reads
 * the entry and the record plainly, takes the capacity from the page the entry names (never from
 * the record), indexes the record only below it, follows a slot only where it names a slot below
 * the table's end, and then validates the header, so a stale record, or one freed and reused by
 * another bucket meanwhile, is never trusted and never makes it fault: the holder that replaced
 * or freed it did so inside its critical section, whose version the reader then fails to
 * validate. Pages are allocated and the free lists kept under {@link #allocationLock}; a page is
 * published by a release store of its element of {@link #pages} (or of the whole array, where it
 * grows), and read with an acquire load ({@link #laPage}), which may find {@code null} for a page a
 * racing reader has not seen yet: it retries.
 */
final class CompactChainRecords {

    private static final VarHandle PAGES = MethodHandles.arrayElementVarHandle(int[][].class);

    /** A record's count of pool entries, at this index. */
    static final int POOL_COUNT = 0;
    /** A record's first interleave word, at this index. */
    static final int INTERLEAVE = 1;
    /** The largest class: records of {@code 4 << 28 = 2^30} ints. */
    static final int MAX_CLASS = 28;
    /** The most pages a table has (page 0 is never used: an entry of 0 names no record). */
    static final int MAX_PAGES = 1 << 20;
    /** A page's int 0: the class of its records, set before the page is published and never changed. */
    static final int PAGE_CLASS = 0;
    /** A page's first record's int 0, at this index. */
    static final int PAGE_HEADER = 1;
    private static final int PAGE_SHIFT = 12;
    private static final int INDEX_MASK = (1 << PAGE_SHIFT) - 1;
    /** Records a shared page holds, at most (their index in the page fits the entry's 12 bits). */
    private static final int MAX_RECORDS_PER_PAGE = 1 << PAGE_SHIFT;
    /** Records a class's first shared page holds; each next page of the class holds twice as many, up to the most. */
    private static final int FIRST_RECORDS_PER_PAGE = 16;
    /** Ints a shared page holds, at most: 256 KiB, below half of G1's smallest region (no humongous page). */
    private static final int MAX_PAGE_INTS = 1 << 16;
    /** Ints a shared page holds, at least (tables of a few buckets). */
    private static final int MIN_PAGE_INTS = 1 << 6;

    /** Per bucket, its record's directory entry, or 0. */
    private final int[] directory;
    /** Ints in a shared page: a power of two, a class up to it shares pages. */
    final int pageInts;
    /** The most pages, page 0 included: {@link #MAX_PAGES}, fewer in tests. */
    private final int maxPages;
    /**
     * The pages, by page index (0 unused); grown by copying, published by a release store. It starts
     * with room for the first page only, so that a table whose chains stay in their lines keeps
     * no more, and a chain's second record class already grows it (the growth a racing reader must
     * survive is then one any overflowing chain reaches, not only a table of many record pages).
     */
    private volatile int[][] pages = new int[2][];
    /** Pages allocated, page 0 included. Under {@link #allocationLock}. */
    private int pageCount = 1;
    /** Per class, the top of its free list (an entry; the next one's in the record's int 0), or 0. Under the lock. */
    private final int[] freeHeads = new int[MAX_CLASS + 1];
    /** Per class up to the page size, the entry its next new record takes from the class's current page, or 0. Under the lock. */
    private final int[] nextNew = new int[MAX_CLASS + 1];
    /** Per class, the shared pages it has. Under the lock. */
    private final int[] sharedPages = new int[MAX_CLASS + 1];
    /** Guards the pages' allocation and the free lists (rare: a record's allocation or replacement). */
    private final Object allocationLock = new Object();

    /** Records for a table of {@code buckets} buckets, none allocated. */
    CompactChainRecords(int buckets) {
        this(buckets, Math.max(MIN_PAGE_INTS, Math.min(MAX_PAGE_INTS, Integer.highestOneBit(buckets - 1 | 1) << 3)),
                MAX_PAGES);
    }

    /** Records with shared pages of at most {@code pageInts} ints (a power of two in [64, 2^16]) and at most {@code maxPages} pages (tests). */
    CompactChainRecords(int buckets, int pageInts, int maxPages) {
        if (Integer.bitCount(pageInts) != 1 || pageInts < MIN_PAGE_INTS || pageInts > MAX_PAGE_INTS
                || maxPages < 2 || maxPages > MAX_PAGES) {
            throw new IllegalArgumentException("pageInts " + pageInts + ", maxPages " + maxPages);
        }
        this.directory = new int[buckets];
        this.pageInts = pageInts;
        this.maxPages = maxPages;
    }

    // ---------------------------------------------------------------------------------------------
    // The layout (static arithmetic)
    // ---------------------------------------------------------------------------------------------

    /** The ints of a record of class {@code c}. */
    static int capacity(int c) {
        return 4 << c;
    }

    /** The interleave words of a record of {@code capacity} ints: room for {@code capacity + 7} positions. */
    static int maskWords(int capacity) {
        return (capacity + 38) >>> 5;
    }

    /** The index, in a record of {@code capacity} ints, of its first pool entry's slot. */
    static int refBase(int capacity) {
        return 2 * maskWords(capacity);
    }

    /** The pool entries a record of {@code capacity} ints holds. */
    static int refCapacity(int capacity) {
        return capacity - refBase(capacity);
    }

    /** The smallest class whose records hold {@code refs} pool entries. */
    static int classFor(int refs) {
        for (int c = 0; c <= MAX_CLASS; c++) {
            if (refCapacity(capacity(c)) >= refs) {
                return c;
            }
        }
        throw new IllegalStateException("a chain of " + refs + " pool entries exceeds the largest chain record");
    }

    /** The class of a page's records (its {@link #PAGE_CLASS} int). */
    static int classOf(int[] page) {
        return page[PAGE_CLASS];
    }

    /** The ints of each record of a page. */
    static int capacityOf(int[] page) {
        return capacity(page[PAGE_CLASS]);
    }

    /** The index of the record's int 0 in its page, {@code page} the entry's ({@link #laPage}). */
    static int baseOf(int entry, int[] page) {
        return PAGE_HEADER + (entry & INDEX_MASK) * capacityOf(page);
    }

    private static int pageOf(int entry) {
        return entry >>> PAGE_SHIFT;
    }

    /** The entry of the {@code index}-th record of page {@code page}. */
    private static int entry(int page, int index) {
        return page << PAGE_SHIFT | index;
    }

    /** The records of class {@code c} a shared page holds: 0 for a class larger than a shared page (a page each). */
    private int recordsPerPage(int c) {
        return Math.min(MAX_RECORDS_PER_PAGE, pageInts / capacity(c));
    }

    /** The records the {@code k}-th shared page of class {@code c} holds (0 the first): 16, doubling, up to {@link #recordsPerPage}. */
    private int sharedPageRecords(int c, int k) {
        return Math.min(recordsPerPage(c), FIRST_RECORDS_PER_PAGE << Math.min(k, PAGE_SHIFT));
    }

    /**
     * The pool index of chain position {@code pos}: the pool entries at the positions before it.
     * {@code record} is the record's page, {@code base} its int 0, {@code words} its interleave words.
     */
    static int poolIndexAt(int[] record, int base, int words, int pos) {
        int w = pos >>> 5;
        int before = w == 0 ? 0 : record[base + words + w];
        return before + Integer.bitCount(record[base + INTERLEAVE + w] & ~(-1 << (pos & 31)));
    }

    /** Whether chain position {@code pos} of a record is a pool entry. */
    static boolean isPoolAt(int[] record, int base, int pos) {
        return (record[base + INTERLEAVE + (pos >>> 5)] >>> pos & 1) != 0;
    }

    // ---------------------------------------------------------------------------------------------
    // Optimistic reads (racy; see "Memory ordering")
    // ---------------------------------------------------------------------------------------------

    /** Bucket {@code b}'s directory entry, plainly: possibly stale, 0 if it has no record. */
    int lpEntry(int b) {
        return directory[b];
    }

    /**
     * The page of a directory entry read racily, or {@code null} if this thread has not seen it
     * published, or if the entry is 0. Acquire. A non-null page holds the entry's whole record.
     */
    int[] laPage(int entry) {
        int[][] all = pages;
        int p = pageOf(entry);
        return p == 0 || p >= all.length ? null : (int[]) PAGES.getAcquire(all, p);
    }

    // ---------------------------------------------------------------------------------------------
    // Bucket b's record, its bucket's bit held
    // ---------------------------------------------------------------------------------------------

    /** The pool entries of bucket {@code b}'s chain: the record's count, 0 without a record. Bit held. */
    int poolCount(int b) {
        int entry = directory[b];
        if (entry == 0) {
            return 0;
        }
        int[] page = laPage(entry);
        return page[baseOf(entry, page) + POOL_COUNT];
    }

    /** The slot of pool entry {@code j} (0 the oldest) of bucket {@code b}'s chain. Bit held, {@code j < poolCount}. */
    int poolRef(int b, int j) {
        int entry = directory[b];
        int[] page = laPage(entry);
        return page[baseOf(entry, page) + refBase(capacityOf(page)) + j];
    }

    /**
     * The slot at chain position {@code pos} (0 the oldest) of bucket {@code b}'s overflowed chain,
     * whose order list is {@code order}. Bit held, {@code pos} below the chain's length.
     */
    int slotAt(int b, int order, int pos) {
        int entry = directory[b];
        int[] page = laPage(entry);
        int base = baseOf(entry, page);
        int capacity = capacityOf(page);
        int pool = poolIndexAt(page, base, maskWords(capacity), pos);
        if (isPoolAt(page, base, pos)) {
            return page[base + refBase(capacity) + pool];
        }
        int home = pos - pool; // the home entry's index, oldest first
        return CompactLine.homeSlot(b, CompactLine.positionAt(order, CompactLine.lineLength(order) - 1 - home));
    }

    /**
     * Makes room for one more pool entry in bucket {@code b}'s chain, which has {@code pool} of them
     * now (0 where it is not overflowed: a record kept from an earlier overflow is then reset by
     * {@link #addPool}) and {@code length} entries in all: allocates, before anything changes, a
     * record large enough, and where the bucket's is smaller, copies it into the new one, names the
     * new one in the directory and frees the old. Bit held.
     *
     * @throws IllegalStateException where the record needed is larger than the largest class, or
     *     the table's pages are all taken; nothing changed
     */
    void reserve(int b, int pool, int length) {
        int entry = directory[b];
        if (entry != 0 && refCapacity(capacityOf(laPage(entry))) > pool) {
            return;
        }
        int larger = allocate(classFor(pool + 1));
        if (entry != 0 && pool > 0) {
            copy(entry, larger, pool, length);
        }
        directory[b] = larger;
        if (entry != 0) {
            free(entry);
        }
    }

    /** Copies a record's {@code pool} entries and {@code length} interleave positions into an empty one of another class. */
    private void copy(int from, int to, int pool, int length) {
        int[] source = laPage(from);
        int[] target = laPage(to);
        int sourceBase = baseOf(from, source);
        int targetBase = baseOf(to, target);
        int words = (length + 31) >>> 5;
        System.arraycopy(source, sourceBase + INTERLEAVE, target, targetBase + INTERLEAVE, words);
        System.arraycopy(source, sourceBase + refBase(capacityOf(source)), target, targetBase + refBase(capacityOf(target)),
                pool);
        target[targetBase + POOL_COUNT] = pool;
        countPoolBefore(target, targetBase, maskWords(capacityOf(target)), 1, words - 1);
    }

    /** Recomputes the pool entries before interleave words {@code [from, to]} ({@code from >= 1}) from the words. */
    private static void countPoolBefore(int[] record, int base, int words, int from, int to) {
        for (int w = from; w <= to; w++) {
            int before = w == 1 ? 0 : record[base + words + w - 1];
            record[base + words + w] = before + Integer.bitCount(record[base + INTERLEAVE + w - 1]);
        }
    }

    /**
     * Appends pool entry {@code slot} as the newest of bucket {@code b}'s chain of {@code length}
     * entries, {@code overflowed} or not (where not, the chain is its order list and the record is
     * reset first). Bit held, {@link #reserve} done.
     */
    void addPool(int b, boolean overflowed, int length, int slot) {
        int entry = directory[b];
        int[] page = laPage(entry);
        int base = baseOf(entry, page);
        int capacity = capacityOf(page);
        if (!overflowed) {
            page[base + POOL_COUNT] = 0;
            page[base + INTERLEAVE] = 0; // a chain of its order list: at most 7 home positions, all in word 0
        }
        int pool = page[base + POOL_COUNT];
        page[base + refBase(capacity) + pool] = slot;
        setPosition(page, base, maskWords(capacity), length, true);
        page[base + POOL_COUNT] = pool + 1;
    }

    /** Appends a home entry as the newest of bucket {@code b}'s overflowed chain of {@code length} entries. Bit held. */
    void addHome(int b, int length) {
        int entry = directory[b];
        int[] page = laPage(entry);
        setPosition(page, baseOf(entry, page), maskWords(capacityOf(page)), length, false);
    }

    /** Sets interleave position {@code pos}, the chain's new newest, and starts its word's prefix count where it is the word's first. */
    private static void setPosition(int[] record, int base, int words, int pos, boolean pool) {
        int w = pos >>> 5;
        if ((pos & 31) == 0) {
            record[base + INTERLEAVE + w] = 0;
            countPoolBefore(record, base, words, Math.max(1, w), w);
        }
        if (pool) {
            record[base + INTERLEAVE + w] |= 1 << pos;
        } else {
            record[base + INTERLEAVE + w] &= ~(1 << pos);
        }
    }

    /**
     * Removes chain position {@code pos} (0 the oldest) of bucket {@code b}'s overflowed chain of
     * {@code length} entries from the record: its interleave position, and where it is a pool
     * entry, its slot (the newer ones move one place down). Bit held.
     *
     * @return whether the position was a pool entry
     */
    boolean removeAt(int b, int length, int pos) {
        int entry = directory[b];
        int[] record = laPage(entry);
        int base = baseOf(entry, record);
        int capacity = capacityOf(record);
        int words = maskWords(capacity);
        boolean pool = isPoolAt(record, base, pos);
        if (pool) {
            int refs = base + refBase(capacity);
            int n = record[base + POOL_COUNT];
            int k = poolIndexAt(record, base, words, pos);
            System.arraycopy(record, refs + k + 1, record, refs + k, n - 1 - k);
            record[refs + n - 1] = 0;
            record[base + POOL_COUNT] = n - 1;
        }
        int last = (length - 1) >>> 5;
        for (int w = pos >>> 5; w <= last; w++) {
            int word = record[base + INTERLEAVE + w];
            int carry = w < last ? record[base + INTERLEAVE + w + 1] << 31 : 0;
            int low = w == pos >>> 5 ? word & ~(-1 << (pos & 31)) : 0;
            int high = w == pos >>> 5 ? (word >>> 1) & (-1 << (pos & 31)) : word >>> 1;
            record[base + INTERLEAVE + w] = low | high | carry;
        }
        countPoolBefore(record, base, words, (pos >>> 5) + 1, last);
        return pool;
    }

    /** Gives bucket {@code b}'s record, if any, to its class's free list (its chain left the pool, or close). Bit held. */
    void clear(int b) {
        int entry = directory[b];
        if (entry != 0) {
            directory[b] = 0;
            free(entry);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Allocation (under the allocation lock)
    // ---------------------------------------------------------------------------------------------

    /** A record of class {@code c}: from the class's free list, else new. */
    private int allocate(int c) {
        synchronized (allocationLock) {
            int entry = freeHeads[c];
            if (entry != 0) {
                int[] page = laPage(entry);
                freeHeads[c] = page[baseOf(entry, page)];
                return entry;
            }
            if (recordsPerPage(c) == 0) {
                return entry(newPage(c, 1), 0);
            }
            entry = nextNew[c];
            if (entry == 0) {
                entry = entry(newPage(c, sharedPageRecords(c, sharedPages[c])), 0);
                sharedPages[c]++;
            }
            int next = (entry & INDEX_MASK) + 1;
            nextNew[c] = next < sharedPageRecords(c, sharedPages[c] - 1) ? entry(pageOf(entry), next) : 0;
            return entry;
        }
    }

    /** Puts a record onto its class's free list. */
    private void free(int entry) {
        synchronized (allocationLock) {
            int[] page = laPage(entry);
            page[baseOf(entry, page)] = freeHeads[classOf(page)];
            freeHeads[classOf(page)] = entry;
        }
    }

    /** A new page of {@code records} records of class {@code c}, published; its index. Under the lock. */
    private int newPage(int c, int records) {
        if (pageCount == maxPages) {
            throw new IllegalStateException("the table's chain records are exhausted (" + maxPages + " pages)");
        }
        int[] page = new int[PAGE_HEADER + records * capacity(c)];
        page[PAGE_CLASS] = c;
        int[][] all = pages;
        if (pageCount == all.length) {
            all = Arrays.copyOf(all, Math.min(maxPages, 2 * all.length));
            all[pageCount] = page;
            pages = all; // volatile: the copy and the new page with it
        } else {
            PAGES.setRelease(all, pageCount, page);
        }
        return pageCount++;
    }

    /** The places of the page array (tests). */
    int pageSlots() {
        return pages.length;
    }

    /** Bytes of the directory, the page array and the pages. */
    long footprintBytes() {
        long bytes = 16L + 4L * directory.length;
        int[][] all = pages;
        bytes += 16L + 4L * all.length;
        for (int[] page : all) {
            bytes += page == null ? 0 : 16L + 4L * page.length;
        }
        return bytes;
    }
}
