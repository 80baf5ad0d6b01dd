package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.mbcache.bench.report.FloodTable;

class FloodTest {
    /** A result whose figures all differ, so that a figure read into another's place shows. */
    private static final Flood.Result DISTINCT_FIGURES = new Flood.Result("mbcache-allocfirst", 1_048_576,
            Flood.ONE_BUCKET, 1.5, 2, 3, 4.25, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20);

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
    void aResultLineReadsBackAsTheSameResult() {
        assertEquals(DISTINCT_FIGURES, Flood.Result.parse(DISTINCT_FIGURES.line()));
    }

    @Test
    void aFloodLineWithOnlySomeOfTheFieldsIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> Flood.Result.parse("FLOOD {\"backend\":\"mbcache\"}"));
    }

    @Test
    void anotherBenchmarksLineIsNotReadAsAFloodResult() {
        assertThrows(IllegalArgumentException.class, () -> Flood.Result.parse("XATTR mbcache"));
    }

    @Test
    void aResultLineIsFloodThenEachComponentAsJsonInOrder() {
        assertEquals("FLOOD {\"backend\":\"mbcache-allocfirst\",\"maxEntries\":1048576,\"flood\":\"one-bucket\",\"attackerNs\":1.5,"
                + "\"honestCreateNs\":2.0,\"victimBeforeNs\":3.0,\"victimDuringNs\":4.25,\"victimP999BeforeNs\":5.0,\"victimP999DuringNs\":6.0,"
                + "\"honestP999BeforeNs\":7.0,\"honestP999DuringNs\":8.0,\"attackerCreates\":9,\"plannedCreates\":10,\"chainCapReclaims\":11,"
                + "\"honestBeforeNs\":12.0,\"honestDuringNs\":13.0,\"attackerMeanNs\":14.0,\"honestCreateMeanNs\":15.0,"
                + "\"victimBeforeMeanNs\":16.0,\"victimDuringMeanNs\":17.0,\"samples\":18,\"gcRounds\":19,\"preemptedRounds\":20}",
                DISTINCT_FIGURES.line());
    }

    @Test
    void aLineWithoutTheMediansOfHonestOperationsIsRejected() {
        String line = DISTINCT_FIGURES.line().replace("\"honestBeforeNs\":12.0,", "");
        assertThrows(IllegalArgumentException.class, () -> Flood.Result.parse(line));
    }

    @Test
    void unmeasuredFiguresRoundTripAsNaN() {
        Flood.Result r = new Flood.Result("mbcache", 65_536, Flood.ONE_KEY, 1, 2, 3, Double.NaN, 5, 6, 7, 8, 9, 10, 11,
                Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0, 0, 0);
        assertEquals(r, Flood.Result.parse(r.line()));
    }

    @Test
    void batchedSamplesReportPerOperationMedianMeanAndPercentile() {
        Flood.Samples s = new Flood.Samples(16);
        for (long t : new long[] {160, 320, 3200, 480, 1600}) {
            s.add(t);
        }
        assertEquals(30, s.median());
        assertEquals(5760.0 / 5 / 16, s.mean());
        assertEquals(200, s.percentile(0.999));
        assertEquals(5, s.count());
    }

    @Test
    void samplesGrowPastTheirFirstArray() {
        Flood.Samples s = new Flood.Samples(1);
        for (int i = 1; i <= 5000; i++) {
            s.add(i);
        }
        assertEquals(5000, s.count());
        assertEquals(4995, s.percentile(0.999));
    }

    @Test
    void noSamplesHaveNoFigures() {
        assertTrue(Double.isNaN(new Flood.Samples(16).median()));
        assertTrue(Double.isNaN(new Flood.Samples(16).mean()));
    }

    @Test
    void theTableShowsMediansWithTheirMeansAndSaysPausesAreExcluded() {
        Flood.Result r = new Flood.Result("mbcache", 65_536, Flood.ONE_KEY, 400, 200, 150, 240, 900, 950, 1000, 1200,
                131_072, 131_072, 130_000, 120, 132, 410, 210, 160, 250, 20_000, 3, 1_234);
        String table = FloodTable.markdown(List.of(r));
        assertTrue(table.contains("| 400 (410) | 200 (210) | 2.00 | 150 (160) | 240 (250) | 1.60 | 120 | 132 | 1.10 |"), table);
        assertTrue(table.contains("| 20,000 | 3 / 1,234 |"), table);
        assertTrue(table.contains("GC pauses are excluded"), table);
    }

    @Test
    void runDelayIsTheSecondFigureOfSchedstat() {
        byte[] line = "2526444152 247245 25\n".getBytes(StandardCharsets.US_ASCII);
        assertEquals(247_245, Flood.parseRunDelay(line, line.length));
    }

    @Test
    void aSchedstatWithoutASecondFigureHasNoRunDelay() {
        byte[] line = "2526444152\n".getBytes(StandardCharsets.US_ASCII);
        assertEquals(-1, Flood.parseRunDelay(line, line.length));
        assertEquals(-1, Flood.parseRunDelay(line, 0));
    }

    @Test
    void anUnknownFloodIsRejectedBeforeACacheIsBuilt() {
        assertThrows(IllegalArgumentException.class, () -> Flood.run(Backends.MBCACHE, 1 << 10, "one-shard", 100));
    }

    @Test
    void aSmallFloodReportsEveryFigure() {
        Flood.Result r = Flood.run(Backends.MBCACHE, 1 << 10, Flood.ONE_BUCKET, 200);
        assertEquals(2 * 1024, r.plannedCreates());
        assertEquals(Flood.ONE_BUCKET, r.flood());
        for (double d : new double[] {r.attackerNs(), r.honestCreateNs(), r.victimBeforeNs(), r.victimDuringNs(),
                r.honestBeforeNs(), r.honestDuringNs(), r.attackerMeanNs(), r.victimDuringMeanNs(),
                r.honestP999BeforeNs(), r.honestP999DuringNs()}) {
            assertTrue(d > 0, r.line());
        }
        assertTrue(r.samples() > 0, r.line());
    }
}
