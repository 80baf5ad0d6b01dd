package org.mbcache.internal;

import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The room a cache's restores ({@code readSnapshot}) reserve out of its bound, so that restores
 * running at the same time stay within {@code maxEntries} together: each one's budget is
 * {@code maxEntries - size()} less what the others have reserved and not yet used. A restore
 * creates no pass and never reclaims (it must not evict a pair cached before it), so without the
 * reservation two restores that read the same {@code size()} before either created a pair would
 * each create up to the bound, and nothing would take the cache back below it until a later
 * create.
 *
 * <p>A restore reserves its budget before it reads its stream, uses one place of it per pair it
 * then tries to create (after the try, so that a concurrent reservation counts that pair twice
 * rather than not at all: a budget errs low, never high), and gives back what it did not use when
 * it ends, whether it ended normally or by a throw. One instance per cache, thread-safe.
 */
public final class RestoreBudget {

    /** Places reserved by the restores running now and not yet used. */
    private final AtomicLong reserved = new AtomicLong();

    /**
     * Reads a snapshot from {@code in} ({@link Snapshots#read}) with a budget reserved here: at
     * most {@code maxEntries - size} pairs less the other running restores' unused reservations,
     * and at least zero.
     *
     * @param in the snapshot
     * @param maxEntries the cache's bound
     * @param size the cache's {@code size()}, read when the budget is reserved
     * @param sink the backend's restore create
     * @return the pairs created ({@link Snapshots#read}'s answer)
     * @throws IOException as {@link Snapshots#read}
     */
    public long read(InputStream in, long maxEntries, LongSupplier size, Snapshots.PairSink sink) throws IOException {
        Reservation reservation = new Reservation(sink); // allocated before anything is reserved
        try {
            reservation.unused = reserve(maxEntries, size);
            return Snapshots.read(in, reservation.unused, reservation);
        } finally {
            reserved.addAndGet(-reservation.unused);
        }
    }

    /**
     * Reserves and returns {@code max(0, maxEntries - size - reserved)}: a CAS on the reservations,
     * retried (with {@code size} read again) when another restore reserved, used or gave back room
     * meanwhile.
     */
    private long reserve(long maxEntries, LongSupplier size) {
        for (;;) {
            long others = reserved.get();
            long budget = Math.max(0, maxEntries - Math.max(0, size.getAsLong()) - others);
            if (reserved.compareAndSet(others, others + budget)) {
                return budget;
            }
        }
    }

    /** One restore's sink: the backend's create, each try using one reserved place. */
    private final class Reservation implements Snapshots.PairSink {
        private final Snapshots.PairSink sink;
        /** Reserved places this restore has not used yet (written by its own thread only). */
        long unused;

        Reservation(Snapshots.PairSink sink) {
            this.sink = sink;
        }

        @Override
        public boolean create(int key, long value, boolean reusable) {
            try {
                return sink.create(key, value, reusable);
            } finally {
                if (unused > 0) {
                    unused--;
                    reserved.decrementAndGet();
                }
            }
        }
    }
}
