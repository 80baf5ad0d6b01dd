package org.mbcache.stress;

import org.mbcache.DedupCache;
import org.mbcache.testing.Backend;

/** Linearizability of the Caffeine backend, its maintenance on the calling threads. */
public class CaffeineLincheckTest extends DedupCacheLincheckTest {

    /** A small cache whose maintenance runs on the calling threads, so the model checker sees it. */
    @Override
    protected DedupCache open() {
        return Backend.CAFFEINE.open();
    }
}
