package org.mbcache.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;

/**
 * A macro-benchmark modelled on the 2016 "xattr-bench" behind the mbcache rewrite: T threads
 * each set an xattr on F files of their own, over and over, the value drawn from V distinct ones.
 * Each set follows ext4's pattern (the contract, {@code docs/contract.md}, section 7) against a simulated block store:
 * <ol>
 *   <li>hash the value; {@code findFirst(hash)}; for each candidate lock its block, compare the
 *       content, and share it if it matches and has fewer than {@value #MAX_SHARERS} sharers
 *       (clearing {@code reusable} when it reaches the limit); {@code touch}, release; else
 *       {@code findNext};</li>
 *   <li>no match: write a new block and {@code create(hash, block, true)};</li>
 *   <li>release the file's old block: the last sharer removes it with {@code deleteOrGet}
 *       ({@code waitUnused}, release and retry when someone holds it) and frees it; otherwise the
 *       count drops, and a block leaving the limit gets {@code reusable} back
 *       ({@code get} + {@code setReusable(true)}).</li>
 * </ol>
 * Block costs follow ext4: writing a new block allocates a 4 KiB block image, copies the value in
 * and CRC32C-checksums the block; changing a block's sharer count re-checksums it (ext4 does
 * {@code ext4_xattr_block_csum_set} on every refcount change). No I/O is simulated, so this
 * measures CPU cost only; "blocks stored" is the disk space side. Backend {@code none} has no
 * cache: every set writes a new block and frees the old one.
 */
public final class XattrBench {
    public static final int FILES_PER_THREAD = 64;
    /** ext4's EXT4_XATTR_REFCOUNT_MAX is 1024; scaled down to the file count so the limit is reached. */
    public static final int MAX_SHARERS = 16;
    public static final int BLOCK_SIZE = 4096;
    public static final int VALUE_SIZE = 64;
    public static final int[] THREADS = {1, 2, 4};
    public static final int[] VALUES = {10, 1000};
    public static final List<String> BACKENDS =
            List.of(Backends.MBCACHE, Backends.MBCACHE_ALLOCFIRST, Backends.CAFFEINE, Backends.NONE);

    /** One configuration's result. */
    public record Result(String backend, int threads, int values, double opsPerSec, long blocksStored, String check) {
        /** The line: {@code XATTR} and the record as JSON. */
        private static final ResultLine<Result> LINE = ResultLine.of(Result.class, "XATTR");

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
    }

    static final class Block {
        final byte[] data;
        final int hash;
        int refcount = 1; // guarded by this
        boolean alive = true; // guarded by this

        Block(byte[] data, int hash) {
            this.data = data;
            this.hash = hash;
        }
    }

    /** The simulated file system: block slots, a free-slot stack, each file's block. */
    static final class Fs {
        final DedupCache cache;
        final Block[] slots;
        final int[] free;
        int freeTop;
        final int[] fileBlock;
        final int[] fileValue;
        final byte[][] values;

        Fs(DedupCache cache, int files, int threads, byte[][] values) {
            this.cache = cache;
            int capacity = files + threads + 8;
            slots = new Block[capacity];
            free = new int[capacity];
            for (int i = 0; i < capacity; i++) {
                free[i] = capacity - 1 - i;
            }
            freeTop = capacity;
            fileBlock = new int[files];
            Arrays.fill(fileBlock, -1);
            fileValue = new int[files];
            this.values = values;
        }

        synchronized int allocSlot() {
            return free[--freeTop];
        }

        synchronized void freeSlot(int slot) {
            free[freeTop++] = slot;
        }

        synchronized long blocksStored() {
            return slots.length - freeTop;
        }
    }

    private XattrBench() {}

    static int hash(byte[] v) {
        int h = 0;
        for (byte b : v) {
            h = (h << 5) ^ (h >>> 27) ^ b; // ext4_xattr_hash_entry's rotate-xor
        }
        return h;
    }

    static void checksum(CRC32C crc, byte[] block) {
        crc.reset();
        crc.update(block, 0, block.length);
    }

    /** One "setxattr" of value {@code vi} on file {@code f}. */
    static void set(Fs fs, int f, int vi, CRC32C crc) throws InterruptedException {
        byte[] value = fs.values[vi];
        int hash = hash(value);
        int slot = fs.cache == null ? -1 : share(fs, hash, value, crc);
        if (slot < 0) {
            slot = writeNew(fs, hash, value, crc);
        }
        int old = fs.fileBlock[f];
        fs.fileBlock[f] = slot;
        fs.fileValue[f] = vi;
        if (old >= 0) {
            releaseBlock(fs, old, crc);
        }
    }

    static int share(Fs fs, int hash, byte[] value, CRC32C crc) {
        DedupCache cache = fs.cache;
        CacheEntry e = cache.findFirst(hash);
        while (e != null) {
            int slot = (int) e.value();
            Block b = fs.slots[slot];
            boolean shared = false;
            synchronized (b) {
                if (b.alive && b.refcount < MAX_SHARERS && Arrays.equals(b.data, 0, VALUE_SIZE, value, 0, VALUE_SIZE)) {
                    b.refcount++;
                    if (b.refcount >= MAX_SHARERS) {
                        e.setReusable(false);
                    }
                    checksum(crc, b.data);
                    shared = true;
                }
            }
            if (shared) {
                cache.touch(e);
                cache.release(e);
                return slot;
            }
            e = cache.findNext(e);
        }
        return -1;
    }

    static int writeNew(Fs fs, int hash, byte[] value, CRC32C crc) {
        int slot = fs.allocSlot();
        byte[] data = new byte[BLOCK_SIZE];
        System.arraycopy(value, 0, data, 0, VALUE_SIZE);
        checksum(crc, data);
        fs.slots[slot] = new Block(data, hash);
        if (fs.cache != null) {
            fs.cache.create(hash, slot, true);
        }
        return slot;
    }

    static void releaseBlock(Fs fs, int slot, CRC32C crc) throws InterruptedException {
        DedupCache cache = fs.cache;
        Block b = fs.slots[slot];
        for (;;) {
            CacheEntry busy = null;
            synchronized (b) {
                if (b.refcount > 1) {
                    b.refcount--;
                    checksum(crc, b.data);
                    if (cache != null && b.refcount == MAX_SHARERS - 1) {
                        CacheEntry ce = cache.get(b.hash, slot);
                        if (ce != null) {
                            ce.setReusable(true);
                            cache.release(ce);
                        }
                    }
                    return;
                }
                if (cache != null) {
                    busy = cache.deleteOrGet(b.hash, slot);
                }
                if (busy == null) {
                    b.refcount = 0;
                    b.alive = false;
                }
            }
            if (busy == null) {
                fs.freeSlot(slot);
                return;
            }
            // someone is about to reuse the block: wait until they are done, then look again
            cache.waitUnused(busy);
            cache.release(busy);
        }
    }

    /** Checks the final state: every file's block is alive, holds its value, and counts add up. */
    static String check(Fs fs) {
        long sharers = 0;
        for (int f = 0; f < fs.fileBlock.length; f++) {
            int s = fs.fileBlock[f];
            if (s < 0) {
                continue;
            }
            Block b = fs.slots[s];
            synchronized (b) {
                if (!b.alive || !Arrays.equals(b.data, 0, VALUE_SIZE, fs.values[fs.fileValue[f]], 0, VALUE_SIZE)) {
                    return "BAD:file" + f;
                }
            }
        }
        long alive = 0;
        for (Block b : fs.slots) {
            if (b != null) {
                synchronized (b) {
                    if (b.alive) {
                        alive++;
                        sharers += b.refcount;
                    }
                }
            }
        }
        long files = Arrays.stream(fs.fileBlock).filter(s -> s >= 0).count();
        if (sharers != files || alive != fs.blocksStored()) {
            return "BAD:counts(sharers=" + sharers + ",files=" + files + ",alive=" + alive + ")";
        }
        return "ok";
    }

    static byte[][] values(int v) {
        SplittableRandom rnd = new SplittableRandom(2016);
        byte[][] out = new byte[v][VALUE_SIZE];
        for (byte[] b : out) {
            for (int i = 0; i < b.length; i++) {
                b[i] = (byte) rnd.nextInt(256);
            }
        }
        return out;
    }

    /** Runs one configuration: warm up, then measure for {@code measureMs}. */
    public static Result run(String backend, int threads, int v, long warmMs, long measureMs) throws InterruptedException {
        DedupCache cache = Backends.NONE.equals(backend) ? null : Backends.dedup(backend);
        Fs fs = new Fs(cache, threads * FILES_PER_THREAD, threads, values(v));
        AtomicLong[] counts = new AtomicLong[threads];
        Thread[] workers = new Thread[threads];
        AtomicLong failures = new AtomicLong();
        java.util.concurrent.atomic.AtomicBoolean stopFlag = new java.util.concurrent.atomic.AtomicBoolean();
        for (int t = 0; t < threads; t++) {
            int first = t * FILES_PER_THREAD;
            AtomicLong count = counts[t] = new AtomicLong();
            SplittableRandom rnd = new SplittableRandom(t * 31L + v);
            int[] seqFile = new int[1 << 14];
            int[] seqValue = new int[1 << 14];
            for (int i = 0; i < seqFile.length; i++) {
                seqFile[i] = first + rnd.nextInt(FILES_PER_THREAD);
                seqValue[i] = rnd.nextInt(v);
            }
            workers[t] = new Thread(() -> {
                CRC32C crc = new CRC32C();
                long ops = 0;
                try {
                    while (!stopFlag.getOpaque()) {
                        int i = (int) ops & (seqFile.length - 1);
                        set(fs, seqFile[i], seqValue[i], crc);
                        count.lazySet(++ops);
                    }
                } catch (Throwable e) {
                    failures.incrementAndGet();
                    e.printStackTrace();
                }
            }, "xattr-" + t);
        }
        for (Thread w : workers) {
            w.start();
        }
        Thread.sleep(warmMs);
        long c0 = sum(counts);
        long t0 = System.nanoTime();
        Thread.sleep(measureMs);
        long c1 = sum(counts);
        long t1 = System.nanoTime();
        stopFlag.set(true);
        for (Thread w : workers) {
            w.join();
        }
        String check = failures.get() > 0 ? "BAD:exception" : check(fs);
        long blocks = fs.blocksStored();
        if (cache != null) {
            cache.close();
        }
        return new Result(backend, threads, v, (c1 - c0) * 1e9 / (t1 - t0), blocks, check);
    }

    static long sum(AtomicLong[] counts) {
        long s = 0;
        for (AtomicLong c : counts) {
            s += c.get();
        }
        return s;
    }

    /** Entry point of a child JVM: {@code backend [warmMs measureMs]}; prints one XATTR line per configuration. */
    public static void main(String[] args) throws InterruptedException {
        String backend = args[0];
        long warm = args.length > 1 ? Long.parseLong(args[1]) : 300;
        long measure = args.length > 2 ? Long.parseLong(args[2]) : 700;
        // throw-away rounds so the first configuration is not the JIT's warm-up
        run(backend, 2, 10, 2 * warm, 1);
        run(backend, 2, 1000, 2 * warm, 1);
        for (int v : VALUES) {
            for (int t : THREADS) {
                System.out.println(run(backend, t, v, warm, measure).line());
            }
        }
    }

    /** Results as a markdown table: ops/s and blocks stored per (V, T), one column pair per backend. */
    public static String markdown(List<Result> results) {
        StringBuilder b = new StringBuilder();
        b.append("| V | T |");
        List<String> backends = new ArrayList<>();
        for (String be : BACKENDS) {
            if (results.stream().anyMatch(r -> r.backend().equals(be))) {
                backends.add(be);
                b.append(' ').append(be).append(" ops/s | ").append(be).append(" blocks |");
            }
        }
        b.append(" mbcache ÷ caffeine | mbcache ÷ none |\n|---:|---:|");
        for (int i = 0; i < backends.size(); i++) {
            b.append("---:|---:|");
        }
        b.append("---:|---:|\n");
        for (int v : VALUES) {
            for (int t : THREADS) {
                b.append("| ").append(v).append(" | ").append(t).append(" |");
                for (String be : backends) {
                    Result r = find(results, be, t, v);
                    b.append(r == null ? " — | — |" : String.format(Locale.ROOT, " %.0f | %d%s |", r.opsPerSec(),
                            r.blocksStored(), r.check().equals("ok") ? "" : " " + r.check()));
                }
                b.append(' ').append(ratio(results, Backends.CAFFEINE, t, v)).append(" | ")
                        .append(ratio(results, Backends.NONE, t, v)).append(" |\n");
            }
        }
        b.append("\nT threads × ").append(FILES_PER_THREAD).append(" files each, values from V distinct ")
                .append(VALUE_SIZE).append("-byte values, ").append(MAX_SHARERS)
                .append(" sharers per block at most; blocks stored = live blocks at the end.\n");
        return b.toString();
    }

    static String ratio(List<Result> results, String other, int t, int v) {
        Result m = find(results, Backends.MBCACHE, t, v);
        Result o = find(results, other, t, v);
        if (m == null || o == null || !(o.opsPerSec() > 0)) {
            return "—";
        }
        return String.format(Locale.ROOT, "%.2f", m.opsPerSec() / o.opsPerSec());
    }

    public static Result find(List<Result> results, String backend, int t, int v) {
        for (Result r : results) {
            if (r.backend().equals(backend) && r.threads() == t && r.values() == v) {
                return r;
            }
        }
        return null;
    }
}
