package org.mbcache.internal;

import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Keeps a cache's restores ({@code readSnapshot}) within its bound together. A restore creates no
 * pass and never reclaims (it must not evict a pair cached before it), so two restores that each
 * read {@code maxEntries - size()} before either created a pair would each create up to the bound,
 * and nothing would take the cache back below it until a later create.
 *
 * <p>So a restore reads and checks its stream with the budget it sees when it starts (which
 * bounds the records it keeps: 13 bytes each), and then creates its pairs under this object's lock,
 * with its budget taken again there: at most {@code maxEntries - size()} as {@code size()} reads
 * once the restores before it have created theirs (an exact count). Restores therefore create one
 * after the other, never together, while their streams' I/O, where they spend most of their time,
 * runs side by side. One instance per cache, thread-safe; the lock is reentrant, and no stream is
 * read while it is held, so a stream that restores into the same cache from its {@code read} does
 * not deadlock.
 */
public final class RestoreBudget {

    /** Held while a restore creates its pairs (and takes its budget for them). */
    private final ReentrantLock creating = new ReentrantLock();

    /** A new budget for one cache, no restore running. */
    public RestoreBudget() {}

    /**
     * Reads and checks a snapshot from {@code in} ({@link Snapshots#readChecked}) with the budget
     * {@code maxEntries - size} seen now, then creates its newest pairs under the lock, at most as
     * many as that budget and the one {@code maxEntries - size} gives under the lock.
     *
     * @param in the snapshot
     * @param maxEntries the cache's bound
     * @param size the cache's exact {@code size()}
     * @param sink the backend's restore create
     * @return the pairs created
     * @throws IOException as {@link Snapshots#readChecked}
     */
    public long read(InputStream in, long maxEntries, LongSupplier size, Snapshots.PairSink sink) throws IOException {
        long readBudget = room(maxEntries, size);
        Snapshots.CheckedRecords records = Snapshots.readChecked(in, readBudget);
        creating.lock();
        try {
            return records.createNewest(Math.min(readBudget, room(maxEntries, size)), sink);
        } finally {
            creating.unlock();
        }
    }

    private static long room(long maxEntries, LongSupplier size) {
        return Math.max(0, maxEntries - Math.max(0, size.getAsLong()));
    }
}
