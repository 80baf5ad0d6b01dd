package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.mbcache.internal.Lifecycle;

/** {@link ReclaimBooks} before a layout has given it its sweep, and the pass it then runs. */
class ReclaimBooksTest {

    /** A sweep over a fixed number of freeable entries. */
    private static final class CountingSweep implements ReclaimBooks.Sweep {
        int left;
        int passes;

        CountingSweep(int entries) {
            left = entries;
        }

        @Override
        public long beginPass() {
            passes++;
            return Math.max(1, left);
        }

        @Override
        public int step() {
            if (left == 0) {
                return END;
            }
            left--;
            return FREED;
        }

        @Override
        public void endPass() {
        }
    }

    @Test
    void aPassBeforeTheLayoutGaveItsSweepFreesNothingAndCountsNoPass() {
        EntryCount count = new EntryCount(100);
        count.add(10);
        ReclaimBooks books = new ReclaimBooks(count, new Lifecycle(), this);
        assertEquals(0, books.reclaim(10, ReclaimPassEvent.Kind.MEMORY_PRESSURE));
        assertEquals(0, books.stats().requestedReclaimPasses());
    }

    @Test
    void aPassAfterTheSweepIsGivenFreesThroughIt() {
        EntryCount count = new EntryCount(100);
        count.add(3);
        ReclaimBooks books = new ReclaimBooks(count, new Lifecycle(), this);
        CountingSweep sweep = new CountingSweep(3);
        books.sweepWith(sweep);
        assertEquals(3, books.reclaim(10, ReclaimPassEvent.Kind.REQUESTED));
        assertEquals(1, sweep.passes);
        assertEquals(1, books.stats().requestedReclaimPasses());
    }
}
