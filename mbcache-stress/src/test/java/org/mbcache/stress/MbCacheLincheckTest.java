package org.mbcache.stress;

import org.mbcache.CreateStrategy;
import org.mbcache.DedupCache;
import org.mbcache.MbCache;

/** Linearizability of the kernel port, with the request list (the default create strategy). */
public class MbCacheLincheckTest extends DedupCacheLincheckTest {

    /** A two-bucket cache, so that both keys may share a chain. */
    @Override
    protected DedupCache open() {
        return MbCache.builder().bucketBits(1).createStrategy(CreateStrategy.REQUEST_LIST).build();
    }
}
