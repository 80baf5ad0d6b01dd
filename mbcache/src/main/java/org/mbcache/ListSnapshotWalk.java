package org.mbcache;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.mbcache.internal.Lifecycle;
import org.mbcache.internal.Snapshots;

/**
 * The list layout's snapshot walk ({@code MbCache.writeSnapshot}): oldest first, in the LRU list's
 * order, holding the LRU lock (the reclaim lock) for at most {@link #SNAPSHOT_CHUNK} entries at a
 * time and writing the copies with the lock let go. The walk's cursor lives in the list
 * ({@link ListLru#snapshotChunk} has the argument that every entry cached throughout is copied
 * once), so walks of one cache run one at a time: a second waits for the first, and stops waiting
 * when the cache is closed or its thread is interrupted.
 */
final class ListSnapshotWalk {
    /** Entries of the LRU list a snapshot walk looks at per hold of the LRU lock. */
    static final int SNAPSHOT_CHUNK = 256;
    /** How often a snapshot waiting for another one looks whether the cache was closed. */
    static final long SNAPSHOT_WAIT_POLL_MS = 50;

    private final ListLru lru;
    private final Lifecycle lifecycle;
    /** One snapshot walk at a time: the walk's cursor lives in the LRU list. */
    private final ReentrantLock snapshotLock = new ReentrantLock();

    /** The walk over {@code lru} of the cache whose state is {@code lifecycle}. */
    ListSnapshotWalk(ListLru lru, Lifecycle lifecycle) {
        this.lru = lru;
        this.lifecycle = lifecycle;
    }

    /**
     * Writes the snapshot (see {@code MbCache.writeSnapshot}).
     *
     * @return the number of pairs written
     * @throws IllegalStateException if called from within a walk of the same cache on this thread,
     *     or the cache is closed
     * @throws InterruptedIOException if interrupted while waiting for another walk
     */
    long write(OutputStream out) throws IOException {
        if (snapshotLock.isHeldByCurrentThread()) {
            // From the stream of this cache's own snapshot: a nested walk would move the outer one's cursor.
            throw new IllegalStateException("writeSnapshot called from within a snapshot of the same cache");
        }
        lockSnapshots();
        try {
            lru.lock.lock();
            try {
                lifecycle.ensureOpen();
                lru.startSnapshot();
            } finally {
                lru.lock.unlock();
            }
            try {
                return Snapshots.write(out, this::nextSnapshotChunk);
            } finally {
                lru.lock.lock();
                try {
                    lru.endSnapshot();
                } finally {
                    lru.lock.unlock();
                }
            }
        } finally {
            snapshotLock.unlock();
        }
    }

    /**
     * Takes {@link #snapshotLock}: at once if it is free, else waiting in slices of
     * {@value #SNAPSHOT_WAIT_POLL_MS} ms, each ended early by an interrupt, between which a
     * closed cache ends the wait. Holds the lock on return only.
     */
    private void lockSnapshots() throws InterruptedIOException {
        if (snapshotLock.tryLock()) {
            return;
        }
        try {
            while (!snapshotLock.tryLock(SNAPSHOT_WAIT_POLL_MS, TimeUnit.MILLISECONDS)) {
                lifecycle.ensureOpen();
            }
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            InterruptedIOException thrown =
                    new InterruptedIOException("interrupted while waiting for another snapshot of this cache");
            thrown.initCause(interrupted);
            throw thrown;
        }
    }

    /** The snapshot walk's next pairs; 0 once it ran off the tail. */
    private int nextSnapshotChunk(int[] keys, long[] values, byte[] flags, int from, int max) {
        for (;;) {
            lru.lock.lock();
            try {
                lifecycle.ensureOpen(); // close() cleared the list: never end a snapshot short as if complete
                int copied = lru.snapshotChunk(keys, values, flags, from, Math.min(max, SNAPSHOT_CHUNK), SNAPSHOT_CHUNK);
                if (copied != 0 || lru.snapshotDone()) {
                    return copied;
                }
            } finally {
                lru.lock.unlock();
            }
        }
    }
}
