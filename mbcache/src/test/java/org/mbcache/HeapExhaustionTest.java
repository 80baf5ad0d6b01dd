package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The backends keep their word on {@link OutOfMemoryError} (docs/operations.md,
 * "Failures"): an allocation that fails inside an operation reaches the caller and leaves the cache
 * consistent, with no lock left held, no reference leaked and no entry half-created. Real failures,
 * not injected ones: {@link HeapExhaustionDriver} fills a small heap and drives the cache, in a
 * fresh JVM, and checks the cache afterwards. The driver's count of failed operations shows that
 * the operations did meet full heaps. The Caffeine backend is held to what it promises there: no
 * reference leaked, no pair left undeletable or uncreatable, no lock left held; its size and
 * statistics are not checked, since Caffeine allocates inside its own inserts after the backend
 * has counted the entry.
 *
 * <p>The driver JVMs share nothing, so they all start before the first case, two at a time, and
 * each case checks its own JVM's output (about half the time of one after the other on two cores).
 */
class HeapExhaustionTest {

    private static final Pattern FAILURES = Pattern.compile("failures=(\\d+)");

    /**
     * Backend and seed of each driver run. Seed 39 on the Caffeine backend met a full heap inside a
     * removal's compute, after the removed entry's count had gone to 0 and before its group was
     * copied without it: the dead entry stayed in its group, unseen by lookups and deletes, and its
     * pair could never be created again.
     */
    private static final List<List<String>> RUNS = List.of(List.of("mbcache", "42"), List.of("mbcache-allocfirst", "42"),
            List.of("compact", "42"), List.of("caffeine", "42"), List.of("caffeine", "39"));

    private static ExecutorService drivers;
    private static final Map<List<String>, Future<String>> OUTPUTS = new ConcurrentHashMap<>();

    static Stream<Arguments> runs() {
        return RUNS.stream().map(run -> Arguments.of(run.get(0), run.get(1)));
    }

    @BeforeAll
    static void startEveryDriver() {
        drivers = Executors.newFixedThreadPool(2, task -> {
            Thread thread = new Thread(task, "heap-exhaustion-driver");
            thread.setDaemon(true);
            return thread;
        });
        for (List<String> run : RUNS) {
            OUTPUTS.put(run, drivers.submit(() -> FreshJvm.run(List.of("-Xms16m", "-Xmx16m", "-XX:+UseSerialGC",
                    "-XX:-UseTLAB"), HeapExhaustionDriver.class, run.get(0), run.get(1))));
        }
    }

    @AfterAll
    static void stopTheDrivers() {
        drivers.shutdownNow();
    }

    @ParameterizedTest(name = "{0}, seed {1}")
    @MethodSource("runs")
    void operationsThatMeetAFullHeapLeaveTheCacheWhole(String backend, String seed) throws Throwable {
        String output;
        try {
            output = OUTPUTS.get(List.of(backend, seed)).get(5, TimeUnit.MINUTES);
        } catch (ExecutionException failed) {
            throw failed.getCause(); // the driver's assertion (or the module path's assumption) as it was thrown
        }
        assertTrue(output.contains(HeapExhaustionDriver.DONE), output);
        Matcher failures = FAILURES.matcher(output);
        assertTrue(failures.find(), output);
        assertTrue(Long.parseLong(failures.group(1)) >= 20, "too few operations met a full heap: " + output);
    }
}
