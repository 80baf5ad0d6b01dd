package org.mbcache.bench;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.mbcache.DedupCache;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One hot key: every thread looks up the same pair (ext4's zero block, an ACL that every file
 * shares) in a cache that also holds the design load's 65,536 other pairs. A hit takes and gives
 * back a reference on that one entry, so this measures what threads that share an entry cost each
 * other; run it at 1 and 2 threads ({@code -t 1}, {@code -t 2}) and read the ratio. The kernel port
 * ({@code MbCache}) switches such an entry to per-stripe reference cells (hot mode,
 * {@code ListEntry}) after the first contended acquires; the compact layout
 * ({@code CompactMbCache}) counts every reference in the slot's state word.
 *
 * <p>The floors: {@link #chmGet}, a plain {@code ConcurrentHashMap} lookup of the hot key (nothing
 * written, so it scales perfectly), and {@link #chmCounted}, the same plus a reference taken and
 * given back by CAS on one count word ({@code Baseline.findFirstHitCounted}'s), which is what every
 * hit of a cache without hot mode pays, shared line included.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 3, jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
public class HotKey {

    /** The hot pair's value: one no filler pair has ({@link Populated}'s values are 0 to 65,535). */
    static final long HOT_VALUE = 1L << 40;
    /** The hot pair's key, which some filler pairs may share: the walk still meets the hot pair first. */
    static final int HOT_KEY = KeyIndex.keyOf(HOT_VALUE);

    /** A DedupCache at the design load plus the hot pair, created last (so newest of its key). */
    @State(Scope.Benchmark)
    public static class HotCache {
        @Param({Backends.MBCACHE, Backends.MBCACHE_ALLOCFIRST, Backends.COMPACT, Backends.CAFFEINE})
        public String backend;

        DedupCache cache;

        /** Fills the cache with the 65,536 pairs of the full load, then creates the hot pair. */
        @Setup(Level.Trial)
        public void setUp() {
            int n = Populated.pairsFor(Populated.FULL);
            int[] keys = new int[n];
            long[] values = new long[n];
            for (int i = 0; i < n; i++) {
                keys[i] = KeyIndex.keyOf(i);
                values[i] = i;
            }
            // Below the bound, so that creating the hot pair reclaims nothing.
            cache = Populated.filledDedup(backend, Backends.BELOW_MAX_ENTRIES, keys, values);
            if (!cache.create(HOT_KEY, HOT_VALUE, true)) {
                throw new IllegalStateException(backend + ": the hot pair was not created");
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            Backends.dispose(cache, null);
        }
    }

    /** The hot key in a plain map, and its first value with a count word, for the floors. */
    @State(Scope.Benchmark)
    public static class HotMap {
        /** One backend only; a param so that the row lands in the results table as {@code chm}. */
        @Param({Backends.CHM})
        public String backend;

        ConcurrentHashMap<Integer, long[]> map;
        ConcurrentHashMap<Integer, Baseline.CountedValue> counted;
        Integer boxedHotKey;

        /** The 65,536 pairs and the hot one, by key; the hot key's first value also counted. */
        @Setup(Level.Trial)
        public void setUp() {
            if (!Backends.CHM.equals(backend)) {
                throw new IllegalArgumentException("HotKey's floors have only the chm backend, not " + backend);
            }
            int n = Populated.pairsFor(Populated.FULL);
            map = new ConcurrentHashMap<>();
            counted = new ConcurrentHashMap<>();
            for (int i = 0; i < n; i++) {
                Integer k = KeyIndex.keyOf(i);
                map.merge(k, new long[] {i}, Baseline.Pairs::append);
                counted.putIfAbsent(k, new Baseline.CountedValue(i));
            }
            boxedHotKey = HOT_KEY;
            map.merge(boxedHotKey, new long[] {HOT_VALUE}, (old, hot) -> Baseline.Pairs.append(hot, old));
            counted.put(boxedHotKey, new Baseline.CountedValue(HOT_VALUE));
        }
    }

    /** findFirst of the hot key, then release. */
    @Benchmark
    public long findFirstRelease(HotCache s) {
        return Micro.valueReleased(s.cache, s.cache.findFirst(HOT_KEY));
    }

    /** get of the hot pair, then release. */
    @Benchmark
    public long getRelease(HotCache s) {
        return Micro.valueReleased(s.cache, s.cache.get(HOT_KEY, HOT_VALUE));
    }

    /** ext4's walk for the hot block: findFirst, compare (findNext until it matches), touch, release. */
    @Benchmark
    public long findCompareTouch(HotCache s) {
        return Micro.findCompareTouch(s.cache, HOT_KEY, HOT_VALUE);
    }

    /** The floor of a lookup: the hot key's first value from a plain map, nothing written. */
    @Benchmark
    public long chmGet(HotMap s) {
        long[] values = s.map.get(s.boxedHotKey);
        return values == null ? -1 : values[0];
    }

    /** The floor of a hit that keeps reference counts on one shared word: the lookup plus a CAS pair. */
    @Benchmark
    public long chmCounted(HotMap s) {
        Baseline.CountedValue first = s.counted.get(s.boxedHotKey);
        if (first == null || !first.tryAcquire()) {
            return -1;
        }
        long v = first.value;
        first.release();
        return v;
    }
}
