package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class XattrBenchTest {
    @Test
    void aResultLineReadsBackAsTheSameResult() {
        XattrBench.Result r = new XattrBench.Result("mbcache-allocfirst", 4, 1000, 12345.5, 77, "ok");
        assertEquals(r, XattrBench.Result.parse(r.line()));
    }

    @Test
    void aFailedChecksTextReadsBackWhole() {
        XattrBench.Result r = new XattrBench.Result("caffeine", 2, 10, 99.5, 12, "BAD:counts(sharers=3,files=2,alive=1)");
        assertEquals(r, XattrBench.Result.parse(r.line()));
    }

    @Test
    void anXattrLineIsTheTagThenTheRecordAsJson() {
        assertEquals("XATTR {\"backend\":\"mbcache\",\"threads\":4,\"values\":1000,\"opsPerSec\":12345.46,"
                        + "\"blocksStored\":77,\"check\":\"ok\"}",
                new XattrBench.Result("mbcache", 4, 1000, 12345.46, 77, "ok").line());
    }

    @Test
    void aLineWithAFieldTheRecordDoesNotKnowIsRejected() {
        String line = new XattrBench.Result("mbcache", 4, 1000, 1.5, 77, "ok").line().replace("}", ",\"extra\":1}");
        assertThrows(IllegalArgumentException.class, () -> XattrBench.Result.parse(line));
    }

    @Test
    void aFieldThatDoesNotReadAsItsTypeIsRejected() {
        String line = new XattrBench.Result("mbcache", 4, 1000, 1.5, 77, "ok").line().replace("\"threads\":4", "\"threads\":\"four\"");
        assertThrows(IllegalArgumentException.class, () -> XattrBench.Result.parse(line));
    }

    @Test
    void anotherBenchmarksLineIsNotReadAsAnXattrResult() {
        assertThrows(IllegalArgumentException.class, () -> XattrBench.Result.parse(
                new RetainedMemory.Result("mbcache", 1, 2).line()));
    }
}
