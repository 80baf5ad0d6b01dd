package org.mbcache.bench;

import org.mbcache.DedupCache;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * ext4's walk over several blocks with one hash: 16,384 keys with {@value #VALUES_PER_KEY}
 * values each (65,536 pairs, the design load). The index picks a (key, wanted value) pair.
 * No caffeine-raw: a single-key map has no "next value of this key".
 */
@State(Scope.Benchmark)
public class Walk {
    public static final int VALUES_PER_KEY = 4;

    @Param({Backends.MBCACHE, Backends.MBCACHE_ALLOCFIRST, Backends.CAFFEINE})
    public String backend;

    @Param({KeyIndex.UNIFORM, KeyIndex.ZIPF})
    public String keys;

    /** The regime: {@link Backends#AT} the bound (maxEntries 65,536) or far {@link Backends#BELOW} it. */
    @Param({Backends.AT, Backends.BELOW})
    public String bound;

    public DedupCache cache;
    public int[] pairKey;
    public long[] pairValue;
    public int[] index;

    @Setup(Level.Trial)
    public void setUp() {
        int n = Backends.MAX_ENTRIES;
        pairKey = new int[n];
        pairValue = new long[n];
        for (int i = 0; i < n; i++) {
            pairValue[i] = i;
            pairKey[i] = KeyIndex.keyOf(i / VALUES_PER_KEY);
        }
        cache = Populated.filledDedup(backend, Backends.maxEntries(bound), pairKey, pairValue);
        index = KeyIndex.generate(keys, n, 0x5EED);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        cache.close();
    }
}
