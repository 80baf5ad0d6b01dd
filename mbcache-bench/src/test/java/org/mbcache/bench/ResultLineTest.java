package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ResultLineTest {
    /** A result with a text, a count and a figure. */
    record Sample(String text, int count, double figure) {}

    private static final ResultLine<Sample> LINE = ResultLine.of(Sample.class, "SAMPLE");

    @Test
    void aLineIsTheTagThenTheRecordAsOneLineOfJson() {
        assertEquals("SAMPLE {\"text\":\"a b\\nc\",\"count\":3,\"figure\":1.5}", LINE.line(new Sample("a b\nc", 3, 1.5)));
    }

    @Test
    void aLineReadsBackAsTheSameRecordNaNIncluded() {
        Sample s = new Sample("x \"quoted\"", -7, Double.NaN);
        assertEquals(s, LINE.parse(LINE.line(s)));
    }

    @Test
    void theFieldsReadInAnyOrder() {
        assertEquals(new Sample("x", 3, 2.0), LINE.parse("SAMPLE {\"figure\":2,\"count\":3,\"text\":\"x\"}"));
    }

    @Test
    void aLineWithoutAFieldIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> LINE.parse("SAMPLE {\"text\":\"x\",\"count\":3}"));
    }

    @Test
    void aFieldThatDoesNotReadAsItsTypeIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> LINE.parse("SAMPLE {\"text\":\"x\",\"count\":\"three\",\"figure\":1}"));
    }

    @Test
    void aLineWithAnotherTagIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> LINE.parse("OTHER {\"text\":\"x\",\"count\":3,\"figure\":1}"));
    }
}
