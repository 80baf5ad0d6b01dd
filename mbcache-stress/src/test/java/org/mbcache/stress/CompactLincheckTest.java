package org.mbcache.stress;

import org.mbcache.DedupCache;
import org.mbcache.testing.Backend;

/** Linearizability of the kernel port in the compact layout. */
public class CompactLincheckTest extends DedupCacheLincheckTest {

    /** A small two-bucket cache, so that both keys may share a chain. */
    @Override
    protected DedupCache open() {
        return Backend.COMPACT.open();
    }
}
