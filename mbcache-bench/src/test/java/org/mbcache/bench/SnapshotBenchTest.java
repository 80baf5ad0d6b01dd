package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnapshotBenchTest {

    @Test
    void aTinyRunMeasuresEveryBackendAndLeavesNoFile(@TempDir Path directory) throws Exception {
        List<SnapshotBench.Result> results = SnapshotBench.run(Backends.DEDUP, new long[] {1000}, directory);
        assertEquals(Backends.DEDUP.size(), results.size());
        for (SnapshotBench.Result result : results) {
            assertEquals(1000, result.pairs());
            assertEquals(16 + 13 * 1000 + 8 + 20, result.bytes(), result.backend());
            assertTrue(result.createNanos() > 0 && result.writeNanos() > 0 && result.restoreNanos() > 0);
        }
        try (Stream<Path> left = Files.list(directory)) {
            assertEquals(0, left.count());
        }
    }

    @Test
    void aResultLineNamesTheBackendPairsAndBytesAPair() {
        String line = new SnapshotBench.Result("mbcache", 1000, 10_000_000, 2_000_000, 12_000_000, 13_044).line();
        assertTrue(line.startsWith("SNAPSHOT mbcache pairs=1000 create=10.0ms write=2.0ms (0.20x, target <= 0.5x met)"
                + " restore=12.0ms (1.20x, target <= 1.5x met) 13.044 bytes/pair"), line);
    }
}
