package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.runner.BenchmarkList;
import org.openjdk.jmh.runner.BenchmarkListEntry;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.VerboseMode;

class QuickRunTest {
    @Test
    void theForksFitTheMeasurementBudgetAndTheJobItsFourMinutes() {
        assertTrue(QuickRun.plannedSeconds() <= QuickRun.MEASUREMENT_BUDGET_S, QuickRun.plannedSeconds() + " s");
        assertTrue(QuickRun.MEASUREMENT_BUDGET_S < QuickRun.BUDGET_S);
        assertEquals(240, QuickRun.BUDGET_S, 0.0);
    }

    @Test
    void theFirstThreeRoundsAlwaysRunAndALaterOneOnlyIfItEndsWithinTheBudget() {
        assertTrue(QuickRun.anotherRoundFits(0, 0));
        assertTrue(QuickRun.anotherRoundFits(2, 1000), "three rounds run however slow the machine is");
        assertTrue(QuickRun.anotherRoundFits(3, 3 * 38), "at the planned pace a fourth round would fit");
        assertFalse(QuickRun.anotherRoundFits(3, 3 * 50),
                "a busy machine: a fourth round of 50 s would leave the hot-key and scale sections no time");
    }

    @Test
    void jmhsRefusalBecauseAnotherRunHoldsItsLockIsRecognised() {
        assertTrue(QuickRun.isJmhLockHeld("ERROR: Another JMH instance might be running. Unable to acquire the JMH lock "
                + "(/tmp/jmh.lock), exiting. Use -Djmh.ignoreLock=true to forcefully continue."));
        assertFalse(QuickRun.isJmhLockHeld("Benchmark had encountered error, and fail on error was requested"));
        assertFalse(QuickRun.isJmhLockHeld(null));
    }

    @Test
    void everyRowHasAtLeastThreeForksSoThatItsIntervalMeansSomething() {
        assertTrue(QuickRun.ROUNDS >= 3, "rounds: " + QuickRun.ROUNDS);
        assertEquals(QuickRun.ROUNDS * QuickRun.HEADLINES.size() * 2, QuickRun.forks());
    }

    @Test
    void theHeadlinesAreTheSixOperationsInTheirRegimesOnTheKernelPortAndTheCaffeineBackend() {
        assertEquals(List.of(Backends.MBCACHE, Backends.CAFFEINE), QuickRun.BACKENDS);
        assertEquals(List.of("findFirstHit@at", "findFirstMiss@at", "getRelease@at", "createDuplicate@at",
                        "createNew@below", "churn@at"),
                QuickRun.HEADLINES.stream().map(h -> h.benchmark() + "@" + h.bound()).toList());
    }

    @Test
    void everyForkHasAFixedPreTouchedHeapOneThreadAndTheGcProfiler() {
        for (QuickRun.Headline h : QuickRun.HEADLINES) {
            for (String backend : QuickRun.BACKENDS) {
                Options o = QuickRun.options(h, backend);
                List<String> jvm = List.copyOf(o.getJvmArgsAppend().get());
                assertTrue(jvm.contains("-XX:+AlwaysPreTouch"), jvm.toString());
                String xms = jvm.stream().filter(a -> a.startsWith("-Xms")).findFirst().orElseThrow();
                String xmx = jvm.stream().filter(a -> a.startsWith("-Xmx")).findFirst().orElseThrow();
                assertEquals(xms.substring(4), xmx.substring(4), "-Xms = -Xmx");
                assertEquals(1, o.getThreads().get());
                assertEquals(1, o.getForkCount().get(), "one fork a round");
                assertTrue(o.getProfilers().stream().anyMatch(p -> p.getKlass().endsWith("GCProfiler")));
                assertEquals(backend, o.getParameter("backend").get().iterator().next());
                assertEquals(h.bound(), o.getParameter("bound").get().iterator().next());
            }
        }
    }

    @Test
    void everyHeadlineMatchesExactlyItsBenchmarkInJmhsListWithParamsItsStateHas() {
        OutputFormat silent = OutputFormatFactory.createFormatInstance(System.out, VerboseMode.SILENT);
        for (QuickRun.Headline h : QuickRun.HEADLINES) {
            SortedSet<BenchmarkListEntry> found = BenchmarkList.defaultList().find(silent, List.of(h.regex()), List.of());
            assertEquals(1, found.size(), h.benchmark() + " matched " + found);
            Set<String> declared = found.first().getParams().get().keySet();
            Set<String> given = h.params(Backends.MBCACHE).keySet();
            assertTrue(declared.containsAll(given), h.benchmark() + ": " + given + " not all in " + declared);
            assertEquals(declared, given, h.benchmark() + ": every param fixed, so one fork is one run");
        }
    }

    @Test
    void aHeadlineNamingAMissingBenchmarkFailsLoudly() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> new QuickRun.Headline("gone", "noSuchBenchmark", Backends.AT));
        assertTrue(e.getMessage().contains("noSuchBenchmark"), e.getMessage());
    }

    @Test
    void aHeadlineInAnUnknownRegimeIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> new QuickRun.Headline("hit", "findFirstHit", "nowhere"));
    }

    @Test
    void theRunNoteSaysForksIterationsHeapAndPlan() {
        String note = QuickRun.runNote();
        assertTrue(note.contains(QuickRun.ROUNDS + " forks a row"), note);
        assertTrue(note.contains("-Xms1g -Xmx1g -XX:+AlwaysPreTouch"), note);
        assertTrue(note.contains("-prof gc"), note);
        assertFalse(note.contains("Target"), note);
    }

    @Test
    void keyIndexIsInRangeAndSkewed() {
        int n = 1 << 16;
        int[] u = KeyIndex.generate(KeyIndex.UNIFORM, n, 1);
        int[] z = KeyIndex.generate(KeyIndex.ZIPF, n, 1);
        assertEquals(KeyIndex.LENGTH, u.length);
        int[] counts = new int[n];
        for (int i : z) {
            assertTrue(i >= 0 && i < n);
            counts[i]++;
        }
        int max = Arrays.stream(counts).max().getAsInt();
        assertTrue(max > 20 * KeyIndex.LENGTH / n, "zipf has hot keys: " + max);
        for (int i : u) {
            assertTrue(i >= 0 && i < n);
        }
    }
}
