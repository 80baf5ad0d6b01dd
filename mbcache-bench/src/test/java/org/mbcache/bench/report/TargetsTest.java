package org.mbcache.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.mbcache.bench.Flood;
import org.mbcache.bench.FoundShare;
import org.mbcache.bench.report.JmhResults.Row;

class TargetsTest {
    static Row row(String bench, int threads, String backend, String bound, double ns) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("backend", backend);
        if (bound != null) {
            p.put("bound", bound);
        }
        p.put("keys", "uniform");
        p.put("load", "full");
        return new Row(bench, threads, 1, p, ns, 1.0, 0);
    }

    static Flood.Result flood(String backend, double attackerNs, double victimDuringNs, double honestP999DuringNs) {
        return new Flood.Result(backend, 65_536, Flood.ONE_KEY, attackerNs, 100, 200, victimDuringNs, 1000, 1000, 1000,
                honestP999DuringNs, 131_072, 131_072, 0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
                Double.NaN, 0, 0, 0);
    }

    static Targets.Target named(List<Targets.Target> ts, String prefix) {
        return ts.stream().filter(t -> t.name().startsWith(prefix)).findFirst().orElseThrow();
    }

    static List<Targets.Target> evaluate(List<Row> rows, Measured m) {
        return Targets.evaluate(new ResultTable(rows), new Tsc(2.0, "test"), m);
    }

    @Test
    void scalingAppliesEachBenchmarksLimitPerRegime() {
        List<Row> rows = List.of(
                row("Micro.findFirstHit", 1, "mbcache", "at", 10), row("Micro.findFirstHit", 2, "mbcache", "at", 12),
                row("Micro.createNew", 1, "mbcache", "below", 20), row("Micro.createNew", 2, "mbcache", "below", 31),
                row("Micro.createNew", 1, "mbcache", "at", 20), row("Micro.createNew", 2, "mbcache", "at", 33));
        Targets.Target t = named(evaluate(rows, Measured.none()), "mbcache at 2 threads");
        assertEquals(Targets.Status.MISSED, t.status(), "createNew at the bound: 1.65x > 1.6x");
        assertTrue(t.measured().startsWith("3 pairs"), t.measured());
        assertTrue(t.measured().contains("Micro.createNew bound=at keys=uniform load=full 1.65x"), t.measured());
        assertTrue(!t.measured().contains("bound=below keys=uniform load=full 1.55x (limit"), "1.55x is within 1.6x");
    }

    @Test
    void findFirstIsComparedWithTheChmBaselineOfTheSameThreadsAndLoad() {
        List<Row> rows = List.of(
                row("Micro.findFirstHit", 1, "mbcache", "at", 12), row("Micro.findFirstHit", 2, "mbcache", "at", 14),
                row("Baseline.findFirstHit", 1, "chm", null, 10), row("Baseline.findFirstHit", 2, "chm", null, 10));
        Targets.Target t = named(evaluate(rows, Measured.none()), "findFirst+release within 1.25x of a ConcurrentHashMap");
        assertEquals(Targets.Status.MET, t.status(), t.measured());
        assertTrue(t.measured().contains("1.20x chm's time (limit 1.25)"), t.measured());
        assertTrue(t.measured().contains("1.40x chm's time (limit 1.50)"), t.measured());
    }

    @Test
    void theChmTargetSaysHowFarTheReferenceCountAloneIsFromChmAndTheHitFromThatFloor() {
        List<Row> rows = List.of(
                row("Micro.findFirstHit", 1, "mbcache", "at", 36), row("Micro.findFirstHit", 1, "mbcache", "below", 30),
                row("Baseline.findFirstHit", 1, "chm", null, 10), row("Baseline.findFirstHitCounted", 1, "chm", null, 24));
        Targets.Target t = named(evaluate(rows, Measured.none()), "findFirst+release within 1.25x of a ConcurrentHashMap");
        assertEquals(Targets.Status.MISSED, t.status(), t.measured());
        assertTrue(t.measured().contains("at 1 thread 2.40x chm's time, and the hit above 1.50x (bound=at), 1.25x (bound=below)"
                + " the floor's"), t.measured());
    }

    @Test
    void theChmTargetLeavesTheFloorOutWhenItWasNotMeasured() {
        List<Row> rows = List.of(row("Micro.findFirstHit", 1, "mbcache", "at", 12), row("Baseline.findFirstHit", 1, "chm", null, 10));
        Targets.Target t = named(evaluate(rows, Measured.none()), "findFirst+release within 1.25x of a ConcurrentHashMap");
        assertTrue(!t.measured().contains("floor"), t.measured());
    }

    @Test
    void floodTargetsCheckEveryFloodAgainstItsLimit() {
        List<Flood.Result> floods = new ArrayList<>(List.of(flood("mbcache", 300, 300, 1400), flood("caffeine", 500, 400, 1600)));
        List<Targets.Target> ts = evaluate(List.of(), new Measured(List.of(), List.of(), floods, List.of()));
        assertEquals(Targets.Status.MET, named(ts, "during a flood, victim").status(), "300 and 400 ns against 200 before: within 2x");
        assertEquals(Targets.Status.MISSED, named(ts, "during a flood, an attacker").status());
        assertTrue(named(ts, "during a flood, an attacker").measured().contains("caffeine one-key at 65,536 5.0x"));
        assertEquals(Targets.Status.MISSED, named(ts, "during a flood, honest").status(), "1.6x > 1.5x");
    }

    @Test
    void floodTargetsAreNotMeasuredWithoutAFlood() {
        List<Targets.Target> ts = evaluate(List.of(), Measured.none());
        assertEquals(Targets.Status.NOT_MEASURED, named(ts, "during a flood, victim").status());
        assertEquals(Targets.Status.NOT_MEASURED, named(ts, "real files").status());
    }

    @Test
    void foundShareNeedsNinetyNinePointNinePercentOfTheUnboundedIndex() {
        FoundShare.Result all = new FoundShare.Result("mbcache", "src.zip", 10_000, 2000, 1000, 1000);
        FoundShare.Result less = new FoundShare.Result("caffeine", "src.zip", 10_000, 2000, 998, 1000);
        assertEquals(Targets.Status.MET, named(evaluate(List.of(), new Measured(List.of(), List.of(), List.of(), List.of(all))),
                "real files").status());
        assertEquals(Targets.Status.MISSED, named(evaluate(List.of(), new Measured(List.of(), List.of(), List.of(), List.of(all, less))),
                "real files").status(), "99.8%");
    }

    @Test
    void theCreateWithReclaimTargetReadsTheRunAtTheBound() {
        List<Row> rows = List.of(row("Micro.createNew", 1, "mbcache", "below", 10), row("Micro.createNew", 1, "mbcache", "at", 50));
        Targets.Target t = named(evaluate(rows, Measured.none()), "new create with reclaim");
        assertTrue(t.measured().startsWith("100 TSC cycles (50.0 ns/op)"), t.measured());
    }

    @Test
    void foundShareIsNotMeasuredWhereTheFilesHaveNoDuplicateToFind() {
        FoundShare.Result none = new FoundShare.Result("mbcache", "dir", 172, 0, 0, 0);
        Targets.Target t = named(evaluate(List.of(), new Measured(List.of(), List.of(), List.of(), List.of(none))), "real files");
        assertEquals(Targets.Status.NOT_MEASURED, t.status());
        assertTrue(t.measured().contains("no duplicate found in dir"), t.measured());
    }

    @Test
    void scalingTableShowsBothTimesAndTheirRatio() {
        String md = new ResultTable(List.of(row("Micro.getRelease", 1, "mbcache", "below", 10),
                row("Micro.getRelease", 2, "mbcache", "below", 15))).scalingMarkdown();
        assertTrue(md.contains("| Micro.getRelease | bound=below keys=uniform load=full | mbcache | 2 | 10.0 | 15.0 | 1.50 |"), md);
    }

    @Test
    void scalingTableHasALinePerThreadCountAboveOneInThreadOrder() {
        String md = new ResultTable(List.of(row("Micro.getRelease", 8, "mbcache", "at", 40),
                row("Micro.getRelease", 1, "mbcache", "at", 10), row("Micro.getRelease", 4, "mbcache", "at", 20))).scalingMarkdown();
        int four = md.indexOf("| mbcache | 4 | 10.0 | 20.0 | 2.00 |");
        int eight = md.indexOf("| mbcache | 8 | 10.0 | 40.0 | 4.00 |");
        assertTrue(four > 0 && eight > four, md);
    }
}
