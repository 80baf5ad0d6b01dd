package org.mbcache;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import org.mbcache.testing.MemoryPressureSignal;

/**
 * The program {@link MemoryPressureRegistryTest} runs in a fresh JVM, where no cache has registered
 * yet: with the argument {@value #PRESET}, first keeps pressure passes out as an application may
 * ({@link MemoryPressureSignal#silence}); then builds a cache (with the argument {@value #OPTED_OUT},
 * one built without memory-pressure reclaim) and prints one line per heap pool that has a threshold:
 * {@code pool <threshold> <max> <name>}.
 */
final class PressureThresholdDriver {
    static final String PRESET = "preset";
    static final String OPTED_OUT = "opted-out";
    static final String LINE = "pool ";

    private PressureThresholdDriver() {}

    public static void main(String[] args) {
        boolean preset = args.length > 0 && PRESET.equals(args[0]);
        boolean optedOut = args.length > 0 && OPTED_OUT.equals(args[0]);
        if (preset) {
            MemoryPressureSignal.silence();
        }
        try (MbCache cache = MbCache.builder().bucketBits(2).memoryPressureReclaim(!optedOut).build()) {
            for (MemoryPoolMXBean pool : heapPoolsWithThresholds()) {
                System.out.println(LINE + pool.getCollectionUsageThreshold() + " " + pool.getUsage().getMax()
                        + " " + pool.getName());
            }
        }
    }

    private static Iterable<MemoryPoolMXBean> heapPoolsWithThresholds() {
        return ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(pool -> pool.getType() == MemoryType.HEAP && pool.isCollectionUsageThresholdSupported())
                .filter(pool -> pool.getUsage().getMax() > 0)
                .toList();
    }
}
