package org.mbcache.bench;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@link Filled} for {@code createNew}, whose every operation adds a pair. Below the bound the
 * cache grows during an iteration (it fills up, as after a restart) and the teardown of each
 * iteration takes it back to 65,536 entries, outside the measurement; mbcache then gets bucketBits
 * {@value Backends#BELOW_CREATE_BUCKET_BITS}, so that the fill is 1 a bucket and the chains grow
 * to about the design load's 16 during a main-job iteration instead of far past it (longer
 * iterations take them further). At the bound nothing changes: reclaim keeps the cache at its fill.
 */
@State(Scope.Benchmark)
public class Growing extends Filled {
    @Override
    int bucketBits() {
        return Backends.BELOW.equals(bound) ? Backends.BELOW_CREATE_BUCKET_BITS : Backends.BUCKET_BITS;
    }

    /**
     * Below the bound, takes the cache back to the design load after each iteration (oldest
     * entries first), so every iteration starts from the same fill and none ever reaches the bound.
     */
    @TearDown(Level.Iteration)
    public void backToDesignLoad() {
        if (!Backends.BELOW.equals(bound)) {
            return;
        }
        int n = Backends.MAX_ENTRIES;
        if (raw != null) {
            raw.policy().eviction().ifPresent(e -> {
                e.setMaximum(n);
                raw.cleanUp();
                e.setMaximum(Backends.BELOW_MAX_ENTRIES);
            });
            return;
        }
        // a pass gives referenced entries a second chance instead of freeing them: a few passes
        for (int pass = 0; pass < 4 && cache.size() > n; pass++) {
            cache.shrink(cache.size() - n);
        }
    }
}
