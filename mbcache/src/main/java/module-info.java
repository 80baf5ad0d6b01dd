/**
 * mbcache for the JVM: a concurrent deduplication cache ported from Linux {@code fs/mbcache.c}.
 *
 * <p>{@link org.mbcache.MbCache} is the kernel port; {@link org.mbcache.caffeine.CaffeineDedupCache}
 * implements the same {@link org.mbcache.DedupCache} contract on top of Caffeine, for comparison.
 * Caffeine is an optional dependency: only the {@code org.mbcache.caffeine} package needs it, and an
 * application on the module path that uses it requires {@code com.github.benmanes.caffeine} itself.
 * {@code jdk.jfr} carries the cache's flight-recorder events (reclaim passes, memory pressure, chains
 * at their cap), recorded only while a recording enables them. Micrometer is optional too: only
 * {@code org.mbcache.micrometer} needs it, and an application on the module path that publishes the
 * caches' meters requires {@code micrometer.core} itself.
 */
module org.mbcache {
    requires java.management;
    requires jdk.jfr;
    requires static com.github.benmanes.caffeine;
    requires static micrometer.core;

    exports org.mbcache;
    exports org.mbcache.caffeine;
    exports org.mbcache.micrometer;
}
