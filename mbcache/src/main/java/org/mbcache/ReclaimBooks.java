package org.mbcache;

import java.util.concurrent.locks.ReentrantLock;
import org.mbcache.internal.Lifecycle;
import org.mbcache.internal.StripedStatistics;

/**
 * The reclaim books of a kernel-port cache, either layout: the reclaim lock, the pass loop of
 * kernel {@code mb_cache_shrink} with the rules that end a pass, the counters that
 * {@link CacheStats} reports, and the memory-pressure shrinker. The layout supplies only what
 * differs, the step of its reclaim order ({@link Sweep}: the LRU list's head, or the clock's hand).
 *
 * <p><b>The pass.</b> Under the reclaim lock (one pass at a time, and {@code stats()} and
 * {@code close()} wait for it): if a {@code floor} is given and the exact count is below it, nothing
 * (see {@link BackgroundReclaim.Reclaimer}); else the sweep begins and names its extent (the entries
 * on the list, or the slots in use), and the pass steps until the first rule that ends it:
 * <ul>
 *   <li>it has scanned {@code nrToScan} live entries, except that a synchronous pass goes on,
 *       within the bounds below, until it has freed one, for as long as it makes progress: it stops
 *       once {@link BackgroundReclaim#SYNC_SHRINK_BATCH} live entries in a row were neither freed nor
 *       had a flag to clear. The kernel's can spend its whole batch on second chances and free
 *       nothing, and a cache whose entries are all referenced would then grow past
 *       {@code 2 * maxEntries}, which the contract forbids. Each flag it clears is gone for the next
 *       pass, so the longer scan is paid once per flag;</li>
 *   <li>it has looked at twice its extent (one turn to clear flags, one to free), so threads that
 *       keep touching or creating cannot keep it, and the lock {@code close()} needs, forever;</li>
 *   <li>a whole extent of steps in a row freed nothing and cleared no flag: every entry left is
 *       held, so the pass ends even then;</li>
 *   <li>the sweep has nothing left to look at.</li>
 * </ul>
 * Steps over places with no live entry (a dead entry still on the list, a free slot) count as
 * looked at, not as scanned. Then the sweep ends, and the pass's frees leave the entry count
 * exactly (no part of them in the pass thread's cell).
 *
 * <p><b>Counters.</b> The events counted outside any lock (hits, misses, refused duplicates,
 * chain-cap reclaims, creates, deletes, restores) are {@link StripedStatistics}, one stripe per
 * thread, allocated with the cache so that counting never allocates. The pass counters are plain
 * fields written under the reclaim lock, which {@link #stats()} takes to read them.
 */
final class ReclaimBooks implements BackgroundReclaim.Reclaimer, MemoryPressureRegistry.Shrinker {

    /** The step of a layout's reclaim order, called under the reclaim lock. */
    interface Sweep {
        /** {@link #step()}: the entry was claimed and unhashed. */
        int FREED = 0;
        /** {@link #step()}: the entry's referenced flag was cleared (its second chance). */
        int SECOND_CHANCE = 1;
        /** {@link #step()}: a live entry that could not be freed (held, or claimed meanwhile by another). */
        int KEPT = 2;
        /** {@link #step()}: a place with no live entry (a dead entry dropped, a free slot). */
        int EMPTY = 3;
        /** {@link #step()}: nothing left to look at. */
        int END = 4;

        /**
         * Begins a pass.
         *
         * @return its extent: the number of places the order holds now
         */
        long beginPass();

        /**
         * Looks at the next place of the reclaim order and acts on it: frees an unreferenced entry
         * nobody holds, clears a referenced one's flag.
         *
         * @return what it did: {@link #FREED}, {@link #SECOND_CHANCE}, {@link #KEPT}, {@link #EMPTY}
         *     or {@link #END}
         */
        int step();

        /** Ends a pass: what the sweep does once per pass (never throws). */
        void endPass();
    }

    // The counters of statistics, the events counted outside any lock.
    static final int LOOKUP_HITS = 0;
    static final int LOOKUP_MISSES = 1;
    static final int DUPLICATES_REFUSED = 2;
    static final int CHAIN_CAP_RECLAIMS = 3;
    static final int CREATES = 4;
    static final int DELETES = 5;
    static final int RESTORES = 6;
    /** Entries a create reclaimed in its line ({@code CompactMbCache}); part of {@code entriesReclaimed}. */
    static final int LINE_RECLAIMS = 7;

    /** Counted by the calling thread's stripe; never allocates. */
    final StripedStatistics statistics = new StripedStatistics(8);
    /** One pass at a time; {@link #stats()} and the layout's {@code close()} take it too. */
    final ReentrantLock lock = new ReentrantLock();

    private final EntryCount entryCount;
    private final Lifecycle lifecycle;
    private final Object owner;
    /** The layout's reclaim order; {@code null} until {@link #sweepWith}. Guarded by {@link #lock}. */
    private Sweep sweep;

    // Written under the lock.
    private long entriesReclaimed;
    private long backgroundReclaimPasses;
    private long synchronousReclaimPasses;
    private long requestedReclaimPasses;

    /**
     * Books for one cache.
     *
     * @param entryCount the cache's entry count
     * @param lifecycle whether the cache is closed (a closed cache ignores memory pressure)
     * @param owner the cache, as the flight-recorder events name it
     */
    ReclaimBooks(EntryCount entryCount, Lifecycle lifecycle, Object owner) {
        this.entryCount = entryCount;
        this.lifecycle = lifecycle;
        this.owner = owner;
    }

    /**
     * Sets the layout's sweep, once, while the cache is being built. Under the lock, as every read
     * of it is: a pass that starts later (on the memory-pressure thread, say) sees the layout as
     * built; one that started before finds no sweep and frees nothing.
     */
    void sweepWith(Sweep sweep) {
        lock.lock();
        try {
            this.sweep = sweep;
        } finally {
            lock.unlock();
        }
    }

    /**
     * One pass of {@code kind} over up to {@code nrToScan} live entries, with no floor.
     *
     * @return the number of entries freed
     */
    long reclaim(long nrToScan, ReclaimPassEvent.Kind kind) {
        return reclaim(nrToScan, kind, NO_FLOOR);
    }

    /** The pass of the class comment (kernel {@code mb_cache_shrink}). */
    @Override
    public long reclaim(long nrToScan, ReclaimPassEvent.Kind kind, long floor) {
        ReclaimPassEvent event = ReclaimPassEvent.beginIfEnabled(kind);
        long scanned = 0;
        long freed = 0;
        long secondChances = 0;
        lock.lock();
        try {
            if (sweep == null || floor != NO_FLOOR && entryCount.snapshot() < floor) {
                return 0;
            }
            countPass(kind);
            long extent = sweep.beginPass();
            try {
                boolean untilOneFreed = kind == ReclaimPassEvent.Kind.SYNCHRONOUS;
                long looked = 0;
                long sinceProgress = 0; // places looked at since the last free or cleared flag
                long fruitless = 0; // live entries in a row neither freed nor given a second chance
                while ((scanned < nrToScan
                        || untilOneFreed && freed == 0 && fruitless < BackgroundReclaim.SYNC_SHRINK_BATCH)
                        && looked < 2 * extent && sinceProgress < extent) {
                    int outcome = sweep.step();
                    if (outcome == Sweep.END) {
                        break;
                    }
                    looked++;
                    sinceProgress++;
                    if (outcome == Sweep.EMPTY) {
                        continue;
                    }
                    scanned++;
                    if (outcome == Sweep.KEPT) {
                        fruitless++;
                        continue;
                    }
                    if (outcome == Sweep.FREED) {
                        freed++;
                    } else {
                        secondChances++;
                    }
                    sinceProgress = 0;
                    fruitless = 0;
                }
            } finally {
                sweep.endPass();
                entriesReclaimed += freed;
                entryCount.addExactly(-freed); // the pass's thread leaves no part of it in a cell
            }
        } finally {
            lock.unlock();
        }
        ReclaimPassEvent.commitIfEnabled(event, owner, scanned, freed, secondChances);
        return freed;
    }

    /**
     * Counts a pass for {@link CacheStats}: memory-pressure passes count as requested ones. Not a
     * {@code switch}: one on an enum compiles to a synthetic class of its own, initialized at its
     * first run, in the middle of a pass (a static initializer that fails there, out of memory,
     * would leave the class unusable for the life of the JVM).
     */
    private void countPass(ReclaimPassEvent.Kind kind) {
        if (kind == ReclaimPassEvent.Kind.BACKGROUND) {
            backgroundReclaimPasses++;
        } else if (kind == ReclaimPassEvent.Kind.SYNCHRONOUS) {
            synchronousReclaimPasses++;
        } else {
            requestedReclaimPasses++; // REQUESTED, MEMORY_PRESSURE
        }
    }

    /**
     * The memory-pressure shrinker: a pass over half the entries, so that unused unreferenced
     * entries go first and a second notification reaches the referenced ones. Nothing once the
     * cache is closed.
     */
    @Override
    public void onMemoryPressure() {
        if (lifecycle.isClosed()) {
            return;
        }
        long count = entryCount.snapshot();
        if (count > 0) {
            reclaim(Math.max(1, count / 2), ReclaimPassEvent.Kind.MEMORY_PRESSURE);
        }
    }

    /**
     * The cache's statistics: the striped counters summed, the pass counters read under the lock.
     *
     * @return the statistics
     */
    CacheStats stats() {
        lock.lock();
        try {
            return new CacheStats(statistics.sum(CREATES), statistics.sum(DUPLICATES_REFUSED),
                    statistics.sum(LOOKUP_HITS), statistics.sum(LOOKUP_MISSES), statistics.sum(DELETES),
                    entriesReclaimed + statistics.sum(LINE_RECLAIMS), backgroundReclaimPasses, synchronousReclaimPasses,
                    requestedReclaimPasses, statistics.sum(CHAIN_CAP_RECLAIMS), statistics.sum(RESTORES));
        } finally {
            lock.unlock();
        }
    }
}
