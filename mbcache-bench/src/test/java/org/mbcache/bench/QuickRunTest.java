package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mbcache.bench.report.Json;
import org.openjdk.jmh.runner.BenchmarkList;
import org.openjdk.jmh.runner.BenchmarkListEntry;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.VerboseMode;

class QuickRunTest {
    @Test
    void planFitsTheFiveMinuteBudget() {
        double seconds = QuickRun.plannedSeconds(QuickRun.steps());
        assertTrue(seconds <= 300, seconds + " s");
    }

    @Test
    void planRunsEveryMicroBenchmarkInBothRegimesAtOneAndTwoThreads() {
        int runs = QuickRun.steps().stream().mapToInt(QuickRun.Step::runs).sum();
        // per thread count: writes 3 x 4 backends, lookups 3 x 3, walk 2, each at and below; the chm baseline
        // (hit and miss, and at 1 thread the counted hit); then the light load (2 + chm), the mixed group in both
        // regimes, the 2019 experiment
        assertEquals((3 * 4 * 2 + 3 * 3 * 2 + 2 * 2 + 2) * 2 + 1 + 3 + 4 * 2 + 2, runs);
        for (QuickRun.Step s : QuickRun.steps()) {
            if (s.benchmarks() == Micro.class && s.params().get("load") != null && s.params().get("load")[0].equals("full")
                    || s.benchmarks() == Mixed.class) {
                assertEquals(List.of(QuickRun.REGIMES), List.of(s.params().get("bound")), s.shortName());
            }
        }
    }

    @Test
    void aStepNamingAMissingBenchmarkFailsLoudly() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> new QuickRun.Step(Micro.class, List.of("findFirstHit", "noSuchBenchmark"), Map.of(), 1));
        assertTrue(e.getMessage().contains("noSuchBenchmark"), e.getMessage());
    }

    @Test
    void aStepAcceptsAGroupName() {
        assertEquals(1, new QuickRun.Step(Mixed.class, "mixed", Map.of(), 2).runs());
    }

    @Test
    void everyStepMatchesExactlyItsBenchmarksInJmhsList() {
        OutputFormat silent = OutputFormatFactory.createFormatInstance(System.out, VerboseMode.SILENT);
        for (QuickRun.Step s : QuickRun.steps()) {
            SortedSet<BenchmarkListEntry> found = BenchmarkList.defaultList().find(silent, List.of(s.regex()), List.of());
            assertEquals(s.methods().size(), found.size(), s.shortName() + " matched " + found);
        }
    }

    @Test
    void mergesJsonArrays(@TempDir Path dir) throws Exception {
        Path a = dir.resolve("a.json");
        Path b = dir.resolve("b.json");
        Path c = dir.resolve("c.json");
        Files.writeString(a, "[\n{\"x\":1}\n]\n");
        Files.writeString(b, "[]");
        Files.writeString(c, "[{\"x\":2},{\"x\":3}]");
        Object merged = Json.parse(QuickRun.mergeJson(List.of(a, b, c)));
        assertEquals(3, ((List<?>) merged).size());
    }

    @Test
    void keyIndexIsInRangeAndSkewed() {
        int n = 1 << 16;
        int[] u = KeyIndex.generate(KeyIndex.UNIFORM, n, 1);
        int[] z = KeyIndex.generate(KeyIndex.ZIPF, n, 1);
        assertEquals(KeyIndex.LENGTH, u.length);
        int[] counts = new int[n];
        for (int i : z) {
            assertTrue(i >= 0 && i < n);
            counts[i]++;
        }
        int max = java.util.Arrays.stream(counts).max().getAsInt();
        assertTrue(max > 20 * KeyIndex.LENGTH / n, "zipf has hot keys: " + max);
        for (int i : u) {
            assertTrue(i >= 0 && i < n);
        }
    }
}
