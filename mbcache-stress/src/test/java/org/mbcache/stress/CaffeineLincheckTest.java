package org.mbcache.stress;

import org.mbcache.DedupCache;
import org.mbcache.caffeine.CaffeineDedupCache;

/** Linearizability of the Caffeine backend, with its maintenance on the calling threads. */
public class CaffeineLincheckTest extends DedupCacheLincheckTest {

    /** A small cache whose maintenance runs inline, so every interleaving is the test threads' own. */
    @Override
    protected DedupCache open() {
        return CaffeineDedupCache.builder().maxEntries(64).executor(Runnable::run).build();
    }

    /** Caffeine's computes pass through many more shared fields, so each interleaving costs more. */
    @Override
    protected int modelCheckingInvocations() {
        return 30;
    }
}
