package org.mbcache;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.mbcache.internal.Snapshots;

/**
 * A concurrent deduplication cache: the contract of Linux's {@code fs/mbcache.c}, which ext2/ext4 use
 * to find an existing extended-attribute block with the same content before writing a new one.
 *
 * <p><b>Data.</b> An entry is a pair {@code (key, value)}: the key is a 32-bit hash of some content,
 * the value a 64-bit id of the thing that holds it (a block number). Keys repeat (hash collisions);
 * pairs do not. Each entry has a {@linkplain CacheEntry#reusable() reusable} flag (only reusable
 * entries are offered by {@link #findFirst}/{@link #findNext}) and a referenced flag (set by
 * {@link #touch}, it buys the entry a second chance in reclaim).
 *
 * <p><b>References.</b> The cache holds one reference to every entry it contains; each entry handed
 * to a caller carries one more, which the caller gives back with {@link #release} (or
 * {@link CacheEntry#close()}). Only reclaim and {@link #deleteOrGet} remove an entry, and only when
 * nobody but the cache holds it, so an entry somebody holds is never removed. That is the guarantee
 * ext4's journal depends on.
 *
 * <p><b>Misuse</b> that the cache can see gets an exception, never corruption: {@code null}
 * arguments are a {@link NullPointerException} naming the argument, an entry of another cache an
 * {@link IllegalArgumentException}, and any call after {@link #close()} an
 * {@link IllegalStateException}. A reference count cannot tell holders apart, so what is detected
 * about releases is exactly this: a {@link #release}, {@link #findNext} or {@link CacheEntry#close()}
 * of an entry whose count shows no caller reference at all (only the cache's own, or none because
 * the entry was removed) is an {@link IllegalStateException}, and the cache's own reference
 * survives. What cannot be detected: a holder that releases twice while another holder still holds
 * the entry. The count then looks legitimate, the entry may be removed ({@link #deleteOrGet},
 * reclaim) while the other holder still uses it, and only that holder's own release, later, is
 * reported as the over-release. Release every reference exactly once (try-with-resources on
 * {@link CacheEntry} does). A backend that finds its own invariants broken (an entry somebody holds
 * removed by its eviction) throws an {@link AssertionError} from the call that finds it or, where
 * that call cannot throw, from every later call but {@link #close()}; it never only logs it.
 *
 * <p><b>Failures.</b> On the kernel port an {@link OutOfMemoryError} (or any other
 * {@link Throwable}) from an allocation inside an operation reaches the caller and leaves the cache
 * consistent: no lock held, no reference leaked, no entry half created; the Caffeine backend keeps
 * to that in its own code, but Caffeine allocates inside its own computes (a failure there can
 * leave {@link #size()} one above the entries held). A
 * {@link StackOverflowError} inside an operation is survived by neither backend: it can leave a
 * lock held (a bucket's bit, the LRU lock, Caffeine's eviction lock) and later calls waiting for it
 * forever. Do not call the cache at the edge of the stack.
 *
 * <p>Implementations: the kernel port in two layouts, {@link MbCache} (an object per entry) and
 * {@link CompactMbCache} (primitive pages, no object per entry), and
 * {@link org.mbcache.caffeine.CaffeineDedupCache}. All methods are safe to call from any thread.
 */
public interface DedupCache extends AutoCloseable {

    /**
     * Inserts the pair unless it is already cached or being created by another thread right now
     * (kernel {@code mb_cache_entry_create}). May first run or schedule a reclaim pass when the cache
     * is large. The new entry is not handed to the caller: no reference needs releasing.
     *
     * @param key the content hash
     * @param value the id of the thing holding the content
     * @param reusable whether {@link #findFirst}/{@link #findNext} may offer the entry
     * @return {@code true} if this call inserted the pair; {@code false} if it was a duplicate
     *     (kernel {@code -EBUSY})
     * @throws IllegalStateException if the cache is closed
     */
    boolean create(int key, long value, boolean reusable);

    /**
     * The newest reusable live entry with this key, referenced for the caller (kernel
     * {@code mb_cache_entry_find_first}).
     *
     * @param key the content hash
     * @return the entry, or {@code null} if there is none
     * @throws IllegalStateException if the cache is closed
     */
    CacheEntry findFirst(int key);

    /**
     * The next reusable live entry with {@code entry}'s key, older than {@code entry} in the chain, or
     * from the chain head if {@code entry} was removed meanwhile (kernel {@code mb_cache_entry_find_next}).
     * Releases the caller's reference to {@code entry} in all cases.
     *
     * @param entry an entry the caller holds, as returned by {@code findFirst} or {@code findNext}
     * @return the next entry, referenced for the caller, or {@code null} at the end of the chain
     * @throws NullPointerException if {@code entry} is null
     * @throws IllegalArgumentException if {@code entry} belongs to another cache
     * @throws IllegalStateException if the caller holds no reference to {@code entry}, or the cache is closed
     */
    CacheEntry findNext(CacheEntry entry);

    /**
     * The entry with exactly this pair, reusable or not, referenced for the caller (kernel
     * {@code mb_cache_entry_get}).
     *
     * @param key the content hash
     * @param value the id of the thing holding the content
     * @return the entry, or {@code null} if the pair is not cached
     * @throws IllegalStateException if the cache is closed
     */
    CacheEntry get(int key, long value);

    /**
     * Removes the pair if nobody but the cache holds it, else hands it to the caller (kernel
     * {@code mb_cache_entry_delete_or_get}). A returned entry means somebody is using the pair right
     * now; ext4 then calls {@link #waitUnused}, releases, and tries again.
     *
     * @param key the content hash
     * @param value the id of the thing holding the content
     * @return {@code null} if the pair was removed or was not cached; otherwise the entry, referenced
     *     for the caller
     * @throws IllegalStateException if the cache is closed
     */
    CacheEntry deleteOrGet(int key, long value);

    /**
     * Blocks until only the cache and the caller hold {@code entry} (kernel
     * {@code mb_cache_entry_wait_unused}). Every release that brings the count down to that wakes the
     * waiters; no wake-up is lost. The caller must hold a reference to {@code entry}.
     *
     * <p>Interruption, in every backend: like {@code Lock.lockInterruptibly}, a thread whose interrupt
     * status is set on entry gets an {@link InterruptedException} even when {@code entry} is already
     * unused, and so does a thread interrupted while it waits; either way its interrupt status is
     * cleared.
     *
     * @param entry an entry the caller holds
     * @throws InterruptedException if the thread is interrupted on entry or while waiting (its
     *     interrupt status is then cleared)
     * @throws NullPointerException if {@code entry} is null
     * @throws IllegalArgumentException if {@code entry} belongs to another cache
     * @throws IllegalStateException if the cache is closed (also when it is closed during the wait)
     */
    void waitUnused(CacheEntry entry) throws InterruptedException;

    /**
     * Like {@link #waitUnused(CacheEntry)}, giving up after {@code timeout}. Interruption as there: a
     * thread whose interrupt status is set on entry gets an {@link InterruptedException} even when
     * {@code entry} is already unused or {@code timeout} is zero, and its interrupt status is cleared.
     *
     * @param entry an entry the caller holds
     * @param timeout the longest time to wait; zero or less does not wait
     * @param unit the unit of {@code timeout}
     * @return {@code true} if only the cache and the caller hold {@code entry}; {@code false} if the
     *     time ran out first
     * @throws InterruptedException if the thread is interrupted on entry or while waiting (its
     *     interrupt status is then cleared)
     * @throws NullPointerException if {@code entry} or {@code unit} is null
     * @throws IllegalArgumentException if {@code entry} belongs to another cache
     * @throws IllegalStateException if the cache is closed (also when it is closed during the wait)
     */
    boolean waitUnused(CacheEntry entry, long timeout, TimeUnit unit) throws InterruptedException;

    /**
     * Marks {@code entry} as recently used, so that the next reclaim pass gives it a second chance
     * (kernel {@code mb_cache_entry_touch}). Never loses a concurrent {@link CacheEntry#setReusable}.
     *
     * @param entry an entry the caller holds
     * @throws NullPointerException if {@code entry} is null
     * @throws IllegalArgumentException if {@code entry} belongs to another cache
     * @throws IllegalStateException if the cache is closed
     */
    void touch(CacheEntry entry);

    /**
     * Gives back the caller's reference to {@code entry} (kernel {@code mb_cache_entry_put}).
     *
     * @param entry an entry the caller holds
     * @throws NullPointerException if {@code entry} is null
     * @throws IllegalArgumentException if {@code entry} belongs to another cache
     * @throws IllegalStateException if {@code entry} is released more often than it was handed out
     *     (the cache's own reference survives), or the cache is closed
     */
    void release(CacheEntry entry);

    /**
     * The number of entries in the cache (the shrinker's {@code count_objects}). Never negative; while
     * creates, deletes or reclaim passes run, it differs from the number of live entries by at most
     * the entries those operations in flight add or remove (a pass may count its frees at its end),
     * and it is exact once they are done
     * (the kernel's {@code c_entry_count} lags its chains the same way). Entries somebody holds count
     * too.
     *
     * @return the entry count
     * @throws IllegalStateException if the cache is closed
     */
    long size();

    /**
     * Runs one reclaim pass over up to {@code nrToScan} entries (the shrinker's {@code scan_objects}):
     * unused entries are freed oldest first, referenced or held ones get a second chance. Returns
     * early once nothing more can be freed, so {@code shrink(Long.MAX_VALUE)} terminates.
     *
     * @param nrToScan the most entries to look at
     * @return the number of entries freed
     * @throws IllegalArgumentException if {@code nrToScan} is negative
     * @throws IllegalStateException if the cache is closed
     */
    long shrink(long nrToScan);

    /**
     * A snapshot of the cache's counters.
     *
     * @return the counters now
     * @throws IllegalStateException if the cache is closed
     */
    CacheStats stats();

    /**
     * Writes the cached pairs to {@code out} as a snapshot ({@code docs/snapshot-format.md}): each
     * pair with its reusable flag, oldest first in the backend's reclaim order, which
     * {@link #readSnapshot(InputStream)} creates them in (how much of the order an empty cache gets
     * back is each backend's: {@link MbCache} all of it). The format
     * depends on no backend and on no secret of the cache (the hash seed is never written): a
     * snapshot of one backend restores into any other.
     *
     * <p>Under load: other threads may create, delete and look up meanwhile, and are not made to
     * wait for the snapshot's I/O. A pair cached for the whole call is in the snapshot exactly once;
     * a pair created or removed during the call may or may not be (one removed and created again
     * meanwhile may be written twice, once per entry; a restore creates it once). The snapshot
     * takes no reference: held entries stay held by their holders, and reclaim never waits for a
     * snapshot. Each backend says how it reads its order.
     *
     * <p>{@code out} is written to but neither flushed beyond its own buffering nor closed. If
     * {@code out} throws, the exception reaches the caller and the cache is unchanged; what was
     * written is not a valid snapshot (it has no trailer).
     *
     * @param out where the snapshot goes
     * @return the number of pairs written
     * @throws IOException if {@code out} throws
     * @throws java.io.InterruptedIOException if the thread is interrupted while the call waits for
     *     another snapshot of the cache, in a backend that runs one at a time ({@link MbCache}); the
     *     thread's interrupt status is set again, nothing was written
     * @throws NullPointerException if {@code out} is null
     * @throws IllegalStateException if the cache is closed (also when it is closed during the call,
     *     or while it waits for another snapshot)
     */
    long writeSnapshot(OutputStream out) throws IOException;

    /**
     * Restores a snapshot written by {@link #writeSnapshot(OutputStream)} (by any backend, of any
     * format version this library reads) from {@code in}, which must hold the snapshot and nothing
     * after it.
     *
     * <p>All or nothing: the whole stream is read and checked (every block's checksum, the trailer's
     * pair count and checksums, the end of the stream) before the first pair is created, so a
     * snapshot that fails any check is a {@link SnapshotFormatException} and creates nothing. No
     * length read from the stream sizes an allocation beyond one block (53,256 bytes); the pairs
     * to be created are held until then, 13 bytes each, at most as many as the budget below (in
     * all at most {@code 13 * budget} bytes and about 213 KB more, whatever the snapshot's block
     * sizes). Each block is copied out of the array handed to {@code in} before it is checked, so
     * a stream that keeps that array and writes to it later cannot change what is created.
     *
     * <p>Then the pairs are created oldest first, as {@link #create} would. The budget
     * is {@code maxEntries - size()}, read before the stream is read and again once it is checked (the smaller
     * counts): when the snapshot holds more pairs, only its newest budget-many are created (none if
     * the cache is at or over its bound), so that the restore itself never sends the cache into
     * reclaim, and never makes it evict a pair that was cached before. Restores of one cache create
     * their pairs one at a time, each taking its second reading once the one before has created its
     * pairs, so that restores running together stay within {@code maxEntries} together (their streams
     * are read side by side). A pair already cached is left as it is (its flag and place kept) and not
     * counted; it still uses one of the budget. Pairs other threads create meanwhile are theirs: the
     * restore does not reserve room against them, so reclaim they cause may take older pairs as it
     * always does. The restore never reclaims for the chain cap either: a pair whose chain is at the
     * cap (the kernel port's bucket chain; Caffeine's backend: the key's values nobody holds) is
     * skipped, neither created nor counted, so that the cap evicts no pair cached before the restore
     * and none the restore created. Restored entries start unreferenced, as every new entry does. A
     * failure while the pairs are created (the cache closed meanwhile, an {@link OutOfMemoryError}
     * from {@link #create}) reaches the caller and leaves the pairs created until then: all of them
     * pairs of the checked snapshot, none of them in place of a pair cached before.
     *
     * <p>{@code in} is read to its end but not closed.
     *
     * @param in the snapshot
     * @return the number of pairs this call created (not counting pairs that were already cached,
     *     nor pairs left out for the budget, nor pairs skipped at the chain cap)
     * @throws SnapshotFormatException if the bytes are not a snapshot this library reads, or fail a
     *     check; nothing was created
     * @throws IOException if {@code in} throws; nothing was created
     * @throws NullPointerException if {@code in} is null
     * @throws IllegalStateException if the cache is closed (also when it is closed during the call)
     */
    long readSnapshot(InputStream in) throws IOException;

    /**
     * Writes a snapshot ({@link #writeSnapshot(OutputStream)}) to {@code file} so that a crash never
     * leaves a torn file under that name: the snapshot goes to a new temporary file in the same
     * directory, which is forced to the device ({@link java.nio.channels.FileChannel#force}) and then
     * moved over {@code file} with {@link java.nio.file.StandardCopyOption#ATOMIC_MOVE} (replacing an
     * existing file). After a failure, or a crash, {@code file} is the old file or absent, never a
     * part of the new one; the temporary file is deleted on failure (after a crash it may remain,
     * named {@code .<file name>.<random>.tmp}).
     *
     * @param file the target file
     * @return the number of pairs written
     * @throws IOException if the file cannot be written, forced or moved (also when the file system
     *     cannot move atomically: {@link java.nio.file.AtomicMoveNotSupportedException}), or
     *     {@code file} has no parent directory (a root: a {@link java.nio.file.FileSystemException}
     *     naming it)
     * @throws NullPointerException if {@code file} is null
     * @throws IllegalStateException if the cache is closed
     */
    default long writeSnapshot(Path file) throws IOException {
        return Snapshots.writeFile(file, this::writeSnapshot);
    }

    /**
     * Restores the snapshot in {@code file}, as {@link #readSnapshot(InputStream)}.
     *
     * @param file the snapshot file
     * @return the number of pairs this call created
     * @throws SnapshotFormatException if the file is not a snapshot this library reads, or fails a
     *     check; nothing was created
     * @throws IOException if the file cannot be opened or read
     * @throws NullPointerException if {@code file} is null
     * @throws IllegalStateException if the cache is closed
     */
    default long readSnapshot(Path file) throws IOException {
        return Snapshots.readFile(file, this::readSnapshot);
    }

    /**
     * Stops background reclaim and drops every entry (kernel {@code mb_cache_destroy}). Threads blocked
     * in {@link #waitUnused} wake with an {@link IllegalStateException}. Idempotent: closing again does
     * nothing. Any other later call on the cache, and any later {@link CacheEntry#setReusable} or
     * {@link CacheEntry#close()} of one of its entries, is an {@link IllegalStateException}; an entry's
     * {@code key()}, {@code value()} and {@code reusable()} stay readable. A lookup
     * ({@link #get}, {@link #findFirst}, {@link #findNext}, {@link #deleteOrGet}) that overlaps the
     * close answers as it would have before it, or throws that exception: it never misses a pair
     * because the close dropped it, so {@code null} from {@link #deleteOrGet} still means that
     * nobody held the pair.
     */
    @Override
    void close();
}
