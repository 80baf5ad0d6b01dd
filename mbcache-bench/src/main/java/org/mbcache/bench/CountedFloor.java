package org.mbcache.bench;

import it.unimi.dsi.fastutil.HashCommon;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * {@code scale}'s {@code counted} subject, the counted floor: the least a hit that counts references
 * can cost, one cache line. An open-address table with linear probing in one flat {@code long[]}, its
 * capacity the power of two fastutil's {@code Int2LongOpenHashMap} picks for the same count (load
 * factor at most {@value #LOAD_FACTOR}, its default; at 10^6 entries 2^21 slots, 0.48 full). Slot
 * {@code i} is 16 bytes at a 16-byte offset, so never across two lines: {@code [2i]} the key word (the
 * key in the upper 32 bits, bit 31 "in use", the reference count in bits 0-30; 0 an empty slot) and
 * {@code [2i + 1]} the value. A hit finds the key, takes a reference with a CAS on the key word
 * (count + 1), reads the value, and gives the reference back with a CAS (count - 1): the hit's
 * probe, count and value are one line, where a cache's hit reads its bucket and then its slot.
 *
 * <p>A floor for one thread: removal shifts later entries back (fastutil's backward shift), which
 * a table whose entries may be held could not do; the benchmark removes only between lookups.
 */
final class CountedFloor extends ScaleBench.Subject {

    /** The most entries a slot, fastutil's default load factor. */
    static final float LOAD_FACTOR = 0.75f;
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    /** Bit 31 of a key word: the slot is in use (so key 0 with no reference is not empty). */
    private static final long USED = 1L << 31;

    /** Slot {@code i}: the key word at {@code 2i}, the value at {@code 2i + 1}. */
    private final long[] table;
    private final int mask;

    CountedFloor(long n) {
        int capacity = HashCommon.arraySize((int) Math.min(n, 1 << 29), LOAD_FACTOR);
        table = new long[2 * capacity];
        mask = capacity - 1;
    }

    /** The slot a key's probe starts at. */
    private int home(int key) {
        return HashCommon.mix(key) & mask;
    }

    /** The slot holding {@code key}, or {@code -1 - s} for the empty slot {@code s} that ends its probe. */
    private int find(int key) {
        for (int i = home(key);; i = (i + 1) & mask) {
            long word = table[2 * i];
            if (word == 0) {
                return -1 - i;
            }
            if ((int) (word >>> 32) == key) {
                return i;
            }
        }
    }

    @Override
    void create(int key, long value) {
        int i = find(key);
        if (i < 0) {
            put(-1 - i, key, value);
        }
    }

    private void put(int slot, int key, long value) {
        table[2 * slot + 1] = value;
        table[2 * slot] = (long) key << 32 | USED;
    }

    /** A hit: a reference taken by CAS, the value read, the reference given back by CAS; 1 if found. */
    @Override
    int lookup(int key) {
        int i = find(key);
        if (i < 0) {
            return 0;
        }
        int at = 2 * i;
        long word;
        do {
            word = (long) LONGS.getVolatile(table, at);
        } while (!LONGS.compareAndSet(table, at, word, word + 1));
        long value = table[at + 1];
        do {
            word = (long) LONGS.getVolatile(table, at);
        } while (!LONGS.compareAndSet(table, at, word, word - 1));
        return value >= 0 ? 1 : 2; // every value is at least 0: only keeps the value's load
    }

    @Override
    int duplicate(int key, long value) {
        int i = find(key);
        if (i >= 0) {
            return 1;
        }
        put(-1 - i, key, value);
        return 0;
    }

    @Override
    void churn(int key, long value, int oldestKey) {
        create(key, value);
        remove(oldestKey);
    }

    /** Removes {@code key} and shifts the entries after it back (fastutil's {@code shiftKeys}). */
    private void remove(int key) {
        int pos = find(key);
        if (pos < 0) {
            return;
        }
        for (;;) {
            int last = pos;
            pos = (pos + 1) & mask;
            long word;
            for (;; pos = (pos + 1) & mask) {
                word = table[2 * pos];
                if (word == 0) {
                    table[2 * last] = 0;
                    table[2 * last + 1] = 0;
                    return;
                }
                int slot = home((int) (word >>> 32));
                if (last <= pos ? last >= slot || slot > pos : last >= slot && slot > pos) {
                    break;
                }
            }
            table[2 * last] = word;
            table[2 * last + 1] = table[2 * pos + 1];
        }
    }

    @Override
    long footprint() {
        return 8L * table.length;
    }
}
