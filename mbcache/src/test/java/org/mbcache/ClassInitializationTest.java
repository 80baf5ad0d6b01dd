package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A {@link Throwable} in a static initializer (an {@link OutOfMemoryError} on a full heap) marks the
 * class erroneous for the life of the JVM: every later use throws {@link NoClassDefFoundError}. A
 * class of the library that only a cache's first reclaim pass, chain-cap reclaim or pressure signal
 * initializes would take that operation down in every cache, for good. So every library class with
 * a static initializer is initialized by the time one cache of each backend has been built, and an
 * operation on an existing cache initializes none. Checked in a fresh JVM whose class-initialization
 * log ({@code -Xlog:class+init}) records each initialization, while {@link FirstUseDriver} runs every
 * operation after building its caches. (Caffeine's own classes are Caffeine's business; lambda
 * classes have no static initializer.)
 */
class ClassInitializationTest {

    @Test
    void noOperationInitializesALibraryClassWithAStaticInitializer() throws Exception {
        String output = FreshJvm.run(List.of("-Xlog:class+init=info"), FirstUseDriver.class);
        assertTrue(output.contains(FirstUseDriver.DONE), output);

        List<String> initializedByOperations = new ArrayList<>();
        boolean built = false;
        for (String line : output.split("\\R")) {
            if (line.contains(FirstUseDriver.BUILT)) {
                built = true;
            } else if (built && line.contains("Initializing 'org/mbcache/") && !line.contains("(no method)")
                    && !line.contains(FirstUseDriver.class.getSimpleName())) {
                initializedByOperations.add(line);
            }
        }
        assertTrue(built, output);
        assertEquals(List.of(), initializedByOperations);
    }
}
