package org.mbcache.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mbcache.MbCache;

/**
 * The usage the documentation shows for publishing a cache's meters, as printed there: the lines
 * between the markers are the snippet, word for word.
 */
class MbCacheMetricsUsageTest {

    @Test
    void theDocumentedSnippetPublishesTheCachesMetersTaggedAsGiven() {
        MeterRegistry registry = new SimpleMeterRegistry();
        // snippet:begin
        MbCache cache = MbCache.builder().build();
        MbCacheMetrics.monitor(registry, cache, "xattr", "region", "eu");
        // snippet:end
        try (cache) {
            cache.create(42, 4200, true);
            assertEquals(1, registry.get("cache.size").tags("cache", "xattr", "region", "eu").gauge().value());
            for (String name : List.of("cache.gets", "cache.puts", "cache.evictions", "cache.duplicates",
                    "cache.deletes", "cache.reclaim.passes", "cache.chain.cap.reclaims")) {
                assertNotNull(registry.find(name).tags("cache", "xattr", "region", "eu").meter(), name);
            }
        }
    }
}
