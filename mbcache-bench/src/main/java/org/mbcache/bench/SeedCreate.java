package org.mbcache.bench;

import java.util.SplittableRandom;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The 2019 "mbcache: Speed up cache entry creation" experiment on the JVM: create with a high
 * duplicate rate (ext4 calls create on every xattr block it reads, and most are already cached),
 * before (ALLOCATE_FIRST, mainline: allocate, then find the duplicate and throw the entry away)
 * and after (REQUEST_LIST: find the duplicate first, allocate nothing). Full cache, 1 thread, as
 * the kernel measured it.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 3, jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Threads(1)
public class SeedCreate {

    @State(Scope.Benchmark)
    public static class Dups {
        @Param({Backends.MBCACHE_ALLOCFIRST, Backends.MBCACHE})
        public String backend;

        /** Percent of creates that find their pair already cached. */
        @Param({"90"})
        public int dupPercent;

        public DedupCache cache;
        public int[] pairKey;
        public long[] pairValue;
        public int[] index;
        public boolean[] isNew;

        @Setup(Level.Trial)
        public void setUp() {
            int n = Backends.MAX_ENTRIES;
            pairKey = new int[n];
            pairValue = new long[n];
            for (int i = 0; i < n; i++) {
                pairValue[i] = i;
                pairKey[i] = KeyIndex.keyOf(i);
            }
            cache = Populated.filledDedup(backend, Backends.MAX_ENTRIES, pairKey, pairValue);
            index = KeyIndex.generate(KeyIndex.UNIFORM, n, 0x5EED);
            isNew = new boolean[KeyIndex.LENGTH];
            SplittableRandom rnd = new SplittableRandom(42);
            for (int i = 0; i < isNew.length; i++) {
                isNew[i] = rnd.nextInt(100) >= dupPercent;
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            cache.close();
        }
    }

    @Benchmark
    public boolean create(Dups s, Cursor c) {
        int p = c.pos++ & KeyIndex.MASK;
        if (s.isNew[p]) {
            long v = c.next++;
            return s.cache.create(KeyIndex.keyOf(v), v, true);
        }
        int i = s.index[p];
        return s.cache.create(s.pairKey[i], s.pairValue[i], true);
    }
}
