package org.mbcache.examples;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToIntFunction;
import java.util.zip.CRC32C;
import org.mbcache.CacheEntry;
import org.mbcache.CacheStats;
import org.mbcache.MbCache;

/**
 * An example program: ext4's share-or-write pattern for extended-attribute blocks, on real bytes, with
 * an {@link MbCache} finding the block to share (the contract, section 7).
 *
 * <p>Many files carry the same attribute value (the same ACL, the same security label). ext4 stores
 * such a value once, in a block that up to a limit of files share, and uses mbcache to find that
 * block: the key is a hash of the block's bytes (here CRC32C, which ext4 also computes for its
 * blocks), the value the block number. Storing a value for a file:
 * <ol>
 *   <li>hash the bytes and walk the cached blocks with that hash ({@code findFirst}/{@code findNext});
 *   <li>for each candidate, compare the bytes: equal hashes do not mean equal contents;
 *   <li>on a match with room for one more sharer, take a share (under the block's lock, ext4's
 *       {@code lock_buffer}), {@code touch} the entry and release it; at the sharer limit, clear the
 *       entry's reusable flag so lookups stop offering the block;
 *   <li>with no match, write a new block and {@code create} its entry.
 * </ol>
 * When a file lets go of its block, the last sharer deletes the block, but only after
 * {@code deleteOrGet} removed the entry: if it hands the entry back, another thread is about to
 * share this block, so the leaver unlocks, waits until that thread is done ({@code waitUnused}),
 * releases, and starts over, since the block may have a new sharer by then (ext4 fix
 * 65f8b80053a1).
 *
 * <p>Thread-safe: any thread may store and drop. The block map stands in for the disk.
 *
 * <p>Run it: {@code java -jar mbcache-bench/target/mbcache-bench.jar example}.
 */
public final class SharedBlockStore implements AutoCloseable {

    /** One stored block: its bytes and how many files share it. Guarded by its own monitor. */
    private static final class Block {
        final byte[] bytes;
        final int hash;
        int sharers; // 0 once freed

        Block(byte[] bytes, int hash) {
            this.bytes = bytes;
            this.hash = hash;
            this.sharers = 1;
        }
    }

    private final MbCache cache = MbCache.create(10);
    private final Map<Long, Block> disk = new ConcurrentHashMap<>();
    private final AtomicLong nextBlock = new AtomicLong();
    private final AtomicLong sharesTaken = new AtomicLong();
    private final int maxSharers;
    private final ToIntFunction<byte[]> contentHash;

    /**
     * A store whose blocks hash their bytes with CRC32C.
     *
     * @param maxSharers how many files may share one block (ext4: 1024)
     */
    public SharedBlockStore(int maxSharers) {
        this(maxSharers, SharedBlockStore::crc32c);
    }

    /**
     * A store with the given content hash (a test passes a weak one to force collisions).
     *
     * @param maxSharers how many files may share one block
     * @param contentHash the key of a block's bytes
     * @throws IllegalArgumentException if {@code maxSharers < 1}
     */
    public SharedBlockStore(int maxSharers, ToIntFunction<byte[]> contentHash) {
        if (maxSharers < 1) {
            throw new IllegalArgumentException("maxSharers must be at least 1, was " + maxSharers);
        }
        this.maxSharers = maxSharers;
        this.contentHash = Objects.requireNonNull(contentHash, "contentHash");
    }

    /** The CRC32C of the bytes, as the cache's 32-bit key. */
    static int crc32c(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes);
        return (int) crc.getValue();
    }

    /**
     * Stores {@code content} for one more file: shares a block with the same bytes if one has room,
     * else writes a new block.
     *
     * @param content the attribute bytes
     * @return the number of the block that now holds them for this file
     */
    public long store(byte[] content) {
        int hash = contentHash.applyAsInt(content);
        for (CacheEntry entry = cache.findFirst(hash); entry != null; entry = cache.findNext(entry)) {
            Block block = disk.get(entry.value());
            if (block != null && share(block, content, entry)) {
                sharesTaken.incrementAndGet();
                cache.touch(entry);
                cache.release(entry);
                return entry.value();
            }
        }
        long number = nextBlock.getAndIncrement();
        disk.put(number, new Block(content.clone(), hash));
        cache.create(hash, number, maxSharers > 1);
        return number;
    }

    /** Takes one share of {@code block} if it holds {@code content} and has room; the caller holds {@code entry}. */
    private boolean share(Block block, byte[] content, CacheEntry entry) {
        synchronized (block) {
            if (block.sharers == 0 || block.sharers >= maxSharers || !Arrays.equals(block.bytes, content)) {
                return false;
            }
            block.sharers++;
            if (block.sharers == maxSharers) {
                entry.setReusable(false);
            }
            return true;
        }
    }

    /**
     * One file lets go of its block; the last one frees it and its cache entry.
     *
     * @param number a block number {@link #store} returned to this file
     * @throws InterruptedException if interrupted while waiting for a thread that is sharing the block
     * @throws IllegalArgumentException if no such block is stored
     */
    public void drop(long number) throws InterruptedException {
        Block block = disk.get(number);
        if (block == null) {
            throw new IllegalArgumentException("no block " + number);
        }
        while (true) {
            CacheEntry busy;
            synchronized (block) {
                if (block.sharers > 1) {
                    block.sharers--;
                    if (block.sharers == maxSharers - 1) {
                        makeReusable(block.hash, number);
                    }
                    return;
                }
                busy = cache.deleteOrGet(block.hash, number);
                if (busy == null) {
                    block.sharers = 0;
                    disk.remove(number);
                    return;
                }
            }
            // Someone holds the entry and may be about to share this block: let them finish, then look again.
            try {
                cache.waitUnused(busy);
            } finally {
                cache.release(busy);
            }
        }
    }

    private void makeReusable(int hash, long number) {
        CacheEntry entry = cache.get(hash, number);
        if (entry != null) {
            entry.setReusable(true);
            cache.release(entry);
        }
    }

    /**
     * The blocks stored now.
     *
     * @return the number of blocks on the disk
     */
    public int blockCount() {
        return disk.size();
    }

    /**
     * The files sharing a block.
     *
     * @param number a block number
     * @return its sharers, or 0 if the block is not stored
     */
    public int sharers(long number) {
        Block block = disk.get(number);
        if (block == null) {
            return 0;
        }
        synchronized (block) {
            return block.sharers;
        }
    }

    /**
     * The blocks written so far, freed ones included.
     *
     * @return how many times {@link #store} found no block to share
     */
    public long blocksWritten() {
        return nextBlock.get();
    }

    /**
     * The stores that shared an existing block instead of writing one.
     *
     * @return how many times {@link #store} took a share
     */
    public long sharesTaken() {
        return sharesTaken.get();
    }

    /**
     * The block cache's counters.
     *
     * @return a snapshot of the cache's statistics
     */
    public CacheStats cacheStats() {
        return cache.stats();
    }

    /**
     * The entries in the block cache.
     *
     * @return the cache's size
     */
    public long cachedBlocks() {
        return cache.size();
    }

    /** Closes the block cache. */
    @Override
    public void close() {
        cache.close();
    }

    /**
     * The example: 1,000 files get one of 10 security labels, at most {@value #EXAMPLE_MAX_SHARERS}
     * files a block, then every file is removed. Prints the blocks written and shared, how many
     * files share each block, the cache's counters, and what is left at the end (nothing).
     *
     * @param out where to print
     * @throws InterruptedException if interrupted while a block is dropped
     */
    static void run(PrintStream out) throws InterruptedException {
        int files = 1_000;
        int labels = 10;
        try (SharedBlockStore store = new SharedBlockStore(EXAMPLE_MAX_SHARERS)) {
            long[] blockOf = new long[files];
            for (int file = 0; file < files; file++) {
                byte[] label = ("security.selinux=system_u:object_r:label" + file % labels + "_t")
                        .getBytes(StandardCharsets.UTF_8);
                blockOf[file] = store.store(label);
            }
            out.printf("%d files, %d distinct labels, at most %d files a block%n", files, labels, EXAMPLE_MAX_SHARERS);
            out.printf("stored: %d blocks written, %d stores shared an existing block%n",
                    store.blocksWritten(), store.sharesTaken());
            StringBuilder sharers = new StringBuilder();
            for (long block = 0; block < store.blocksWritten(); block++) {
                sharers.append(block == 0 ? "" : " ").append(store.sharers(block));
            }
            out.printf("files sharing each block (blocks 0-%d): %s%n", store.blocksWritten() - 1, sharers);
            out.printf("cache: %d entries; %s%n", store.cachedBlocks(), describe(store.cacheStats()));
            for (long block : blockOf) {
                store.drop(block);
            }
            out.printf("all files removed: %d blocks, %d cache entries; %s%n", store.blockCount(), store.cachedBlocks(),
                    describe(store.cacheStats()));
        }
    }

    /** The example's sharer limit: small, so that the limit is reached and a second block per label is written. */
    static final int EXAMPLE_MAX_SHARERS = 64;

    /** The counters the example shows, in words. */
    static String describe(CacheStats s) {
        return String.format(Locale.ROOT, "creates %d, lookups %d hits + %d misses (hit rate %.1f%%), deletes %d",
                s.creates(), s.lookupHits(), s.lookupMisses(), 100 * s.hitRate(), s.deletes());
    }

    /**
     * Runs the example.
     *
     * @param args ignored
     * @throws InterruptedException if interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        run(System.out);
    }
}
