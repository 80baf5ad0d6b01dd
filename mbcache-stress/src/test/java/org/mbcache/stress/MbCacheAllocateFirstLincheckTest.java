package org.mbcache.stress;

import org.mbcache.CreateStrategy;
import org.mbcache.DedupCache;
import org.mbcache.MbCache;

/** Linearizability of the kernel port with mainline's allocate-first create. */
public class MbCacheAllocateFirstLincheckTest extends DedupCacheLincheckTest {

    /** A two-bucket cache, so that both keys may share a chain. */
    @Override
    protected DedupCache open() {
        return MbCache.builder().bucketBits(1).createStrategy(CreateStrategy.ALLOCATE_FIRST).build();
    }
}
