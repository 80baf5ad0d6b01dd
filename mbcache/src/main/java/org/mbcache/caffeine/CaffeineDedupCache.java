package org.mbcache.caffeine;

/** Placeholder: the Caffeine backend is being written. */
public final class CaffeineDedupCache {
    private CaffeineDedupCache() {}
}
