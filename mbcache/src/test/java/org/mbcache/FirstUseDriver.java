package org.mbcache;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.mbcache.caffeine.CaffeineDedupCache;

/**
 * The program {@link ClassInitializationTest} runs in a fresh JVM: builds one cache of each backend,
 * prints {@value #BUILT}, then drives every operation, the rare paths included (synchronous,
 * background and requested passes, the chain cap, a memory-pressure signal, {@code waitUnused},
 * misuse that throws, {@code close}), and prints {@value #DONE}.
 */
final class FirstUseDriver {
    static final String BUILT = "first-use-driver: built";
    static final String DONE = "first-use-driver: done";

    private FirstUseDriver() {}

    public static void main(String[] args) throws InterruptedException {
        MbCache kernelPort = MbCache.builder().bucketBits(2).maxEntries(4).chainCap(3).hashSeed(1)
                .executor(Runnable::run).build();
        DedupCache caffeine = CaffeineDedupCache.builder().maxEntries(4).chainCap(3).executor(Runnable::run).build();
        System.out.println(BUILT);
        kernelPort.onMemoryPressure();
        for (DedupCache cache : List.of(kernelPort, caffeine)) {
            drive(cache);
        }
        System.out.println(DONE);
    }

    private static void drive(DedupCache cache) throws InterruptedException {
        for (int i = 0; i < 40; i++) {
            cache.create(i % 3, i, i % 2 == 0); // past twice the bound, and every key past the cap
        }
        cache.create(0, 39, true); // a duplicate
        cache.shrink(100);
        for (int i = 0; i < 8; i++) {
            cache.create(7, 100 + i, true);
        }
        CacheEntry first = cache.findFirst(7);
        cache.touch(first);
        first.setReusable(false);
        first.setReusable(true);
        CacheEntry next = cache.findNext(first);
        CacheEntry held = cache.get(7, 107);
        CacheEntry busy = cache.deleteOrGet(7, 107); // held: handed back
        cache.waitUnused(busy, 1, TimeUnit.MILLISECONDS);
        cache.release(busy);
        cache.release(held);
        try {
            cache.release(held);
        } catch (IllegalStateException overReleased) {
            // expected
        }
        cache.waitUnused(next);
        next.close();
        cache.findFirst(12345);
        cache.stats();
        cache.size();
        cache.toString();
        cache.close();
        try {
            cache.size();
        } catch (IllegalStateException closed) {
            // expected
        }
    }
}
