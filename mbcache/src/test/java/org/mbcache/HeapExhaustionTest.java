package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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
 */
class HeapExhaustionTest {

    private static final Pattern FAILURES = Pattern.compile("failures=(\\d+)");

    @ParameterizedTest
    @ValueSource(strings = {"mbcache", "mbcache-allocfirst", "compact", "caffeine"})
    void operationsThatMeetAFullHeapLeaveTheCacheWhole(String backend) throws Exception {
        String output = FreshJvm.run(List.of("-Xms16m", "-Xmx16m", "-XX:+UseSerialGC", "-XX:-UseTLAB"),
                HeapExhaustionDriver.class, backend, "42");
        assertTrue(output.contains(HeapExhaustionDriver.DONE), output);
        Matcher failures = FAILURES.matcher(output);
        assertTrue(failures.find(), output);
        assertTrue(Long.parseLong(failures.group(1)) >= 20, "too few operations met a full heap: " + output);
    }
}
