package org.mbcache.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.mbcache.bench.RetainedMemory;
import org.mbcache.bench.XattrBench;
import org.mbcache.bench.report.JmhResults.Row;
import org.w3c.dom.Document;

class ResultTableTest {
    static final Tsc TSC = new Tsc(2.0, "test");

    static Row row(String bench, int threads, String backend, double ns, double bytes) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("backend", backend);
        p.put("load", "full");
        return new Row(bench, threads, 1, p, ns, 1.0, bytes);
    }

    static List<Row> sample() {
        return List.of(
                row("Micro.findFirstHit", 1, "caffeine", 30, 0),
                row("Micro.findFirstHit", 1, "mbcache", 10, 0.001),
                row("Micro.findFirstHit", 1, "caffeine-raw", 9, 0),
                row("Micro.findFirstHit", 2, "mbcache", 12, 0),
                row("Micro.findFirstHit", 2, "caffeine", 15, 0),
                row("Micro.createNew", 1, "mbcache", 20, 40),
                row("Micro.createNew", 1, "caffeine", 60, 90),
                row("Micro.createDuplicate", 1, "mbcache", 20, 0.2),
                row("Micro.createDuplicate", 1, "caffeine", 25, 0));
    }

    @Test
    void groupsByBenchmarkThreadsAndParamsAndOrdersBackends() {
        ResultTable t = new ResultTable(sample());
        assertEquals(4, t.groups().size());
        List<Row> g = t.groups().get(0);
        assertEquals(List.of("mbcache", "caffeine", "caffeine-raw"), g.stream().map(Row::backend).toList());
        assertEquals(3.0, ResultTable.speedup(g, g.get(0)), 1e-9);
        assertEquals(1.0, ResultTable.speedup(g, g.get(1)), 1e-9);
        assertTrue(Double.isNaN(ResultTable.speedup(List.of(g.get(0)), g.get(0))), "no caffeine row, no ratio");
    }

    @Test
    void markdownHasCyclesBytesAndRatio() {
        String md = new ResultTable(sample()).markdown(TSC);
        assertTrue(md.startsWith("| benchmark | threads | params | backend | ns/op |"));
        assertTrue(md.contains("| Micro.findFirstHit | 1 | load=full | mbcache | 10.0 | 1.00 | 20.0 | 0 | 3.00 |"), md);
        assertTrue(md.contains("| Micro.createNew | 1 | load=full | caffeine | 60.0 | 1.00 | 120 | 90 | 1.00 |"), md);
        assertTrue(md.contains("TSC cycles, not core cycles: ns/op × 2.000 GHz TSC"));
    }

    @Test
    void targetsReportMetAndMissed() {
        ResultTable t = new ResultTable(sample());
        List<Targets.Target> ts = Targets.evaluate(t, TSC, new Measured(List.of(
                new RetainedMemory.Result("mbcache", Double.NaN, 40), new RetainedMemory.Result("caffeine", Double.NaN, 100)),
                List.of(new XattrBench.Result("mbcache", 1, 10, 100, 10, "ok"),
                        new XattrBench.Result("caffeine", 1, 10, 50, 10, "ok"),
                        new XattrBench.Result("none", 1, 10, 120, 64, "ok")), List.of(), List.of()));
        Map<String, Targets.Status> s = new LinkedHashMap<>();
        ts.forEach(x -> s.put(x.name(), x.status()));
        // findFirstHit t=2 is 1.25x and createDuplicate 1.25x: below 1.5x
        assertEquals(Targets.Status.MISSED, ts.get(0).status());
        assertTrue(ts.get(0).measured().contains("Micro.findFirstHit t=2 load=full 1.25x"), ts.get(0).measured());
        assertEquals(Targets.Status.MET, ts.get(1).status(), "10 ns vs raw 9 ns is 1.11x");
        assertEquals(Targets.Status.MET, ts.get(2).status(), "0.2 B/op prints and counts as 0");
        assertEquals(Targets.Status.MET, ts.get(3).status());
        assertEquals(Targets.Status.MET, ts.get(4).status(), "20 ns x 2 GHz = 40 cycles");
        assertEquals(Targets.Status.MET, ts.get(5).status());
        assertEquals(Targets.Status.MISSED, ts.get(6).status(), "loses to none");
        String md = Targets.markdown(ts);
        assertTrue(md.contains("**MISSED**") && md.contains("| met |"));
    }

    @Test
    void svgIsWellFormedWithOneBarPerNonCaffeineRow() throws Exception {
        String svg = RatioChart.svg(new ResultTable(sample()), "t <&> \"x\"");
        Document d = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        assertEquals("svg", d.getDocumentElement().getNodeName());
        // 5 bars (mbcache x4, caffeine-raw x1) + the background rect
        assertEquals(6, d.getElementsByTagName("rect").getLength());
        assertEquals(2, d.getElementsByTagName("line").getLength());
        assertFalse(svg.contains("NaN"));
    }

    @Test
    void bytesRoundSmallFractionsToZero() {
        assertEquals("0", ResultTable.bytes(0.0));
        assertEquals("0", ResultTable.bytes(0.49));
        assertEquals("48", ResultTable.bytes(48.2));
        assertEquals("NaN", ResultTable.fmt(Double.NaN));
        assertEquals("123", ResultTable.fmt(123.4));
        assertEquals("12.3", ResultTable.fmt(12.34));
    }
}
