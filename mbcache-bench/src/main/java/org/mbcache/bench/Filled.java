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
 * A cache filled with 65,536 pairs (the design load), for the write benchmarks, in one of two
 * regimes:
 * <ul>
 *   <li>{@link Backends#AT}: maxEntries 65,536, so every create of a never-seen pair pushes the
 *       cache over its bound and reclaim (Caffeine: eviction) runs;</li>
 *   <li>{@link Backends#BELOW}: maxEntries {@value Backends#BELOW_MAX_ENTRIES}, so nothing is
 *       reclaimed.</li>
 * </ul>
 * mbcache has the design load's geometry (bucketBits 12, 16 a bucket) unless a subclass says
 * otherwise ({@link Growing}).
 */
@State(Scope.Benchmark)
public class Filled {
    @Param({Backends.MBCACHE, Backends.MBCACHE_ALLOCFIRST, Backends.CAFFEINE, Backends.CAFFEINE_RAW})
    public String backend;

    /** The regime: {@link Backends#AT} the bound or far {@link Backends#BELOW} it. */
    @Param({Backends.AT, Backends.BELOW})
    public String bound;

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
            raw = Populated.filledRaw(bound, boxed);
        } else {
            cache = Populated.filledDedup(backend, bucketBits(), Backends.maxEntries(bound), keys, values);
        }
    }

    /** mbcache's bucketBits: the design load's. */
    int bucketBits() {
        return Backends.BUCKET_BITS;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        Backends.dispose(cache, raw);
    }
}
