package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class HotKeyRunTest {
    @Test
    void everyOperationAndFloorTheSectionRunsIsAHotKeyBenchmark() {
        for (String method : HotKeyRun.OPERATIONS) {
            assertTrue(QuickRun.isBenchmark(HotKey.class, method), method);
        }
        for (String method : HotKeyRun.FLOORS) {
            assertTrue(QuickRun.isBenchmark(HotKey.class, method), method);
        }
    }

    @Test
    void theSectionCoversBothKernelLayoutsTheCountedFloorAndOneAndTwoThreads() {
        assertEquals(List.of(Backends.MBCACHE, Backends.COMPACT), HotKeyRun.BACKENDS);
        assertEquals(List.of("findFirstRelease"), HotKeyRun.OPERATIONS);
        assertEquals(List.of("chmCounted"), HotKeyRun.FLOORS);
        assertEquals(1, HotKeyRun.THREADS[0]);
        assertEquals(2, HotKeyRun.THREADS[1]);
        assertEquals(2 * (2 + 1), HotKeyRun.FORKS);
    }

    @Test
    void aRowPairsTheOneAndTwoThreadTimesOfACellAndDividesThem() {
        String table = HotKeyRun.markdown(List.of(
                new HotKeyRun.Cell("findFirstRelease", "mbcache", 1, 20.0),
                new HotKeyRun.Cell("findFirstRelease", "mbcache", 2, 30.0),
                new HotKeyRun.Cell("chmGet", "chm", 1, 5.0)));
        assertTrue(table.contains("| findFirstRelease | mbcache | 20.0 | 30.0 | 1.50 |"), table);
        assertTrue(table.contains("| chmGet | chm | 5.0 | - | - |"), table);
    }
}
