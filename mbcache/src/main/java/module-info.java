/**
 * mbcache for the JVM: a concurrent deduplication cache ported from Linux {@code fs/mbcache.c}.
 *
 * <p>{@link org.mbcache.MbCache} is the kernel port; {@link org.mbcache.caffeine.CaffeineDedupCache}
 * implements the same {@link org.mbcache.DedupCache} contract on top of Caffeine, for comparison.
 * Caffeine is an optional dependency: only the {@code org.mbcache.caffeine} package needs it.
 */
module org.mbcache {
    requires java.management;
    requires static com.github.benmanes.caffeine;

    exports org.mbcache;
    exports org.mbcache.caffeine;
}
