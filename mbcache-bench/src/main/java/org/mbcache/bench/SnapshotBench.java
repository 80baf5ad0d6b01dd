package org.mbcache.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.mbcache.DedupCache;

/**
 * {@code snapshot [--sizes N,...] [BACKEND...]}: the cost of a warm restart. For each backend and
 * size, in one JVM: the time to create the pairs in a fresh cache (the reference), to write the
 * cache's snapshot to a file (through a buffer, no {@code force}), and to restore it into another
 * fresh cache; and the snapshot's bytes a pair. Targets: writing at most half the create time,
 * restoring at most 1.5 times it. Single-threaded, after a warm-up at a small size; sizes up to a
 * million pairs are measured five times and each time's median reported, larger ones once; a
 * cache sized so that nothing is reclaimed (maxEntries twice the pairs, 16 pairs a bucket).
 */
public final class SnapshotBench {

    /** The sizes of a full run: 10^5 and 10^7 pairs. */
    public static final long[] SIZES = {100_000, 10_000_000};
    /** Pairs of the warm-up run of each backend, not reported. */
    static final long WARM_UP = 50_000;
    /** Write time over create time, at most. */
    public static final double WRITE_TARGET = 0.5;
    /** Restore time over create time, at most. */
    public static final double RESTORE_TARGET = 1.5;

    private SnapshotBench() {}

    /**
     * One backend at one size.
     *
     * @param backend the backend's label
     * @param pairs pairs created, written and restored
     * @param createNanos creating them in a fresh cache
     * @param writeNanos writing the snapshot
     * @param restoreNanos restoring it into a fresh cache
     * @param bytes the snapshot's size
     */
    public record Result(String backend, long pairs, long createNanos, long writeNanos, long restoreNanos, long bytes) {
        /** Bytes of the snapshot per pair. */
        public double bytesPerPair() {
            return (double) bytes / pairs;
        }

        /** Write time over create time. */
        public double writeRatio() {
            return (double) writeNanos / createNanos;
        }

        /** Restore time over create time. */
        public double restoreRatio() {
            return (double) restoreNanos / createNanos;
        }

        /** The result as one line: {@code SNAPSHOT backend pairs create-ms write-ms restore-ms bytes/pair ratios}. */
        public String line() {
            return String.format(Locale.ROOT,
                    "SNAPSHOT %s pairs=%d create=%.1fms write=%.1fms (%.2fx, target <= %.1fx %s) restore=%.1fms"
                            + " (%.2fx, target <= %.1fx %s) %.3f bytes/pair",
                    backend, pairs, createNanos / 1e6, writeNanos / 1e6, writeRatio(), WRITE_TARGET,
                    writeRatio() <= WRITE_TARGET ? "met" : "MISSED", restoreNanos / 1e6, restoreRatio(), RESTORE_TARGET,
                    restoreRatio() <= RESTORE_TARGET ? "met" : "MISSED", bytesPerPair());
        }
    }

    /** The key of pair {@code i}: spread (a multiplicative hash), as content hashes are. */
    static int key(long i) {
        return (int) (i * 0x9E37_79B9L) ^ (int) (i >>> 32);
    }

    /** A cache for {@code pairs}: 16 a bucket, bound twice the pairs, background work on the common pool. */
    static DedupCache cacheFor(String backend, long pairs) {
        int bucketBits = Math.max(10, 64 - Long.numberOfLeadingZeros(Math.max(1, pairs / 16 - 1)));
        return Backends.dedup(backend, Math.min(bucketBits, 24), 2 * pairs, Backends.executor());
    }

    /** Measures one backend at one size, with {@code file} as the snapshot's place (overwritten). */
    public static Result measure(String backend, long pairs, Path file) throws IOException {
        long bytes;
        long createNanos;
        long writeNanos;
        System.gc(); // each timed phase starts on a collected heap, not paying for the last one's garbage
        try (DedupCache cache = cacheFor(backend, pairs)) {
            long start = System.nanoTime();
            for (long i = 0; i < pairs; i++) {
                cache.create(key(i), i, (i & 7) != 0);
            }
            createNanos = System.nanoTime() - start;
            start = System.nanoTime();
            try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
                long written = cache.writeSnapshot(out);
                out.flush();
                writeNanos = System.nanoTime() - start;
                if (written != pairs) {
                    throw new IllegalStateException(backend + ": wrote " + written + " pairs of " + pairs);
                }
            }
            bytes = Files.size(file);
        }
        long restoreNanos;
        System.gc();
        try (DedupCache restored = cacheFor(backend, pairs)) {
            long start = System.nanoTime();
            long created;
            try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
                created = restored.readSnapshot(in);
            }
            restoreNanos = System.nanoTime() - start;
            if (created != pairs) {
                throw new IllegalStateException(backend + ": restored " + created + " pairs of " + pairs);
            }
        }
        return new Result(backend, pairs, createNanos, writeNanos, restoreNanos, bytes);
    }

    /** Measurements of a size up to this many pairs are repeated {@value #REPEATS} times. */
    static final long REPEATED_UP_TO = 1_000_000;
    /** Repeats of a small size; each time its median is reported. */
    static final int REPEATS = 5;

    /** One measurement of a large size, or the medians (each time on its own) of {@value #REPEATS} of a small one. */
    static Result medianOf(String backend, long pairs, Path file) throws IOException {
        if (pairs > REPEATED_UP_TO) {
            return measure(backend, pairs, file);
        }
        long[] create = new long[REPEATS];
        long[] write = new long[REPEATS];
        long[] restore = new long[REPEATS];
        long bytes = 0;
        for (int i = 0; i < REPEATS; i++) {
            Result one = measure(backend, pairs, file);
            create[i] = one.createNanos();
            write[i] = one.writeNanos();
            restore[i] = one.restoreNanos();
            bytes = one.bytes();
        }
        return new Result(backend, pairs, median(create), median(write), median(restore), bytes);
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    /** Every backend (or the named ones) at every size, warmed up first; prints a line each. */
    public static List<Result> run(List<String> backends, long[] sizes, Path directory) throws IOException {
        List<Result> results = new ArrayList<>();
        Path file = Files.createTempFile(directory, "snapshot-bench", ".snapshot");
        try {
            for (String backend : backends) {
                measure(backend, Math.min(WARM_UP, sizes[0]), file);
                for (long size : sizes) {
                    Result result = medianOf(backend, size, file);
                    System.out.println(result.line());
                    results.add(result);
                }
            }
        } finally {
            Files.deleteIfExists(file);
        }
        return results;
    }

    /**
     * {@code snapshot [--sizes N,...] [BACKEND...]}; default sizes {@link #SIZES}, default backends
     * every DedupCache backend.
     */
    public static void main(String[] args) throws IOException {
        List<String> backends = new ArrayList<>();
        long[] sizes = SIZES;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--sizes") && i + 1 < args.length) {
                String[] parts = args[++i].split(",");
                sizes = new long[parts.length];
                for (int j = 0; j < parts.length; j++) {
                    sizes[j] = Long.parseLong(parts[j].trim());
                }
            } else if (Backends.DEDUP.contains(args[i])) {
                backends.add(args[i]);
            } else {
                throw new IllegalArgumentException("snapshot: unknown argument " + args[i] + " (backends: "
                        + Backends.DEDUP + ", --sizes N,...)");
            }
        }
        if (backends.isEmpty()) {
            backends.addAll(Backends.DEDUP);
        }
        System.out.println("# snapshot: create fresh, write (buffered file, no force), restore into a fresh cache;"
                + " one thread, one JVM");
        run(backends, sizes, Path.of(System.getProperty("java.io.tmpdir")));
    }
}
