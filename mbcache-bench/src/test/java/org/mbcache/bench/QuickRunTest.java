package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class QuickRunTest {
    @Test
    void planFitsTheFiveMinuteBudget() {
        int runs = QuickRun.steps().stream().mapToInt(QuickRun::runsOf).sum();
        double seconds = runs * QuickRun.secondsPerRun();
        assertTrue(seconds < 250, runs + " runs, " + seconds + " s");
        assertEquals((3 * 4 + 3 * 3 + 2) * 2 + 2 + 4 + 2, runs);
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
    void xattrLinesRoundTrip() {
        XattrBench.Result r = new XattrBench.Result("mbcache-allocfirst", 4, 1000, 12345.5, 77, "ok");
        assertEquals(r, XattrBench.Result.parse(r.line()));
        RetainedMemory.Result m = new RetainedMemory.Result("caffeine-raw", Double.NaN, 131.25);
        RetainedMemory.Result back = RetainedMemory.Result.parse(m.line());
        assertEquals(131.25, back.heapBytesPerEntry(), 0.0);
        assertEquals(131.25, back.bytesPerEntry(), 0.0);
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
