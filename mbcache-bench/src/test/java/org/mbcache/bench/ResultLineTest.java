package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.mbcache.bench.ResultLine.Field;

class ResultLineTest {
    /** A result with a text and a count. */
    record Pair(String text, int count) {}

    @Test
    void fieldsThatDoNotNameEveryComponentAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> ResultLine.positional(Pair.class, "PAIR", Field.of("text")));
    }

    @Test
    void fieldsThatNameAComponentTwiceAreRejected() {
        assertThrows(IllegalArgumentException.class,
                () -> ResultLine.positional(Pair.class, "PAIR", Field.of("text"), Field.of("count"), Field.of("text")));
    }

    @Test
    void aPositionalLinesLastFieldTakesTheRestOfTheLine() {
        ResultLine<Pair> line = ResultLine.positional(Pair.class, "PAIR", Field.of("count"), Field.of("text"));
        assertEquals("PAIR 3 a b c", line.line(new Pair("a b c", 3)));
        assertEquals(new Pair("a b c", 3), line.parse("PAIR 3 a b c"));
    }

    @Test
    void aNamedLineReadsItsFieldsInAnyOrder() {
        assertEquals(new Pair("x", 3), ResultLine.named(Pair.class, "PAIR").parse("PAIR count=3 text=x"));
    }

    @Test
    void aFieldThatDoesNotReadAsItsTypeIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> ResultLine.named(Pair.class, "PAIR").parse("PAIR text=x count=three"));
    }
}
