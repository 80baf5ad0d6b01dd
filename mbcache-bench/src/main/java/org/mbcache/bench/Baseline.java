package org.mbcache.bench;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * The floor of a lookup: the same pairs as {@link Populated} in a plain
 * {@code ConcurrentHashMap<Integer, long[]>} (a key to the values of that key's pairs), nothing else
 * promised: no reference counts, no bound, no eviction. {@code Baseline.findFirstHit} and
 * {@code findFirstMiss} are the yardsticks of {@code Micro}'s; keys are boxed once in setup, as
 * caffeine-raw's ids are.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 3, jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
public class Baseline {

    /** The pairs of {@link Populated} at the same load, indexed by key. */
    @State(Scope.Benchmark)
    public static class Pairs {
        /** One backend only; a param so that the row lands in the results table as {@code chm}. */
        @Param({Backends.CHM})
        public String backend;

        @Param({Populated.FULL, Populated.LIGHT})
        public String load;

        @Param({KeyIndex.UNIFORM, KeyIndex.ZIPF})
        public String keys;

        ConcurrentHashMap<Integer, long[]> map;
        Integer[] boxedKey;
        /** Keys that are not in the map, boxed once here: {@code Populated}'s miss keys. */
        Integer[] boxedMissKey;
        int[] index;

        /** Fills the map with the pairs {@code (keyOf(i), i)} of the load and draws the index. */
        @Setup(Level.Trial)
        public void setUp() {
            if (!Backends.CHM.equals(backend)) {
                throw new IllegalArgumentException("Baseline has only the chm backend, not " + backend);
            }
            int n = Populated.pairsFor(load);
            map = new ConcurrentHashMap<>();
            boxedKey = new Integer[n];
            for (int i = 0; i < n; i++) {
                Integer k = KeyIndex.keyOf(i);
                boxedKey[i] = k;
                long[] one = {i};
                map.merge(k, one, Pairs::append);
            }
            long[] absent = Populated.absentPairIds(n, map.keySet());
            boxedMissKey = new Integer[n];
            for (int i = 0; i < n; i++) {
                boxedMissKey[i] = KeyIndex.keyOf(absent[i]);
            }
            index = KeyIndex.generate(keys, n, 0x5EED);
        }

        /** The values of a key, {@code more} after {@code old}. */
        static long[] append(long[] old, long[] more) {
            long[] out = Arrays.copyOf(old, old.length + more.length);
            System.arraycopy(more, 0, out, old.length, more.length);
            return out;
        }
    }

    /** A key that is not cached: {@code get} returns null (the yardstick of {@code Micro.findFirstMiss}). */
    @Benchmark
    public long findFirstMiss(Pairs s, Cursor c) {
        long[] values = s.map.get(s.boxedMissKey[s.index[c.pos++ & KeyIndex.MASK]]);
        return values == null ? -1 : values[0];
    }

    /** The first value of a cached key: {@code get} and the array's first element. */
    @Benchmark
    public long findFirstHit(Pairs s, Cursor c) {
        long[] values = s.map.get(s.boxedKey[s.index[c.pos++ & KeyIndex.MASK]]);
        return values == null ? -1 : values[0];
    }
}
