/**
 * Micrometer meters for every {@link org.mbcache.DedupCache}: {@link org.mbcache.micrometer.MbCacheMetrics}.
 *
 * <p>Micrometer ({@code io.micrometer:micrometer-core}) is an optional dependency of the library:
 * only this package needs it. An application that publishes the meters puts Micrometer on its class
 * path, or on the module path it requires {@code micrometer.core} itself; the caches work without it.
 */
package org.mbcache.micrometer;
