package org.mbcache.bench;

import java.util.concurrent.TimeUnit;
import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The micro-benchmarks: one DedupCache operation (or ext4's short sequence of them) per call,
 * at the kernel's design load. Keys come from a pre-generated index through a per-thread cursor;
 * results are returned, so nothing is dead code. Run each at 1 and 2 threads ({@code -t 1}, {@code -t 2}),
 * and in both regimes of its state's {@code bound} param: at the bound (maxEntries = the fill) and
 * far below it ({@link Backends#AT}, {@link Backends#BELOW}).
 *
 * <p>caffeine-raw does the nearest single-key Caffeine operation on pre-boxed ids:
 * {@code getIfPresent} for lookups, {@code asMap().putIfAbsent} for creates, {@code asMap().remove}
 * for deletes.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 3, jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
public class Micro {

    /** Create of a never-seen pair in a full bounded cache: reclaim (or eviction) keeps running. */
    @Benchmark
    public boolean createNew(Growing s, Cursor c) {
        long v = c.next++;
        if (s.raw != null) {
            Long id = v; // Caffeine needs a boxed key: part of its cost
            return s.raw.asMap().putIfAbsent(id, id) == null;
        }
        return s.cache.create(KeyIndex.keyOf(v), v, true);
    }

    /** Create of a pair that is already cached: refused (false). */
    @Benchmark
    public boolean createDuplicate(Populated s, Cursor c) {
        int i = s.index[c.pos++ & KeyIndex.MASK];
        if (s.raw != null) {
            Long id = s.boxedPair[i];
            return s.raw.asMap().putIfAbsent(id, id) == null;
        }
        return s.cache.create(s.pairKey[i], s.pairValue[i], true);
    }

    /** findFirst of a cached key, then release. */
    @Benchmark
    public long findFirstHit(Populated s, Cursor c) {
        return findFirstRelease(s, s.index[c.pos++ & KeyIndex.MASK]);
    }

    static long findFirstRelease(Populated s, int i) {
        if (s.raw != null) {
            Long v = s.raw.getIfPresent(s.boxedPair[i]);
            return v == null ? -1 : v;
        }
        return valueReleased(s.cache, s.cache.findFirst(s.pairKey[i]));
    }

    /** The value of a looked-up entry, released; -1 for none. */
    static long valueReleased(DedupCache cache, CacheEntry e) {
        if (e == null) {
            return -1;
        }
        long v = e.value();
        cache.release(e);
        return v;
    }

    /** findFirst of a key that is not cached. */
    @Benchmark
    public long findFirstMiss(Populated s, Cursor c) {
        int i = s.index[c.pos++ & KeyIndex.MASK];
        if (s.raw != null) {
            Long v = s.raw.getIfPresent(s.boxedMiss[i]);
            return v == null ? -1 : v;
        }
        CacheEntry e = s.cache.findFirst(s.missKey[i]);
        if (e == null) {
            return -1;
        }
        s.cache.release(e);
        return e.value();
    }

    /** get of an exact cached pair, then release. */
    @Benchmark
    public long getRelease(Populated s, Cursor c) {
        int i = s.index[c.pos++ & KeyIndex.MASK];
        if (s.raw != null) {
            Long v = s.raw.getIfPresent(s.boxedPair[i]);
            return v == null ? -1 : v;
        }
        return valueReleased(s.cache, s.cache.get(s.pairKey[i], s.pairValue[i]));
    }

    /**
     * ext4's walk for a block to share: findFirst, compare the value, findNext until it matches,
     * touch the match, release. Four values per key.
     */
    @Benchmark
    public long findCompareTouch(Walk s, Cursor c) {
        int i = s.index[c.pos++ & KeyIndex.MASK];
        return findCompareTouch(s.cache, s.pairKey[i], s.pairValue[i]);
    }

    /** ext4's walk for the pair {@code (key, want)}: its value, or -1 if it is not cached. */
    static long findCompareTouch(DedupCache cache, int key, long want) {
        CacheEntry e = cache.findFirst(key);
        while (e != null && e.value() != want) {
            e = cache.findNext(e);
        }
        if (e == null) {
            return -1;
        }
        cache.touch(e);
        cache.release(e);
        return want;
    }

    /** Create a never-seen pair, then deleteOrGet it (the cache stays at its load). */
    @Benchmark
    public boolean churn(Filled s, Cursor c) {
        long v = c.next++;
        if (s.raw != null) {
            Long id = v;
            boolean created = s.raw.asMap().putIfAbsent(id, id) == null;
            return s.raw.asMap().remove(id) != null & created;
        }
        DedupCache cache = s.cache;
        int k = KeyIndex.keyOf(v);
        boolean created = cache.create(k, v, true);
        CacheEntry e = cache.deleteOrGet(k, v);
        if (e != null) {
            cache.release(e);
            return false;
        }
        return created;
    }
}
