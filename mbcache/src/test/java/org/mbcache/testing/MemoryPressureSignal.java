package org.mbcache.testing;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;

/**
 * The JVM's heap-pressure signal, to which every open {@code MbCache} answers with reclaim passes:
 * a collection-usage threshold on the heap pools, which the cache's registry sets (80 % of the
 * maximum) when the first cache is built, unless the application set one already.
 */
public final class MemoryPressureSignal {

    private MemoryPressureSignal() {
    }

    /**
     * Keeps pressure passes out of this JVM, as an application may: sets the collection-usage threshold
     * of every heap pool that has one to the pool's maximum, which a pool never still fills after a
     * collection. Call it before the first cache is built; the registry then keeps these thresholds.
     */
    public static void silence() {
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP && pool.isCollectionUsageThresholdSupported()) {
                long max = pool.getUsage().getMax();
                pool.setCollectionUsageThreshold(max > 0 ? max : Long.MAX_VALUE);
            }
        }
    }
}
