package org.mbcache.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.mbcache.CacheEntry;
import org.mbcache.CompactMbCache;
import org.mbcache.CreateStrategy;
import org.mbcache.DedupCache;
import org.mbcache.MbCache;
import org.mbcache.caffeine.CaffeineDedupCache;
import org.mbcache.testing.Backend;
import org.mbcache.testing.MemoryPressureSignal;

/**
 * The chain cap's second chance ({@code docs/contract.md}, section 4, "Chain cap"), run against
 * every {@link Backend} with a cap of two values a key: a touched entry nobody holds is passed over
 * once and loses its flag; a touched entry somebody holds is passed over as held and keeps its flag
 * for the next reclaim, which then spares it once more. Single-threaded, so every backend must give
 * the same answers.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
@ParameterizedClass(name = "{0}")
@EnumSource(Backend.class)
class ChainCapContractTest {

    static {
        MemoryPressureSignal.silence();
    }

    private static final int KEY = 0x5EED_CAFE;

    /** The backend under test. */
    @Parameter
    Backend backend;

    private DedupCache cache;

    @BeforeEach
    void openCache() {
        cache = withChainCap(backend, 2);
    }

    @AfterEach
    void closeCache() {
        cache.close();
    }

    /** A cache of the backend, one bucket where it has buckets, far from its bound, with this chain cap. */
    private static DedupCache withChainCap(Backend backend, int chainCap) {
        switch (backend) {
            case MBCACHE_REQUEST_LIST:
            case MBCACHE_ALLOCATE_FIRST:
                return MbCache.builder().bucketBits(0).maxEntries(4096).chainCap(chainCap)
                        .createStrategy(backend == Backend.MBCACHE_REQUEST_LIST ? CreateStrategy.REQUEST_LIST
                                : CreateStrategy.ALLOCATE_FIRST)
                        .executor(Runnable::run).build();
            case COMPACT:
                return CompactMbCache.builder().bucketBits(0).maxEntries(4096).chainCap(chainCap)
                        .executor(Runnable::run).build();
            case CAFFEINE:
                return CaffeineDedupCache.builder().maxEntries(4096).chainCap(chainCap).executor(Runnable::run).build();
            default:
                throw new AssertionError(backend);
        }
    }

    private boolean cached(long value) {
        CacheEntry entry = cache.get(KEY, value);
        if (entry == null) {
            return false;
        }
        cache.release(entry);
        return true;
    }

    private void touch(long value) {
        CacheEntry entry = cache.get(KEY, value);
        assertNotNull(entry, "value " + value);
        cache.touch(entry);
        cache.release(entry);
    }

    @Test
    void aTouchedEntryNobodyHoldsIsPassedOverOnceThenReclaimed() {
        assertTrue(cache.create(KEY, 1, true));
        touch(1);
        assertTrue(cache.create(KEY, 2, true));

        assertTrue(cache.create(KEY, 3, true)); // at the cap: 1 is passed over (its flag spent), 2 goes
        assertTrue(cached(1), "the touched entry was passed over");
        assertTrue(!cached(2), "the oldest untouched entry went");

        assertTrue(cache.create(KEY, 4, true)); // 1's flag is spent: it goes
        assertTrue(!cached(1), "a touch buys one second chance");
        assertTrue(cached(3) && cached(4));
        assertEquals(2, cache.stats().chainCapReclaims());
    }

    @Test
    void aTouchedEntrySomebodyHoldsKeepsItsFlagForTheNextReclaim() {
        assertTrue(cache.create(KEY, 1, true));
        CacheEntry held = cache.get(KEY, 1);
        cache.touch(held);
        assertTrue(cache.create(KEY, 2, true));

        assertTrue(cache.create(KEY, 3, true)); // 1 is held: passed over as held (2 goes, but on
        cache.release(held);                     // Caffeine, whose cap counts unheld values only, stays)

        assertTrue(cache.create(KEY, 4, true)); // 1 unheld now, its touch still unspent: 3 goes (and 2)
        assertTrue(cached(1), "the held entry's touch was spent while it could not be reclaimed");
        assertTrue(!cached(3));
        assertTrue(cached(4));
    }

    @Test
    void whenEveryUnheldEntryIsTouchedTheOldestGoesAnyway() {
        assertTrue(cache.create(KEY, 1, true));
        assertTrue(cache.create(KEY, 2, true));
        touch(1);
        touch(2);

        assertTrue(cache.create(KEY, 3, true));

        assertNull(cache.get(KEY, 1), "the oldest went once every flag was cleared");
        assertTrue(cached(2) && cached(3));
    }
}
