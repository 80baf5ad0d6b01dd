package org.mbcache.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;
import org.mbcache.MbCache;
import org.mbcache.caffeine.CaffeineDedupCache;

/**
 * The real-file found-share: what a chain cap costs an honest workload. Not timed.
 *
 * <p>The blocks are the files of a source tree cut into 4 KiB blocks, each file starting on a
 * block and its last block padded with zeros, as a file system stores them: the JDK's
 * {@code lib/src.zip} when it exists ({@link #jdkSources()}), else the {@code .java} files under a
 * directory (build output and hidden directories left out). Each block
 * goes through ext4's pattern on a cache of ext4's size ({@value #BUCKET_BITS} bucket bits,
 * {@value #MAX_ENTRIES} entries): key = CRC32C of the block; walk {@code findFirst}/{@code findNext}
 * comparing contents (a block's SHA-256 stands for its bytes); on a match the duplicate is found,
 * {@code touch}, {@code release}; else the block is written and {@code create}d. Reclaim runs on the
 * calling thread, so a run is deterministic.
 *
 * <p>The figure is the share of duplicates found with the library's default chain cap over the
 * share found with an unbounded one ({@code chainCap(Integer.MAX_VALUE)}); the target is 99.9%.
 */
public final class FoundShare {
    /** The block size: a file system's 4 KiB. */
    public static final int BLOCK = 4096;
    /** ext4's {@code bucket_bits} for its xattr block cache: 1,024 buckets. */
    public static final int BUCKET_BITS = 10;
    /** ext4's cache size: 16 entries a bucket. */
    public static final int MAX_ENTRIES = 16_384;
    /** At most this many blocks are read (256 MiB of files), to bound the run. */
    public static final int MAX_BLOCKS = 1 << 16;
    private static final Executor SAME_THREAD = Runnable::run;

    private FoundShare() {}

    /**
     * One backend's figures.
     *
     * @param duplicates blocks whose contents an earlier block had (what a perfect index could find)
     * @param foundCapped duplicates found with the default chain cap
     * @param foundUnbounded duplicates found with an unbounded chain
     */
    public record Result(String backend, String source, int blocks, int duplicates, int foundCapped, int foundUnbounded) {
        /** Found with the cap over found without it; NaN when the unbounded index found none. */
        public double share() {
            return foundUnbounded == 0 ? Double.NaN : (double) foundCapped / foundUnbounded;
        }

        /** The line: {@code FOUNDSHARE} and the record as JSON. */
        private static final ResultLine<Result> LINE = ResultLine.of(Result.class, "FOUNDSHARE");

        /** The line the child JVM prints. */
        public String line() {
            return LINE.line(this);
        }

        /**
         * Reads back a {@link #line()}.
         *
         * @throws IllegalArgumentException if it is not one
         */
        public static Result parse(String line) {
            return LINE.parse(line);
        }
    }

    /** A block as its key and its contents' SHA-256 (the compare of ext4's walk). */
    record Block(int crc32c, ByteBuffer digest) {}

    /**
     * The running JDK's {@code lib/src.zip}, else that of another JDK installed beside it (a JDK
     * package without its sources leaves a dangling link), or null if none has one.
     */
    public static Path jdkSources() {
        Path home = Path.of(System.getProperty("java.home"));
        Path zip = home.resolve("lib").resolve("src.zip");
        if (Files.isRegularFile(zip)) {
            return zip;
        }
        Path parent = home.toAbsolutePath().getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            return null;
        }
        try (Stream<Path> jdks = Files.list(parent)) {
            return jdks.sorted().map(j -> j.resolve("lib").resolve("src.zip")).filter(Files::isRegularFile)
                    .findFirst().orElse(null);
        } catch (IOException | UncheckedIOException e) {
            return null;
        }
    }

    /** The blocks of a zip's entries or of the {@code .java} files under a directory, in a fixed order. */
    static List<Block> blocks(Path source, int maxBlocks) throws IOException {
        List<Block> out = new ArrayList<>();
        MessageDigest sha = sha256();
        if (Files.isDirectory(source)) {
            List<Path> files;
            try (Stream<Path> s = Files.walk(source)) {
                files = s.filter(p -> p.toString().endsWith(".java") && Files.isRegularFile(p) && !generated(source, p))
                        .sorted().toList();
            }
            for (Path f : files) {
                if (!addFile(Files.readAllBytes(f), out, sha, maxBlocks)) {
                    break;
                }
            }
        } else {
            try (ZipFile zip = new ZipFile(source.toFile())) {
                List<? extends ZipEntry> entries = zip.stream().filter(e -> !e.isDirectory()).toList();
                for (ZipEntry e : entries) {
                    try (InputStream in = zip.getInputStream(e)) {
                        if (!addFile(in.readAllBytes(), out, sha, maxBlocks)) {
                            break;
                        }
                    }
                }
            }
        }
        return out;
    }

    /** Build output ({@code target/}) and hidden directories ({@code .git}) are not part of the tree. */
    static boolean generated(Path root, Path file) {
        for (Path part : root.relativize(file)) {
            String name = part.toString();
            if (name.equals("target") || name.startsWith(".") && name.length() > 1) {
                return true;
            }
        }
        return false;
    }

    private static boolean addFile(byte[] file, List<Block> out, MessageDigest sha, int maxBlocks) {
        for (int off = 0; off < file.length; off += BLOCK) {
            if (out.size() >= maxBlocks) {
                return false;
            }
            byte[] block = new byte[BLOCK]; // zero-padded tail, as on disk
            System.arraycopy(file, off, block, 0, Math.min(BLOCK, file.length - off));
            CRC32C crc = new CRC32C();
            crc.update(block);
            out.add(new Block((int) crc.getValue(), ByteBuffer.wrap(sha.digest(block))));
        }
        return true;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** Blocks whose contents an earlier block had. */
    static int duplicates(List<Block> blocks) {
        Set<ByteBuffer> seen = new HashSet<>();
        int d = 0;
        for (Block b : blocks) {
            if (!seen.add(b.digest())) {
                d++;
            }
        }
        return d;
    }

    /** ext4's share-or-write over the blocks; returns the duplicates found. The cache is closed. */
    static int found(DedupCache cache, List<Block> blocks) {
        try (cache) {
            List<ByteBuffer> written = new ArrayList<>();
            int found = 0;
            for (Block b : blocks) {
                found += shareOrWrite(cache, b, written);
            }
            return found;
        }
    }

    /**
     * ext4's share-or-write over the blocks, with a restart at block {@code restartAt}: there the
     * cache is snapshotted, closed, and a new cache ({@link #cache(String, int)}, default chain cap)
     * restored from the snapshot carries on. The blocks written before the restart stay written (a
     * file system's blocks survive its cache). Returns the duplicates found.
     */
    static int foundWithRestart(String backend, List<Block> blocks, int restartAt) throws IOException {
        List<ByteBuffer> written = new ArrayList<>();
        int found = 0;
        DedupCache cache = cache(backend, 0);
        try {
            for (int i = 0; i < blocks.size(); i++) {
                if (i == restartAt) {
                    java.io.ByteArrayOutputStream snapshot = new java.io.ByteArrayOutputStream();
                    cache.writeSnapshot(snapshot);
                    cache.close();
                    cache = cache(backend, 0);
                    cache.readSnapshot(new java.io.ByteArrayInputStream(snapshot.toByteArray()));
                }
                found += shareOrWrite(cache, blocks.get(i), written);
            }
        } finally {
            cache.close();
        }
        return found;
    }

    /** One block through ext4's pattern: 1 if its contents were found in the cache, else 0 (written). */
    private static int shareOrWrite(DedupCache cache, Block b, List<ByteBuffer> written) {
        CacheEntry e = cache.findFirst(b.crc32c());
        while (e != null && !written.get((int) e.value()).equals(b.digest())) {
            e = cache.findNext(e);
        }
        if (e != null) {
            cache.touch(e);
            cache.release(e);
            return 1;
        }
        written.add(b.digest());
        cache.create(b.crc32c(), written.size() - 1, true);
        return 0;
    }

    /**
     * {@code foundshare --restart [SOURCE]}: for each backend, the duplicates found by a run that
     * restarts halfway through the blocks (snapshot, new cache, restore) against a run that does
     * not, both with the default chain cap, as shares of the duplicates; the target is a difference
     * within 1 percentage point.
     */
    static void restart(Path source, List<Block> blocks) throws IOException {
        int duplicates = duplicates(blocks);
        for (String backend : List.of(Backends.MBCACHE, Backends.CAFFEINE)) {
            int uninterrupted = found(cache(backend, 0), blocks);
            int restarted = foundWithRestart(backend, blocks, blocks.size() / 2);
            double kept = 100.0 * uninterrupted / duplicates;
            double afterRestart = 100.0 * restarted / duplicates;
            System.out.printf(Locale.ROOT, "FOUNDSHARE-RESTART %s %d %d %d %d %s%n", backend, blocks.size(), duplicates,
                    uninterrupted, restarted, source.toString().replace(' ', '_'));
            System.out.printf(Locale.ROOT, "%s: %d blocks, %d duplicates; found %.2f%% without a restart, %.2f%% with one"
                    + " halfway (snapshot, new cache, restore): %+.2f percentage points (target: within 1) %s%n",
                    backend, blocks.size(), duplicates, kept, afterRestart, afterRestart - kept,
                    Math.abs(afterRestart - kept) <= 1 ? "met" : "MISSED");
        }
    }

    /**
     * A cache of ext4's size for a backend, with reclaim on the calling thread.
     *
     * @param chainCap the cap, or 0 for the library's default
     */
    static DedupCache cache(String backend, int chainCap) {
        switch (backend) {
            case Backends.MBCACHE: {
                MbCache.Builder b = MbCache.builder().bucketBits(BUCKET_BITS).maxEntries(MAX_ENTRIES)
                        .executor(SAME_THREAD).hashSeed(Backends.HASH_SEED);
                return (chainCap > 0 ? b.chainCap(chainCap) : b).build();
            }
            case Backends.CAFFEINE: {
                CaffeineDedupCache.Builder b = CaffeineDedupCache.builder().maxEntries(MAX_ENTRIES).executor(SAME_THREAD);
                return (chainCap > 0 ? b.chainCap(chainCap) : b).build();
            }
            default:
                throw new IllegalArgumentException("found-share runs mbcache or caffeine, not " + backend);
        }
    }

    /** Both figures for one backend over the given blocks. */
    static Result measure(String backend, String source, List<Block> blocks) {
        return new Result(backend, source, blocks.size(), duplicates(blocks),
                found(cache(backend, 0), blocks), found(cache(backend, Integer.MAX_VALUE), blocks));
    }

    /**
     * {@code FoundShare [--restart] [SOURCE]}: SOURCE is a zip or a directory of {@code .java} files; default
     * the JDK's {@code lib/src.zip}, else the current directory. Prints one FOUNDSHARE line per
     * backend and a sentence each; with {@code --restart}, the restart comparison ({@link #restart}) instead.
     */
    public static void main(String[] args) throws IOException {
        boolean restart = args.length > 0 && args[0].equals("--restart");
        if (restart) {
            args = java.util.Arrays.copyOfRange(args, 1, args.length);
        }
        Path source = args.length > 0 ? Path.of(args[0]) : jdkSources() != null ? jdkSources() : Path.of(".");
        List<Block> blocks;
        try {
            blocks = blocks(source, MAX_BLOCKS);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        if (restart) {
            restart(source, blocks);
            return;
        }
        for (String backend : List.of(Backends.MBCACHE, Backends.CAFFEINE)) {
            Result r = measure(backend, source.toString(), blocks);
            System.out.println(r.line());
            System.out.printf(Locale.ROOT, "%s: %d blocks, %d duplicates; found %d with the default chain cap, %d unbounded:"
                    + " %.2f%% of what an unbounded index finds%n", backend, r.blocks(), r.duplicates(), r.foundCapped(),
                    r.foundUnbounded(), 100 * r.share());
        }
    }
}
