package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What only {@link ListEntry} shows of its hot mode: its own checks, read directly. A hot entry
 * counts a caller's references whichever thread takes or gives them back
 * ({@code heldByAnyCaller}, the check behind {@code findNext} and {@code deleteOrGet}), and a hot
 * entry that reclaim has freed can never be acquired again through a stale pointer
 * ({@code tryAcquire}, the lock-free lookup's step). The protocol itself, on both layouts:
 * {@link HotModeTest}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MbCacheHotEntryTest {
    private static final int KEY = 7;
    private static final long VALUE = 70;

    private MbCache cache;
    private OtherThread other;

    @BeforeEach
    void setUp() {
        cache = MbCache.builder().bucketBits(4).maxEntries(1 << 20).executor(Runnable::run).build();
        other = new OtherThread();
    }

    @AfterEach
    void tearDown() {
        other.close();
        cache.close();
    }

    /** The pair, cached and switched to hot mode; nobody holds it. */
    private ListEntry hotPair() {
        assertTrue(cache.create(KEY, VALUE, true));
        CacheEntry entry = cache.get(KEY, VALUE);
        assertTrue(HotEntries.makeHot(entry));
        cache.release(entry);
        return (ListEntry) entry;
    }

    @Test
    void aHotEntryIsHeldUntilTheLastReferenceTakenOnAnotherThreadIsReleased() throws Exception {
        ListEntry entry = hotPair();
        assertFalse(entry.heldByAnyCaller());
        List<CacheEntry> taken = other.call(() -> {
            List<CacheEntry> refs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                refs.add(cache.get(KEY, VALUE));
            }
            return refs;
        });
        assertTrue(entry.heldByAnyCaller());
        for (CacheEntry ref : taken) {
            assertTrue(entry.heldByAnyCaller());
            cache.release(ref);
        }
        assertFalse(entry.heldByAnyCaller());
    }

    @Test
    void aReclaimedHotEntryCannotBeAcquiredAgain() {
        ListEntry entry = hotPair();
        assertTrue(entry.tryAcquire());
        cache.release(entry);
        cache.shrink(Long.MAX_VALUE);
        cache.shrink(Long.MAX_VALUE); // the second pass after the second chance
        assertNull(cache.get(KEY, VALUE));
        assertEquals(0, cache.hotEntries());
        assertFalse(entry.tryAcquire());
    }
}
