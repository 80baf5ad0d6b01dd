package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FloodTest {
    @Test
    void keysOfABucketAreDistinctAndAllInThatBucketByTheKernelsHash() {
        int[] keys = Flood.keysOfBucket(1234, 12, 100_000);
        Set<Integer> distinct = new HashSet<>();
        for (int k : keys) {
            assertEquals(1234, Flood.hash32(k, 12));
            distinct.add(k);
        }
        assertEquals(keys.length, distinct.size());
    }

    @Test
    void kernelHashIsTheGoldenRatioMultiplyShift() {
        int key = 0xDEADBEEF;
        assertEquals((int) (((key & 0xFFFFFFFFL) * 0x61C88647L & 0xFFFFFFFFL) >>> 20), Flood.hash32(key, 12));
    }

    @Test
    void inverseUndoesTheMultiplier() {
        assertEquals(1, Flood.GOLDEN_RATIO_32 * Flood.inverse(Flood.GOLDEN_RATIO_32));
        assertThrows(IllegalArgumentException.class, () -> Flood.inverse(2));
    }

    @Test
    void aBucketHasOnlySoManyKeys() {
        assertThrows(IllegalArgumentException.class, () -> Flood.keysOfBucket(0, 16, (1 << 16) + 1));
    }

    @Test
    void sizesGetTheKernelsDesignLoadOfSixteenABucket() {
        assertEquals(12, Flood.bucketBits(65_536));
        assertEquals(16, Flood.bucketBits(1_048_576));
    }

    @Test
    void resultLinesRoundTrip() {
        Flood.Result r = new Flood.Result("mbcache-allocfirst", 1_048_576, Flood.ONE_BUCKET, 1.5, 2, 3, 4.25, 5, 6, 7, 8, 9, 10, 11);
        assertEquals(r, Flood.Result.parse(r.line()));
        assertThrows(IllegalArgumentException.class, () -> Flood.Result.parse("FLOOD backend=mbcache"));
        assertThrows(IllegalArgumentException.class, () -> Flood.Result.parse("XATTR mbcache"));
    }

    @Test
    void aSmallFloodReportsEveryFigure() {
        Flood.Result r = Flood.run(Backends.MBCACHE, 1 << 10, Flood.ONE_BUCKET, 200);
        assertEquals(2 * 1024, r.plannedCreates());
        assertEquals(Flood.ONE_BUCKET, r.flood());
        for (double d : new double[] {r.attackerNs(), r.honestCreateNs(), r.victimBeforeNs(), r.victimDuringNs(),
                r.honestP999BeforeNs(), r.honestP999DuringNs()}) {
            assertEquals(true, d > 0, r.line());
        }
    }
}
