package org.mbcache.bench;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * The floor of a lookup: the same pairs as {@link Populated} in a plain
 * {@code ConcurrentHashMap<Integer, long[]>} (a key to the values of that key's pairs), nothing else
 * promised: no reference counts, no bound, no eviction. {@code Baseline.findFirstHit} and
 * {@code findFirstMiss} are the yardsticks of {@code Micro}'s; keys are boxed once in setup, as
 * caffeine-raw's ids are.
 *
 * <p>{@code findFirstHitCounted} is the same lookup plus the one thing the cache's contract adds to
 * every hit: a reference taken (increment-if-not-zero, a CAS) and given back (a CAS), on a count word
 * beside the value, as the entries of both backends have one. Nothing else: no lock, no version, no
 * statistics. It is the floor of a hit that keeps the contract, so it tells how much of the distance
 * between {@code Micro.findFirstHit} and a plain lookup any implementation has to pay: two atomic
 * read-modify-writes per hit, each of which (on x86, a locked instruction) keeps the next lookup's
 * loads from overlapping this one's.
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
        /**
         * For {@link #findFirstHitCounted} only, built after {@link #map}: the same keys, each to a
         * {@link CountedValue} holding the key's first value at count 1 (the map's own reference, as
         * a cached entry's). The object stands where {@link #map}'s array stands, so a lookup reads
         * as many lines as {@link #findFirstHit}'s, and the CAS pair is the only difference.
         */
        ConcurrentHashMap<Integer, CountedValue> counted;
        Integer[] boxedKey;
        /** Keys that are not in the map, boxed once here: {@code Populated}'s miss keys. */
        Integer[] boxedMissKey;
        int[] index;

        /**
         * Fills the map with the pairs {@code (keyOf(i), i)} of the load and draws the index; for the
         * counted benchmark, also the counted map.
         */
        @Setup(Level.Trial)
        public void setUp(BenchmarkParams benchmark) {
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
            if (benchmark.getBenchmark().endsWith(".findFirstHitCounted")) {
                counted = new ConcurrentHashMap<>();
                map.forEach((key, values) -> counted.put(key, new CountedValue(values[0])));
            }
        }

        /** The values of a key, {@code more} after {@code old}. */
        static long[] append(long[] old, long[] more) {
            long[] out = Arrays.copyOf(old, old.length + more.length);
            System.arraycopy(more, 0, out, old.length, more.length);
            return out;
        }
    }

    /**
     * A value with a reference count, taken and given back as {@code ListEntry}'s is: each a
     * read of the count and a CAS on it (volatile mode, so the same full fence on x86).
     */
    static final class CountedValue {
        private static final VarHandle COUNT;

        static {
            try {
                COUNT = MethodHandles.lookup().findVarHandle(CountedValue.class, "count", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final long value;
        private volatile int count = 1;

        CountedValue(long value) {
            this.value = value;
        }

        /** Increment-if-not-zero: {@code false} if the count is zero (a value that left the map). */
        boolean tryAcquire() {
            for (;;) {
                int c = count;
                if (c == 0) {
                    return false;
                }
                if (COUNT.compareAndSet(this, c, c + 1)) {
                    return true;
                }
            }
        }

        /** Gives a reference back; refuses to go below the map's own reference, as the cache does. */
        void release() {
            for (;;) {
                int c = count;
                if (c <= 1) {
                    throw new IllegalStateException("released more often than acquired");
                }
                if (COUNT.compareAndSet(this, c, c - 1)) {
                    return;
                }
            }
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

    /**
     * The first value of a cached key, referenced and released around its read: the hit of a cache
     * that keeps the contract's reference counts and does nothing else (the class comment).
     */
    @Benchmark
    public long findFirstHitCounted(Pairs s, Cursor c) {
        CountedValue first = s.counted.get(s.boxedKey[s.index[c.pos++ & KeyIndex.MASK]]);
        if (first == null || !first.tryAcquire()) {
            return -1;
        }
        long v = first.value;
        first.release();
        return v;
    }
}
