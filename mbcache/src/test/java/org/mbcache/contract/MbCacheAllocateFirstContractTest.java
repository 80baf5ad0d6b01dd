package org.mbcache.contract;

import org.mbcache.CreateStrategy;
import org.mbcache.DedupCache;
import org.mbcache.MbCache;

/** The {@link DedupCache} contract on the kernel port, {@link CreateStrategy#ALLOCATE_FIRST} strategy, 16 buckets. */
class MbCacheAllocateFirstContractTest extends DedupCacheContractTest {

    @Override
    protected DedupCache newCache(long maxEntries) {
        return MbCache.builder()
                .bucketBits(4)
                .maxEntries(maxEntries)
                .createStrategy(CreateStrategy.ALLOCATE_FIRST)
                .build();
    }
}
