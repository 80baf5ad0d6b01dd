package org.mbcache;

/**
 * The list layout's step of a reclaim pass (kernel {@code mb_cache_shrink}'s loop body), run by
 * {@link ReclaimBooks} under the LRU lock, which is the reclaim lock: from the LRU head, a
 * referenced or held entry loses its referenced flag and moves to the tail; any other is claimed
 * (count 1 to 0) and unhashed. Entries already removed (by {@code deleteOrGet} or the chain cap)
 * are dropped without counting. The pass acts on the list as it stood when it started: the
 * append stacks are drained once, and the creates it overlaps stay on the stacks, behind the
 * entries it moves to the tail.
 */
final class ListSweep implements ReclaimBooks.Sweep {
    private final ListLru lru;
    private final ListTable buckets;
    /** Dead entries the pass dropped from the list. Reclaim lock held. */
    private long deadDropped;

    /** The sweep of the list {@code lru} over the chains of {@code buckets}. */
    ListSweep(ListLru lru, ListTable buckets) {
        this.lru = lru;
        this.buckets = buckets;
    }

    @Override
    public long beginPass() {
        deadDropped = 0;
        lru.drainAppendStacks();
        return lru.length();
    }

    @Override
    public int step() {
        ListEntry entry = lru.pollOldest();
        if (entry == null) {
            return END;
        }
        int state = entry.lvState();
        if (ListEntry.count(state) == 0) {
            deadDropped++;
            return EMPTY;
        }
        if ((state & ListEntry.REFERENCED) == 0 && ListEntry.count(state) == 1 && claimForReclaim(entry)) {
            return FREED;
        }
        lru.addNewest(entry);
        if ((state & ListEntry.REFERENCED) != 0) {
            entry.setFlag(ListEntry.REFERENCED, false);
            return SECOND_CHANCE;
        }
        return KEPT;
    }

    @Override
    public void endPass() {
        lru.forgetDeadEntries(deadDropped);
    }

    /** Claims an unused entry (count 1 to 0) and unhashes it, under its bucket bit. LRU lock held. */
    private boolean claimForReclaim(ListEntry entry) {
        int bucket = buckets.bucketOf(entry.key);
        buckets.lock(bucket);
        try {
            if (!entry.tryClaim(ListEntry.REFERENCED)) { // touched since the look: its second chance
                return false;
            }
            buckets.removeAt(bucket, buckets.indexOfEntry(bucket, entry));
            return true;
        } finally {
            buckets.unlock(bucket);
        }
    }
}
