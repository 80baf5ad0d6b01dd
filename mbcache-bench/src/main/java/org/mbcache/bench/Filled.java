package org.mbcache.bench;

import com.github.benmanes.caffeine.cache.Cache;
import org.mbcache.DedupCache;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A bounded cache (maxEntries 65,536) filled to the design load, for the write benchmarks: every
 * create of a never-seen pair pushes it over its bound, so reclaim (or Caffeine's eviction) runs.
 */
@State(Scope.Benchmark)
public class Filled {
    @Param({Backends.MBCACHE, Backends.MBCACHE_ALLOCFIRST, Backends.CAFFEINE, Backends.CAFFEINE_RAW})
    public String backend;

    public DedupCache cache;
    public Cache<Long, Long> raw;

    @Setup(Level.Trial)
    public void setUp() {
        int n = Backends.MAX_ENTRIES;
        int[] keys = new int[n];
        long[] values = new long[n];
        Long[] boxed = new Long[n];
        for (int i = 0; i < n; i++) {
            values[i] = i;
            keys[i] = KeyIndex.keyOf(i);
            boxed[i] = (long) i;
        }
        if (Backends.isRaw(backend)) {
            raw = Populated.filledRaw(boxed);
        } else {
            cache = Populated.filledDedup(backend, keys, values);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        Backends.dispose(cache, raw);
    }
}
