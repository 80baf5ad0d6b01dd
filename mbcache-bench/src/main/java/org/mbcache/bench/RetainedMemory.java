package org.mbcache.bench;

import com.github.benmanes.caffeine.cache.Cache;
import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.util.concurrent.Executor;
import org.mbcache.DedupCache;
import org.openjdk.jol.info.GraphLayout;

/**
 * Retained memory per entry with {@value #ENTRIES} entries, per backend, two ways: JOL's
 * {@code GraphLayout} (every object reachable from the cache, summed) and the heap in use after a
 * full GC, before and after filling the cache. mbcache gets 16 entries per bucket (bucketBits 16),
 * its design load; every backend gets maxEntries = {@value #ENTRIES}, so nothing is reclaimed.
 * caffeine-raw holds a boxed {@code Long} key and a boxed {@code Long} value per entry.
 */
public final class RetainedMemory {
    public static final int ENTRIES = 1_000_000;
    public static final int BUCKET_BITS = 16;

    /** One backend's figures; NaN where a method failed. */
    public record Result(String backend, double jolBytesPerEntry, double heapBytesPerEntry) {
        /** The line: {@code MEMORY} and the record as JSON. */
        private static final ResultLine<Result> LINE = ResultLine.of(Result.class, "MEMORY");

        /** The line the child JVM prints. */
        String line() {
            return LINE.line(this);
        }

        /**
         * Reads back a {@link #line()}.
         *
         * @throws IllegalArgumentException if it is not one
         */
        static Result parse(String line) {
            return LINE.parse(line);
        }

        /** The figure the targets use: JOL's when it worked, else the heap delta. */
        public double bytesPerEntry() {
            return Double.isNaN(jolBytesPerEntry) ? heapBytesPerEntry : jolBytesPerEntry;
        }
    }

    private RetainedMemory() {}

    /** Runs in the caller's thread, so the graph holds no pool threads. */
    private static final Executor SAME_THREAD = Runnable::run;

    static Object build(String backend) {
        if (Backends.isRaw(backend)) {
            Cache<Long, Long> raw = Backends.raw(ENTRIES, SAME_THREAD);
            for (long v = 0; v < ENTRIES; v++) {
                raw.put(v + (1L << 40), v + (1L << 41)); // distinct boxes: nothing from Long's small-value cache
            }
            raw.cleanUp();
            return raw;
        }
        DedupCache cache = Backends.dedup(backend, BUCKET_BITS, ENTRIES, SAME_THREAD);
        for (long v = 0; v < ENTRIES; v++) {
            cache.create(KeyIndex.keyOf(v), v, true);
        }
        if (cache.size() != ENTRIES) {
            System.err.println("WARNING: " + backend + " holds " + cache.size() + " entries, not " + ENTRIES);
        }
        return cache;
    }

    static long usedAfterGc() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 2; i++) {
            System.gc();
            Thread.sleep(50);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    public static Result measure(String backend, boolean jol) throws InterruptedException {
        long before = usedAfterGc();
        Object cache = build(backend);
        long after = usedAfterGc();
        double heap = (after - before) / (double) ENTRIES;
        double jolBytes = Double.NaN;
        if (jol) {
            if (System.getProperty("jol.magicFieldOffset") == null) {
                System.setProperty("jol.magicFieldOffset", "true"); // JDK classes (Long) otherwise fail on JDK 17
            }
            try {
                jolBytes = GraphLayout.parseInstance(cache).totalSize() / (double) ENTRIES;
            } catch (RuntimeException | Error e) {
                System.err.println("JOL failed for " + backend + ": " + e);
            }
        }
        Reference.reachabilityFence(cache);
        if (cache instanceof DedupCache) {
            ((DedupCache) cache).close();
        }
        return new Result(backend, jolBytes, heap);
    }

    /** Entry point of a child JVM: {@code [nojol] backend...}; prints one MEMORY line per backend. */
    public static void main(String[] args) throws InterruptedException {
        boolean jol = true;
        for (String a : args) {
            if (a.equals("nojol")) {
                jol = false;
            } else {
                System.out.println(measure(a, jol).line());
            }
        }
    }
}
