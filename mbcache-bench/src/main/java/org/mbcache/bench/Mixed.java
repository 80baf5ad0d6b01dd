package org.mbcache.bench;

import java.util.concurrent.TimeUnit;
import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Mixed read/write on one shared full cache: a reader thread doing findFirst+release while a
 * writer thread removes a cached pair (deleteOrGet) and creates it again, so the cache stays at
 * its load and no reclaim runs. The group is 2 threads (1 reader + 1 writer); the table shows the
 * group's score and each role's.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 3, jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
public class Mixed {

    @Benchmark
    @Group("mixed")
    @GroupThreads(1)
    public long reader(Populated s, Cursor c) {
        return Micro.findFirstRelease(s, s.index[c.pos++ & KeyIndex.MASK]);
    }

    @Benchmark
    @Group("mixed")
    @GroupThreads(1)
    public boolean writer(Populated s, Cursor c) {
        int i = s.index[c.pos++ & KeyIndex.MASK];
        if (s.raw != null) {
            Long id = s.boxedPair[i];
            s.raw.asMap().remove(id);
            return s.raw.asMap().putIfAbsent(id, id) == null;
        }
        DedupCache cache = s.cache;
        int k = s.pairKey[i];
        long v = s.pairValue[i];
        CacheEntry e = cache.deleteOrGet(k, v);
        if (e != null) { // the reader holds it right now: leave it
            cache.release(e);
            return false;
        }
        return cache.create(k, v, true);
    }
}
