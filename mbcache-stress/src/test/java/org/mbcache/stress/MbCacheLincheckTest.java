package org.mbcache.stress;

import org.mbcache.DedupCache;
import org.mbcache.testing.Backend;

/** Linearizability of the kernel port, with the request list (the default create strategy). */
public class MbCacheLincheckTest extends DedupCacheLincheckTest {

    /** A small two-bucket cache, so that both keys may share a chain. */
    @Override
    protected DedupCache open() {
        return Backend.MBCACHE_REQUEST_LIST.open();
    }
}
