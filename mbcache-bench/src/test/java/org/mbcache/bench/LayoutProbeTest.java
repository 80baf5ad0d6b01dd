package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class LayoutProbeTest {
    @Test
    void aCountedHitGivesBackTheReferenceItTook() {
        long[] words = {0, 41, 0};
        assertEquals(42, LayoutProbe.countedHit(words, 1), "the second CAS finds the reference taken");
        assertEquals(41, words[1]);
        assertEquals(0, words[0] + words[2]);
    }

    @Test
    void theTableHasEveryPatternWithTheOneLineFloorAsItsUnit() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        LayoutProbe.run(224, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        List<String> rows = bytes.toString(StandardCharsets.UTF_8).lines()
                .filter(line -> line.startsWith("| ") && !line.startsWith("| pattern") && !line.startsWith("| ---"))
                .collect(Collectors.toList());
        assertEquals(13, rows.size(), String.join("\n", rows));
        assertTrue(rows.get(10).startsWith("| one-line + counted lookup |"), rows.get(10));
        assertTrue(rows.get(0).startsWith("| one-line |") && rows.get(0).endsWith("| 1.00 |"), rows.get(0));
        for (String row : rows) {
            String[] cells = row.split("\\|");
            assertTrue(Double.parseDouble(cells[2].trim()) > 0, row);
        }
    }

    @Test
    void aSizeTheArraysCannotHoldIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> LayoutProbe.run(100, System.out));
        assertThrows(IllegalArgumentException.class, () -> LayoutProbe.run(100_000_001, System.out));
    }
}
