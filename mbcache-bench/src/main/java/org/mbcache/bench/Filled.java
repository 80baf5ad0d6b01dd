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
 *       reclaimed; new pairs pile up during an iteration (the cache fills up, as after a restart)
 *       and the teardown of each iteration brings the cache back to 65,536 entries, outside the
 *       measurement.</li>
 * </ul>
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
            cache = Populated.filledDedup(backend, Backends.maxEntries(bound), keys, values);
        }
    }

    /**
     * Below the bound, takes the cache back to the design load after each iteration (oldest
     * entries first), so every iteration starts from the same fill and none ever reaches the bound.
     */
    @TearDown(Level.Iteration)
    public void backToDesignLoad() {
        if (!Backends.BELOW.equals(bound)) {
            return;
        }
        int n = Backends.MAX_ENTRIES;
        if (raw != null) {
            raw.policy().eviction().ifPresent(e -> {
                e.setMaximum(n);
                raw.cleanUp();
                e.setMaximum(Backends.BELOW_MAX_ENTRIES);
            });
            return;
        }
        // a pass gives referenced entries a second chance instead of freeing them: a few passes
        for (int pass = 0; pass < 4 && cache.size() > n; pass++) {
            cache.shrink(cache.size() - n);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        Backends.dispose(cache, raw);
    }
}
