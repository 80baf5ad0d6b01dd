package org.mbcache.stress;

import org.mbcache.DedupCache;
import org.mbcache.testing.Backend;

/** Linearizability of the kernel port, with mainline's allocate-first create. */
public class MbCacheAllocateFirstLincheckTest extends DedupCacheLincheckTest {

    /** A small two-bucket cache, so that both keys may share a chain. */
    @Override
    protected DedupCache open() {
        return Backend.MBCACHE_ALLOCATE_FIRST.open();
    }
}
