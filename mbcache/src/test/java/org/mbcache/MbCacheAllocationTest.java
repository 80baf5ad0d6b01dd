package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The 2019 patch's point, checked with the JVM's per-thread allocation counter (exact bytes, not
 * time): with {@link CreateStrategy#REQUEST_LIST} a refused duplicate allocates nothing; with
 * {@link CreateStrategy#ALLOCATE_FIRST} it allocates an entry and throws it away.
 */
class MbCacheAllocationTest {

    private static final int CALLS = 20_000;

    private static long bytesAllocatedByDuplicateCreates(CreateStrategy strategy) {
        try (MbCache cache = MbCache.builder().bucketBits(4).createStrategy(strategy).build()) {
            for (int i = 0; i < 64; i++) {
                cache.create(i, i, true);
            }
            for (int i = 0; i < CALLS; i++) { // warm up, so the measured loop runs compiled code
                assertFalse(cache.create(i & 63, i & 63, true));
            }
            long before = AllocatedBytes.byCurrentThread();
            for (int i = 0; i < CALLS; i++) {
                if (cache.create(i & 63, i & 63, true)) {
                    throw new AssertionError("duplicate accepted");
                }
            }
            return AllocatedBytes.byCurrentThread() - before;
        }
    }

    @Test
    void aRefusedDuplicateAllocatesNothingWithTheRequestList() {
        long bytes = bytesAllocatedByDuplicateCreates(CreateStrategy.REQUEST_LIST);
        // Under a byte per call: the smallest object is 16 bytes, so any per-call allocation fails
        // this by far; what remains is the reflective counter call's own few hundred bytes.
        assertTrue(bytes < CALLS, bytes + " bytes for " + CALLS + " refused duplicates");
    }

    @Test
    void aRefusedDuplicateAllocatesAnEntryWhenAllocatingFirst() {
        long bytes = bytesAllocatedByDuplicateCreates(CreateStrategy.ALLOCATE_FIRST);
        assertTrue(bytes >= 16L * CALLS, bytes + " bytes for " + CALLS + " refused duplicates");
    }
}
