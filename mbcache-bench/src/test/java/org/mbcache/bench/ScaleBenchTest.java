package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The {@code scale} command's arguments, checked before any child JVM starts, its table's columns and
 * words, and the pauses its child counts.
 */
class ScaleBenchTest {

    @Test
    void noArgumentsMeanEveryBackendAtTheDefaultSizes() {
        ScaleBench.Options options = ScaleBench.Options.parse(new String[0]);
        assertEquals(List.of(100_000L, 1_000_000L), options.sizes);
        assertEquals(ScaleBench.BACKENDS, options.backends);
        assertTrue(options.jvmArgs.isEmpty());
        assertEquals(0, options.turnovers);
    }

    @Test
    void turnoversAreANumberFromZeroToAHundred() {
        assertEquals(3, ScaleBench.Options.parse(new String[] {"--turnovers", "3", "compact"}).turnovers);
        assertThrows(IllegalArgumentException.class, () -> ScaleBench.Options.parse(new String[] {"--turnovers"}));
        assertThrows(IllegalArgumentException.class, () -> ScaleBench.Options.parse(new String[] {"--turnovers", "-1"}));
        assertThrows(IllegalArgumentException.class, () -> ScaleBench.Options.parse(new String[] {"--turnovers", "101"}));
        assertThrows(IllegalArgumentException.class, () -> ScaleBench.Options.parse(new String[] {"--turnovers", "x"}));
    }

    @Test
    void sizesBackendsAndJvmArgumentsAreTakenInOrder() {
        ScaleBench.Options options = ScaleBench.Options.parse(new String[] {
            "--sizes", "10000, 20000", "compact", "--jvm-arg", "-XX:+UseParallelGC", "mbcache-allocfirst"});
        assertEquals(List.of(10_000L, 20_000L), options.sizes);
        assertEquals(List.of("compact", "mbcache-allocfirst"), options.backends);
        assertEquals(List.of("-XX:+UseParallelGC"), options.jvmArgs);
    }

    @Test
    void aHelpOptionAsksForTheUsage() {
        assertNull(ScaleBench.Options.parse(new String[] {"compact", "--help"}));
        assertTrue(ScaleBench.USAGE.contains("fastutil-counted"), ScaleBench.USAGE);
        assertTrue(ScaleBench.USAGE.contains(", counted,"), ScaleBench.USAGE);
        assertTrue(ScaleBench.USAGE.contains("hit2t, miss2t: "), ScaleBench.USAGE);
        assertTrue(ScaleBench.USAGE.contains("runGcPauses, runGcMaxMs: "), ScaleBench.USAGE);
    }

    @Test
    void anUnknownBackendOrOptionIsRefused() {
        IllegalArgumentException backend = assertThrows(IllegalArgumentException.class,
                () -> ScaleBench.Options.parse(new String[] {"compactt"}));
        assertTrue(backend.getMessage().contains("compactt"), backend.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ScaleBench.Options.parse(new String[] {"--size", "1000"}));
    }

    @Test
    void aMissingOrBadSizeIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> ScaleBench.Options.parse(new String[] {"--sizes"}));
        assertThrows(IllegalArgumentException.class, () -> ScaleBench.Options.parse(new String[] {"--sizes", "1e6"}));
        assertThrows(IllegalArgumentException.class, () -> ScaleBench.Options.parse(new String[] {"--sizes", "999"}));
        assertThrows(IllegalArgumentException.class, () -> ScaleBench.Options.parse(new String[] {"--jvm-arg"}));
    }

    @Test
    void theTurnedOverColumnIsShownOnlyWhereAChildReportedIt() {
        Map<String, String> compact = new java.util.LinkedHashMap<>(row("compact", "286", "21.7", "300", "390"));
        assertTrue(ScaleBench.table(List.of(compact)).startsWith("| backend | n | B/entry | churnedB/entry | hit |"));
        compact.put("turnedB/entry", "28.9");
        String table = ScaleBench.table(List.of(compact));
        assertTrue(table.startsWith("| backend | n | B/entry | churnedB/entry | turnedB/entry | hit |"), table);
        assertTrue(table.contains("| 28.9 |"), table);
    }

    private static Map<String, String> row(String backend, String hit, String miss, String dup, String churn) {
        return row(backend, hit, hit, miss, dup, churn);
    }

    private static Map<String, String> row(String backend, String hit, String batchHit, String miss, String dup,
                                           String churn) {
        Map<String, String> row = new LinkedHashMap<>();
        row.put("backend", backend);
        row.put("n", "1000000");
        row.put("hit", hit);
        row.put("batch-hit", batchHit);
        row.put("miss", miss);
        row.put("dup", dup);
        row.put("churn", churn);
        return row;
    }

    @Test
    void everyRatioSaysInWordsWhatItIsComparedWithAndIsComputedFromTheRows() {
        String table = ScaleBench.table(List.of(
                row("compact", "286", "97.5", "21.7", "300", "390"),
                row("mbcache", "309", "21.9", "350", "1003"),
                row("fastutil", "26.2", "18.1", "20.0", "107"),
                row("counted", "52.0", "18.0", "20.0", "90.0"),
                row("fastutil-counted", "69.4", "18.1", "20.0", "107")));
        assertTrue(table.contains("At 1,000,000 entries, each figure is one time over another from this run"), table);
        assertTrue(table.contains(String.format(Locale.ROOT, "- compact hit = %.2fx the counted floor (an open-address "
                + "table whose 16-byte slot holds key, count and value", 286 / 52.0)), table);
        assertTrue(table.contains(String.format(Locale.ROOT, "- counted hit = %.2fx fastutil's get (what the counted "
                + "floor's two CASes cost)", 52.0 / 26.2)), table);
        assertTrue(table.contains(String.format(Locale.ROOT, "- compact hit = %.2fx fastutil's get plus a reference taken "
                + "and given back by CAS on a count word in a line of its own", 286 / 69.4)), table);
        assertTrue(table.contains(String.format(Locale.ROOT, "- compact batch-hit = %.2fx fastutil's get (per key: "
                + "findFirstHandles over 16 present keys a call", 97.5 / 26.2)), table);
        assertTrue(table.contains(String.format(Locale.ROOT, "- compact hit = %.2fx compact's batch-hit (the same hits one "
                + "findFirstHandle at a time", 286 / 97.5)), table);
        assertTrue(table.contains("| compact | 1000000 |  |  | 286 | 97.5 | 21.7 |"), table);
        assertTrue(table.contains(String.format(Locale.ROOT, "- compact hit = %.1fx fastutil's get (", 286 / 26.2)), table);
        assertTrue(table.contains(String.format(Locale.ROOT, "- compact churn = %.2fx fastutil's put-new-remove-oldest (",
                390 / 107.0)), table);
        assertTrue(table.contains(String.format(Locale.ROOT, "- compact churn = %.2fx mbcache's (the same kernel port with an "
                + "object per entry; below 1: the compact layout is faster)", 390 / 1003.0)), table);
        assertFalse(table.toLowerCase(Locale.ROOT).contains("target"), table);
    }

    @Test
    void theTableHasTheTwoThreadAndRunWideColumnsAndComparesTwoThreadsWithOne() {
        Map<String, String> compact = row("compact", "286", "21.7", "300", "390");
        compact.put("hit2t", "343");
        compact.put("miss2t", "21.7");
        compact.put("runGcPauses", "3");
        compact.put("runGcMaxMs", "12");
        Map<String, String> fastutil = row("fastutil", "26.2", "18.1", "20.0", "107");
        fastutil.put("hit2t", "39.3");
        Map<String, String> counted = row("counted", "52.0", "18.0", "20.0", "90.0");
        counted.put("miss2t", "27.0");
        Map<String, String> api = row("compact-api", "300", "22.0", "310", "400");
        api.put("hit2t", "360");
        String table = ScaleBench.table(List.of(compact, fastutil, counted, api));
        assertTrue(table.startsWith("| backend | n | B/entry | churnedB/entry | hit | batch-hit | miss | dup | churn | hit2t | miss2t | hitB/op |"),
                table);
        assertTrue(table.contains("| otherCpuMs | runGcPauses | runGcMaxMs |\n"), table);
        assertTrue(table.contains("| compact | 1000000 |  |  | 286 | 286 | 21.7 | 300 | 390 | 343 | 21.7 |"), table);
        assertTrue(table.contains(" | 3 | 12 |\n"), table);
        String words = " (2-thread time over 1-thread time: two threads at once over the same structure, the slower one's "
                + "ns/op, over one thread alone; 1: the second thread costs the first nothing)";
        assertTrue(table.contains(String.format(Locale.ROOT, "- compact hit2t = %.2fx compact's hit", 343 / 286.0) + words),
                table);
        assertTrue(table.contains("- compact miss2t = 1.00x compact's miss" + words), table);
        assertTrue(table.contains("- fastutil hit2t = 1.50x fastutil's hit" + words), table);
        assertTrue(table.contains("- counted miss2t = 1.50x counted's miss" + words), table);
        assertFalse(table.contains("fastutil miss2t"), table);
        assertFalse(table.contains("counted hit2t"), table);
        assertFalse(table.contains("compact-api hit2t"), table);
    }

    @Test
    void theRunsPausesLeaveOutExplicitCollectionsAndCountTheOthers() {
        ScaleBench.GcPauses explicit = ScaleBench.GcPauses.start();
        System.gc();
        System.gc();
        explicit.close();
        assertEquals(0, explicit.pauses(), "System.gc() is the retained-memory measurement's, not a pause of the run");

        ScaleBench.GcPauses allocation = ScaleBench.GcPauses.start();
        long before = collections();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (collections() == before && System.nanoTime() < deadline) {
            for (int i = 0; i < 1024; i++) {
                garbage = new byte[4096];
            }
        }
        allocation.close();
        assertTrue(collections() > before, "no collection in 20 s of allocation");
        assertTrue(allocation.pauses() >= 1, "the collection allocation caused is not counted");
        assertTrue(allocation.maxMs() <= allocation.totalMs());
    }

    /** Where the allocation loop's arrays go, so that they are not eliminated. */
    static volatile byte[] garbage;

    private static long collections() {
        long count = 0;
        for (GarbageCollectorMXBean collector : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, collector.getCollectionCount());
        }
        return count;
    }

    @Test
    void aComparisonWithABackendThatDidNotRunIsLeftOut() {
        String table = ScaleBench.table(List.of(row("compact", "286", "21.7", "300", "390"),
                row("fastutil", "26.2", "18.1", "20.0", "107")));
        assertFalse(table.contains("counted floor"), table);
        assertFalse(table.contains("mbcache's"), table);
        assertTrue(table.contains("- compact miss = 1.20x fastutil's miss"), table);
    }
}
