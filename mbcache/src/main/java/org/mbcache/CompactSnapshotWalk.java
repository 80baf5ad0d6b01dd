package org.mbcache;

import static org.mbcache.CompactSlots.GENERATION_SHIFT;
import static org.mbcache.CompactSlots.REFERENCED;
import static org.mbcache.CompactSlots.REUSABLE;
import static org.mbcache.CompactSlots.count;
import static org.mbcache.CompactSlots.keyOf;
import static org.mbcache.CompactSlots.lvMeta;

import java.lang.invoke.VarHandle;
import org.mbcache.internal.Lifecycle;
import org.mbcache.internal.Snapshots;

/**
 * One snapshot's walk over a {@link CompactTable} ({@link CompactMbCache#writeSnapshot} says what it
 * guarantees): the slots {@code [1, end)} in the clock's order from its hands
 * ({@link CompactSweepOrder}), each pair where the walk meets it, but a key's values together and in
 * their order.
 *
 * <p><b>A key with one value</b> (nearly every key) is written where the walk meets its slot. The
 * walk takes no lock for it: it reads the slot's meta word, its value and the meta word again, and
 * copies the pair if both reads show the same live occupant (same key and generation, count above
 * zero); and where the slot is a home slot of the key's own bucket, it reads under that bucket's
 * version that the line holds no other word of the key and that no pool entry has it (the pool
 * filter turns the key away, or the slot's word lacks {@link CompactSlots#POOL_TWIN}:
 * {@link CompactPoolTwins}); the key has no other value then.
 *
 * <p><b>A key with more values.</b> The order of slots is not the order of creation: a chain's newest
 * values sit in pool slots once its line is full, and a home slot freed and taken again holds a
 * newer value than the slots after it. Written where the walk meets them, a key's values would come
 * back from a restore (which creates pairs in the order it reads them) in another order:
 * {@code findFirst} would answer an older value first, and the chain cap would trim the newest. So
 * where the slot met is in the pool (or lent by another line), or its key may have another value,
 * the walk reads the key's values in its bucket's chain, oldest first (optimistically, as a lookup
 * reads a chain, and under the bucket's bit, as a create holds it, where a writer was in the
 * bucket), and writes them together: every one the walk has not met yet, and the one it met. It
 * remembers the key (only keys with two values or more at that moment), and passes over its values
 * when it meets them later. A pool pair's bucket is anywhere in the table, so the walk loads the
 * buckets' lines and chains of the pool pairs ahead of it before it reads them
 * ({@link #lookAhead}).
 *
 * <p><b>Exactly once.</b> A pair cached for the whole call is written once: where the walk meets it
 * with its key not remembered, then (alone, or with its key's values); or with its key's values
 * at the first of them the walk meets, if that one came first (it is among them, not met yet) and
 * then it is passed over. A value the walk met before is never written again with its key's
 * values: it was written when met (its key not remembered then, or it would have been passed over
 * and written with them). Which slots the walk has met is known from its hands alone: each region
 * of the order is walked from its first index, cyclically, one index a step. A pair created or
 * removed during the call is written at most once, or twice where it was removed and created again
 * (two entries). A close during the walk ends it with the closed cache's exception.
 */
final class CompactSnapshotWalk implements Snapshots.PairSource {

    private final CompactTable table;
    private final Lifecycle lifecycle;
    /** The end of the range walked: slots {@code [1, end)}. */
    private final int end;
    /** The order the walk follows: a copy of the clock's. */
    private final CompactSweepOrder order;
    /** Slots not looked at yet. */
    private int left;
    /** The first index the walk visits in the lines' region {@code [1, homeSlots)}, and in the pool's {@code [homeSlots, end)}. */
    private final int firstLineIndex;
    private final int firstPoolIndex;
    /** Steps the walk has taken in each region (the slot being looked at not counted). */
    private int lineSteps;
    private int poolSteps;
    /** The pool slots whose pairs' chains the walk has loaded ahead, {@code [touchedFrom, touchedTo)} ({@link #lookAhead}). */
    private int touchedFrom;
    private int touchedTo;
    /** The sums of the look-ahead's loads, consumed once the walk ends. */
    private long touched;
    /** The keys whose values were written together (see the class comment). */
    private final KeySet writtenTogether = new KeySet();

    /** The values of one key, read from its chain: their slots, pairs and record flags, oldest first. */
    private int[] groupSlots = new int[8];
    private long[] groupMetas = new long[8];
    private long[] groupValues = new long[8];
    private byte[] groupFlags = new byte[8];
    private int groupLength;
    /** Of the pairs of the last group to write ({@link #pendingKey}'s), how many are written. */
    private int pendingWritten;
    private int pendingLength;
    private int pendingKey;

    /**
     * @param order a copy of the clock's order, read with {@code end} under the reclaim lock
     * @param end the table's end then: at least the end of the last pass, which moved the hands
     */
    CompactSnapshotWalk(CompactTable table, Lifecycle lifecycle, CompactSweepOrder order, int end) {
        this.table = table;
        this.lifecycle = lifecycle;
        this.end = end;
        this.order = order;
        this.left = end - 1;
        int homeHand = order.homeHand();
        int poolHand = order.poolHand();
        this.firstLineIndex = homeHand >= 1 && homeHand < table.homeSlots ? homeHand : 1;
        this.firstPoolIndex = poolHand >= table.homeSlots && poolHand < end ? poolHand : table.homeSlots;
    }

    @Override
    public int next(int[] keys, long[] values, byte[] flags, int from, int max) {
        int copied = 0;
        while (copied < max) {
            if (pendingWritten < pendingLength) {
                keys[from + copied] = pendingKey;
                values[from + copied] = groupValues[pendingWritten];
                flags[from + copied] = groupFlags[pendingWritten];
                pendingWritten++;
                copied++;
                continue;
            }
            if (left == 0) {
                break;
            }
            int slot = order.next(end);
            left--;
            if (slot >= table.homeSlots) {
                lookAhead(slot);
            }
            if (CompactLine.isSlot(slot)) { // not a line's header, nor a skipped pool index
                copied += visit(slot, keys, values, flags, from + copied);
            }
            if (slot < table.homeSlots) {
                lineSteps++;
            } else {
                poolSteps++;
            }
        }
        if (left == 0) {
            table.consume(touched);
        }
        lifecycle.ensureOpen(); // close() zeroed the counts: never end a snapshot short as if complete
        return copied;
    }

    /**
     * Looks at one slot: copies its pair at {@code at} (1), or queues its key's values as the
     * pending group (0: {@link #next} copies them), or passes over it (0).
     */
    private int visit(int slot, int[] keys, long[] values, byte[] flags, int at) {
        long[] page = table.metaPage(slot);
        int index = table.metaIndex(slot);
        long meta = lvMeta(page, index);
        if (count(meta) == 0) {
            return 0; // free, claimed, or not filled yet
        }
        int key = keyOf(meta);
        long keyed = table.keyedHash(key);
        int mix = table.filterMixOfHash(keyed);
        if (writtenTogether.contains(key, mix)) {
            return 0; // written with its key's values
        }
        int bucket = table.bucketOfHash(keyed);
        if (CompactLine.isHomeOf(bucket, slot)) {
            long head = table.laVersion(bucket);
            long[] line = table.linePage(bucket);
            int base = table.lineBase(bucket);
            boolean alone = !BucketLockWord.locked(head) && CompactLine.keyPositions(line, base, key) == 1 << (slot & 7)
                    && (!CompactLine.poolMayHold(head, mix) || CompactPoolTwins.lineHoldsEveryEntryOf(line, base, key));
            long value = table.lpValue(slot);
            VarHandle.acquireFence(); // the value's and the line's loads before the second loads
            long again = lvMeta(page, index);
            if (count(again) == 0 || (again ^ meta) >>> GENERATION_SHIFT != 0) {
                return 0; // freed (its value word may be the free list's link) or reused meanwhile
            }
            if (alone && table.validate(bucket, head)) {
                keys[at] = key;
                values[at] = value;
                flags[at] = recordFlags(again);
                return 1;
            }
        }
        readValues(bucket, key);
        int met = indexOfSlot(slot);
        if (met < 0) {
            return 0; // left its chain meanwhile: removed during the call
        }
        if (groupLength == 1) {
            keys[at] = key;
            values[at] = groupValues[0];
            flags[at] = groupFlags[0];
            return 1;
        }
        writtenTogether.add(key, mix);
        int kept = 0;
        for (int i = 0; i < groupLength; i++) {
            if (i == met || !metBefore(groupSlots[i])) {
                groupValues[kept] = groupValues[i];
                groupFlags[kept] = groupFlags[i];
                kept++;
            }
        }
        pendingKey = key;
        pendingLength = kept;
        pendingWritten = 0;
        return 0;
    }

    /**
     * Reads the values of {@code key} in bucket {@code b}'s chain, oldest first, into the group:
     * optimistically ({@link CompactWalk#entriesOfKey}), or, where a writer was in the bucket or the
     * group's arrays are too short, under the bucket's bit (the arrays grow with the bit let go:
     * nothing is allocated while it is held). A slot whose count is zero ({@code close()} killed it)
     * is left out.
     */
    private void readValues(int b, int key) {
        int found = CompactWalk.entriesOfKey(table, b, key, groupSlots, groupMetas, groupValues);
        if (found >= 0) {
            setGroup(found);
            return;
        }
        for (;;) {
            int length;
            table.lock(b);
            try {
                length = table.length(b);
                if (length <= groupSlots.length) {
                    int n = 0;
                    for (int pos = 0; pos < length; pos++) {
                        int slot = table.refAt(b, pos);
                        long meta = lvMeta(table.metaPage(slot), table.metaIndex(slot));
                        if (count(meta) != 0 && keyOf(meta) == key) {
                            groupSlots[n] = slot;
                            groupMetas[n] = meta;
                            groupValues[n] = table.lpValue(slot);
                            n++;
                        }
                    }
                    setGroup(n);
                    return;
                }
            } finally {
                table.unlock(b);
            }
            int capacity = Math.max(groupSlots.length * 2, length);
            groupSlots = new int[capacity];
            groupMetas = new long[capacity];
            groupValues = new long[capacity];
            groupFlags = new byte[capacity];
        }
    }

    /** The group read is the first {@code n} slots, meta words and values: their record flags from the meta words. */
    private void setGroup(int n) {
        for (int i = 0; i < n; i++) {
            groupFlags[i] = recordFlags(groupMetas[i]);
        }
        groupLength = n;
    }

    /**
     * Keeps the pool's look-ahead {@value CompactClock#LOOKAHEAD} to {@code 2 *}
     * {@value CompactClock#LOOKAHEAD} slots ahead of {@code slot}, the pool slot the walk is at: once
     * the walk is within a window of the end of what it loaded (from {@code slot} again where it
     * wrapped), loads what reading the chains of the next window's pairs will: their buckets' lines
     * and chain records' directory entries, then the records and their pool entries' meta words
     * ({@link CompactWalk#touchPoolEntries}). A pool pair's bucket is anywhere in the table, so these
     * loads, independent of one another, overlap their misses, where each chain read would wait for
     * its own in turn.
     */
    private void lookAhead(int slot) {
        if (slot < touchedFrom || slot > touchedTo) {
            touchedFrom = slot;
            touchedTo = slot;
        }
        if (touchedTo - slot > CompactClock.LOOKAHEAD || touchedTo >= end) {
            return;
        }
        int from = touchedTo;
        int to = Math.min(end, from + 2 * CompactClock.LOOKAHEAD);
        long sum = 0;
        for (int round = 0; round < 2; round++) {
            for (int s = from; s < to; s++) {
                long[] page = CompactLine.isSlot(s) ? table.laMetaPage(s) : null;
                long meta = page == null ? 0 : page[table.metaIndex(s)];
                if (count(meta) != 0) {
                    int bucket = table.bucketOf(keyOf(meta));
                    int entry = table.records.lpEntry(bucket);
                    sum += round == 0 ? table.touchLineWords(bucket) + entry : CompactWalk.touchPoolEntries(table, entry);
                }
            }
        }
        touched += sum;
        touchedTo = to;
    }

    /** The index of {@code slot} in the group, or -1. */
    private int indexOfSlot(int slot) {
        for (int i = 0; i < groupLength; i++) {
            if (groupSlots[i] == slot) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Whether the walk met {@code slot} before the slot it is looking at: each region is walked from
     * its first index, cyclically, one index a step, so a slot was met if it is fewer steps from its
     * region's first index than the region's steps taken. A slot at or past {@code end} is never met.
     */
    private boolean metBefore(int slot) {
        if (slot < table.homeSlots) {
            int lines = table.homeSlots - 1;
            return Math.floorMod(slot - firstLineIndex, lines) < lineSteps;
        }
        if (slot >= end) {
            return false;
        }
        return Math.floorMod(slot - firstPoolIndex, end - table.homeSlots) < poolSteps;
    }

    /** The snapshot record's flags of a live meta word: reusable; referenced. */
    private static byte recordFlags(long meta) {
        return (byte) (((meta & REUSABLE) != 0 ? Snapshots.RECORD_REUSABLE : 0)
                | ((meta & REFERENCED) != 0 ? Snapshots.RECORD_REFERENCED : 0));
    }

    /**
     * A set of int keys, open addressing with linear probing, at most half full; 0 is kept aside.
     * Holds only the keys whose values a walk wrote together: keys with two values or more. A key's
     * place comes from its {@link CompactTable#filterMix}, which depends on the cache's secret seed,
     * so that keys chosen to collide here cannot be chosen without it.
     */
    private static final class KeySet {
        private int[] keys = new int[16];
        private int[] mixes = new int[16];
        private int size;
        private boolean hasZero;

        boolean contains(int key, int mix) {
            if (key == 0) {
                return hasZero;
            }
            int mask = keys.length - 1;
            for (int i = mix & mask; keys[i] != 0; i = (i + 1) & mask) {
                if (keys[i] == key) {
                    return true;
                }
            }
            return false;
        }

        void add(int key, int mix) {
            if (key == 0) {
                hasZero = true;
                return;
            }
            if (2 * (size + 1) > keys.length) {
                int[] oldKeys = keys;
                int[] oldMixes = mixes;
                keys = new int[oldKeys.length * 2];
                mixes = new int[oldKeys.length * 2];
                size = 0;
                for (int i = 0; i < oldKeys.length; i++) {
                    if (oldKeys[i] != 0) {
                        insert(oldKeys[i], oldMixes[i]);
                    }
                }
            }
            insert(key, mix);
        }

        private void insert(int key, int mix) {
            int mask = keys.length - 1;
            int i = mix & mask;
            for (; keys[i] != 0; i = (i + 1) & mask) {
                if (keys[i] == key) {
                    return;
                }
            }
            keys[i] = key;
            mixes[i] = mix;
            size++;
        }
    }
}
