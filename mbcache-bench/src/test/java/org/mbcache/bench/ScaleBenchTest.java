package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The {@code scale} command's arguments, checked before any child JVM starts. */
class ScaleBenchTest {

    @Test
    void noArgumentsMeanEveryBackendAtTheDefaultSizes() {
        ScaleBench.Options options = ScaleBench.Options.parse(new String[0]);
        assertEquals(List.of(100_000L, 1_000_000L), options.sizes);
        assertEquals(ScaleBench.BACKENDS, options.backends);
        assertTrue(options.jvmArgs.isEmpty());
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
}
