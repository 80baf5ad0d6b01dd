package org.mbcache.contract;

import org.mbcache.DedupCache;
import org.mbcache.caffeine.CaffeineDedupCache;

/** The {@link DedupCache} contract on the Caffeine backend, maintenance on the common pool. */
class CaffeineDedupCacheContractTest extends DedupCacheContractTest {

    @Override
    protected DedupCache newCache(long maxEntries) {
        return CaffeineDedupCache.create(maxEntries);
    }
}
