package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.mbcache.DedupCache;

/** The benchmarks' backend names are the project's one list of backends. */
class BackendsTest {

    @Test
    void theParamConstantsAreTheLabelsOfEveryBackend() {
        assertEquals(List.of(Backends.MBCACHE, Backends.MBCACHE_ALLOCFIRST, Backends.COMPACT, Backends.CAFFEINE), Backends.DEDUP);
    }

    @Test
    void everyLabelOpensItsBackend() {
        for (String label : Backends.DEDUP) {
            DedupCache cache = Backends.dedup(label, 4, 64, Runnable::run);
            cache.close();
        }
    }

    @Test
    void theRawFloorIsNotADedupCache() {
        assertThrows(IllegalArgumentException.class, () -> Backends.dedup(Backends.CAFFEINE_RAW, 4, 64, Runnable::run));
    }
}
