package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class RetainedMemoryTest {
    @Test
    void aResultLineReadsBackAsTheSameResult() {
        RetainedMemory.Result r = new RetainedMemory.Result("caffeine-raw", Double.NaN, 131.25);
        assertEquals(r, RetainedMemory.Result.parse(r.line()));
    }

    @Test
    void aMemoryLineIsTheTagThenTheRecordAsJson() {
        assertEquals("MEMORY {\"backend\":\"caffeine-raw\",\"jolBytesPerEntry\":\"NaN\",\"heapBytesPerEntry\":131.254}",
                new RetainedMemory.Result("caffeine-raw", Double.NaN, 131.254).line());
    }

    @Test
    void theFigureIsJolsWhereItWorkedElseTheHeapDelta() {
        assertEquals(40.5, new RetainedMemory.Result("mbcache", 40.5, 38).bytesPerEntry(), 0.0);
        assertEquals(131.25, new RetainedMemory.Result("caffeine-raw", Double.NaN, 131.25).bytesPerEntry(), 0.0);
    }

    @Test
    void anotherBenchmarksLineIsNotReadAsAMemoryResult() {
        assertThrows(IllegalArgumentException.class, () -> RetainedMemory.Result.parse(
                new XattrBench.Result("mbcache", 4, 1000, 1.5, 77, "ok").line()));
    }
}
