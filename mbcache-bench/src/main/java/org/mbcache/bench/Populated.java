package org.mbcache.bench;

import com.github.benmanes.caffeine.cache.Cache;
import java.util.HashSet;
import java.util.Set;
import org.mbcache.DedupCache;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A cache filled to a given load with pairs {@code (keyOf(v), v)}, {@code v = 0..n-1}, all
 * reusable, plus a pre-generated index into them and a set of keys that are not cached.
 * Shared by all threads of a trial.
 */
@State(Scope.Benchmark)
public class Populated {
    /** {@code full}: 65,536 pairs in 4,096 buckets (16 per bucket, the kernel's design load); {@code light}: 4,096 pairs (1 per bucket). */
    public static final String FULL = "full";
    public static final String LIGHT = "light";

    @Param({Backends.MBCACHE, Backends.MBCACHE_ALLOCFIRST, Backends.CAFFEINE, Backends.CAFFEINE_RAW})
    public String backend;

    @Param({FULL, LIGHT})
    public String load;

    @Param({KeyIndex.UNIFORM, KeyIndex.ZIPF})
    public String keys;

    /** The regime: {@link Backends#AT} the bound (maxEntries 65,536) or far {@link Backends#BELOW} it. */
    @Param({Backends.AT, Backends.BELOW})
    public String bound;

    /** Exactly one of {@code cache} and {@code raw} is set. */
    public DedupCache cache;
    public Cache<Long, Long> raw;

    public int[] pairKey;
    public long[] pairValue;
    /** The pair's value boxed once here, so the raw backend's measured path does not box. */
    public Long[] boxedPair;
    /** Indices into the pairs, drawn by {@link #keys}. */
    public int[] index;
    /** Keys (and, for raw, pair ids) of pairs that are not cached. */
    public int[] missKey;
    public Long[] boxedMiss;

    public static int pairsFor(String load) {
        switch (load) {
            case FULL: return Backends.MAX_ENTRIES;
            case LIGHT: return 1 << Backends.BUCKET_BITS;
            default: throw new IllegalArgumentException("unknown load: " + load + " (expected full or light)");
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        int n = pairsFor(load);
        pairKey = new int[n];
        pairValue = new long[n];
        boxedPair = new Long[n];
        Set<Integer> present = new HashSet<>();
        for (int i = 0; i < n; i++) {
            pairValue[i] = i;
            pairKey[i] = KeyIndex.keyOf(i);
            boxedPair[i] = (long) i;
            present.add(pairKey[i]);
        }
        missKey = new int[n];
        boxedMiss = new Long[n];
        long[] absent = absentPairIds(n, present);
        for (int i = 0; i < n; i++) {
            missKey[i] = KeyIndex.keyOf(absent[i]);
            boxedMiss[i] = absent[i];
        }
        index = KeyIndex.generate(keys, n, 0x5EED);
        if (Backends.isRaw(backend)) {
            raw = filledRaw(bound, boxedPair);
        } else {
            cache = filledDedup(backend, Backends.maxEntries(bound), pairKey, pairValue);
        }
    }

    /**
     * {@code n} pair ids from 2^50 up whose keys ({@link KeyIndex#keyOf}) are not in {@code present}:
     * the lookups that miss.
     */
    static long[] absentPairIds(int n, Set<Integer> present) {
        long[] ids = new long[n];
        long v = 1L << 50;
        for (int i = 0; i < n; v++) {
            if (!present.contains(KeyIndex.keyOf(v))) {
                ids[i++] = v;
            }
        }
        return ids;
    }

    /** A new DedupCache backend at the design load's geometry holding the given pairs, all reusable. */
    public static DedupCache filledDedup(String backend, long maxEntries, int[] keys, long[] values) {
        return filledDedup(backend, Backends.BUCKET_BITS, maxEntries, keys, values);
    }

    /** A new DedupCache backend ({@code bucketBits}: mbcache's) holding the given pairs, all reusable. */
    public static DedupCache filledDedup(String backend, int bucketBits, long maxEntries, int[] keys, long[] values) {
        DedupCache cache = Backends.dedup(backend, bucketBits, maxEntries, Backends.executor());
        for (int i = 0; i < keys.length; i++) {
            if (!cache.create(keys[i], values[i], true)) {
                throw new IllegalStateException(backend + ": create of a new pair returned false");
            }
        }
        check(cache.size(), keys.length);
        return cache;
    }

    /** A new caffeine-raw cache with the bound of a regime, holding each pair id mapped to itself. */
    public static Cache<Long, Long> filledRaw(String bound, Long[] ids) {
        Cache<Long, Long> raw = Backends.raw(bound);
        for (Long id : ids) {
            raw.put(id, id);
        }
        raw.cleanUp();
        check(raw.estimatedSize(), ids.length);
        return raw;
    }

    static void check(long size, int n) {
        if (size != n) {
            System.err.println("WARNING: cache holds " + size + " entries after filling " + n);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        Backends.dispose(cache, raw);
    }
}
