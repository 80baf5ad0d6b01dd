package org.mbcache.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class JmhResultsTest {
    static String result(String bench, String backend, int threads, Object score, String unit, String norm) {
        return "{\"jmhVersion\":\"1.37\",\"benchmark\":\"org.mbcache.bench." + bench + "\",\"mode\":\"avgt\","
                + "\"threads\":" + threads + ",\"forks\":3,\"params\":{\"backend\":\"" + backend + "\",\"load\":\"full\"},"
                + "\"primaryMetric\":{\"score\":" + score + ",\"scoreError\":\"NaN\",\"scoreUnit\":\"" + unit + "\","
                + "\"rawData\":[[1.0,2.0]]},"
                + "\"secondaryMetrics\":{" + (norm == null ? "" : "\"gc.alloc.rate.norm\":{\"score\":" + norm
                + ",\"scoreError\":0.1,\"scoreUnit\":\"B/op\"}") + "}}";
    }

    @Test
    void parsesRowsWithNaNStringsAndMissingAllocation() {
        String json = "[" + result("Micro.findFirstHit", "mbcache", 1, 20.5, "ns/op", null) + ","
                + result("Micro.createNew", "caffeine", 2, 0.1, "us/op", "48.0") + ","
                + result("Micro.createNew", "caffeine-raw", 2, "\"NaN\"", "ns/op", "\"NaN\"") + "]";
        List<JmhResults.Row> rows = JmhResults.parse(json);
        assertEquals(3, rows.size());
        JmhResults.Row a = rows.get(0);
        assertEquals("Micro.findFirstHit", a.benchmark());
        assertEquals("mbcache", a.backend());
        assertEquals(1, a.threads());
        assertEquals(3, a.forks());
        assertEquals(20.5, a.nsPerOp(), 1e-9);
        assertTrue(Double.isNaN(a.errorNs()));
        assertEquals(0.0, a.bytesPerOp(), 0.0, "absent gc.alloc.rate.norm counts as 0");
        assertEquals("load=full", a.otherParams());
        assertEquals(100.0, rows.get(1).nsPerOp(), 1e-9, "us/op converted to ns/op");
        assertEquals(48.0, rows.get(1).bytesPerOp(), 1e-9);
        assertTrue(Double.isNaN(rows.get(2).nsPerOp()));
        assertEquals(0.0, rows.get(2).bytesPerOp(), 0.0, "NaN allocation prints as 0");
    }

    @Test
    void groupRolesBecomeRows() {
        String json = "[{\"benchmark\":\"org.mbcache.bench.Mixed.mixed\",\"threads\":2,\"forks\":1,"
                + "\"params\":{\"backend\":\"mbcache\"},"
                + "\"primaryMetric\":{\"score\":30.0,\"scoreError\":1.0,\"scoreUnit\":\"ns/op\"},"
                + "\"secondaryMetrics\":{\"reader\":{\"score\":20.0,\"scoreError\":1.0,\"scoreUnit\":\"ns/op\"},"
                + "\"writer\":{\"score\":40.0,\"scoreError\":1.0,\"scoreUnit\":\"ns/op\"},"
                + "\"gc.alloc.rate.norm\":{\"score\":1.0E-4,\"scoreError\":0,\"scoreUnit\":\"B/op\"}}}]";
        List<JmhResults.Row> rows = JmhResults.parse(json);
        assertEquals(List.of("Mixed.mixed", "Mixed.mixed:reader", "Mixed.mixed:writer"),
                rows.stream().map(JmhResults.Row::benchmark).toList());
        assertEquals(40.0, rows.get(2).nsPerOp(), 0.0);
        assertEquals("0", ResultTable.bytes(rows.get(0).bytesPerOp()));
    }

    @Test
    void unitsConvert() {
        assertEquals(2.0, JmhResults.toNs(2, "ns/op"), 0.0);
        assertEquals(3e6, JmhResults.toNs(3, "ms/op"), 1e-6);
        assertTrue(Double.isNaN(JmhResults.toNs(2, "furlongs")));
        assertEquals(1e9 / 4, JmhResults.toNs(4, "ops/s"), 1e-6);
        assertEquals(500.0, JmhResults.toNs(2, "ops/us"), 1e-9);
        assertEquals(Double.POSITIVE_INFINITY, JmhResults.num("+INF", 0), 0.0);
        assertEquals(Double.NEGATIVE_INFINITY, JmhResults.num("-INF", 0), 0.0);
    }

    @Test
    void textThatIsNotAJsonArrayIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> JmhResults.parse("[1,2"));
        assertThrows(IllegalArgumentException.class, () -> JmhResults.parse("{\"benchmark\":\"x\"}"));
    }

    @Test
    void escapedParamValuesReadBackWhole() {
        String json = "[" + result("Micro.findFirstHit", "mb\\\"cache\\u00e9", 1, 20.5, "ns/op", null) + "]";
        assertEquals("mb\"cache\u00e9", JmhResults.parse(json).get(0).backend());
    }
}
