package org.mbcache.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;
import org.mbcache.testing.Backend;

/**
 * The {@link DedupCache} contract's races ({@code docs/contract.md}, section 6), several of them the
 * shape of a race the kernel cache had, run against every {@link Backend}. Each is bounded in
 * rounds and time, so a broken backend fails an assertion rather than hanging the build; the
 * JCStress races of the stress module try the same windows in far more interleavings.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
@ParameterizedClass(name = "{0}")
@EnumSource(Backend.class)
class ConcurrencyContractTest extends DedupCacheFixture {

    /**
     * A steady create load and a thread that touches entries every turn cannot keep a pass from
     * ending: it is bounded by the entries present when it started.
     */
    @Test
    void shrinkOfLongMaxValueReturnsUnderConcurrentCreatesAndTouches() throws Exception {
        for (int key = 0; key < 1000; key++) {
            cache.create(key, key, true);
        }
        List<CacheEntry> held = new ArrayList<>(); // handed to the toucher
        for (int key = 0; key < 8; key++) {
            held.add(cache.get(key, key));
        }
        AtomicInteger stop = new AtomicInteger();
        Future<Void> creator = inThread(() -> {
            for (int key = 1_000_000; stop.get() == 0; key++) {
                cache.create(key, key, true);
            }
        });
        Future<Void> toucher = inThread(() -> {
            while (stop.get() == 0) { // every walk of the pass finds a flag to clear
                held.forEach(cache::touch);
            }
        });
        try {
            assertTimeoutPreemptively(Duration.ofSeconds(PATIENCE_SECONDS * 2),
                    () -> cache.shrink(Long.MAX_VALUE), "shrink(Long.MAX_VALUE) did not return");
        } finally {
            stop.set(1);
            join(creator);
            join(toucher);
            held.forEach(cache::release);
        }
    }

    @Test
    void racingCreatorsOfOnePairExactlyOneWins() throws Exception {
        int threads = 4;
        AtomicInteger winners = new AtomicInteger();
        ConcurrentRounds.run(threads, 400,
                round -> winners.set(0),
                (thread, round) -> {
                    if (cache.create(round, round * 7L, true)) {
                        winners.incrementAndGet();
                    }
                },
                round -> {
                    assertEquals(1, winners.get(), "winners of round " + round);
                    assertEquals(List.of(round * 7L), walk(round), "exactly one entry for the pair");
                    assertNull(cache.deleteOrGet(round, round * 7L));
                });
        assertEquals(0, cache.size());
    }

    @Test
    void racingCreatorsOfOnePairAmongOtherValuesOfTheKeyExactlyOneWins() throws Exception {
        int threads = 2;
        AtomicInteger winners = new AtomicInteger();
        ConcurrentRounds.run(threads, 300,
                round -> winners.set(0),
                (thread, round) -> {
                    cache.create(KEY, 1_000_000L + round * 2L + thread, true); // a distinct value per thread
                    if (cache.create(KEY, round, true)) {
                        winners.incrementAndGet();
                    }
                },
                round -> {
                    assertEquals(1, winners.get(), "winners of round " + round);
                    assertNull(cache.deleteOrGet(KEY, round));
                    assertNull(cache.get(KEY, round));
                    for (int thread = 0; thread < threads; thread++) { // within any per-key cap
                        assertNull(cache.deleteOrGet(KEY, 1_000_000L + round * 2L + thread));
                    }
                });
        assertEquals(0, cache.size());
    }

    /** Reuse vs release (ext4 65f8b80053a1): the holder's entry stays cached while held. */
    @Test
    void anEntrySomebodyHoldsIsNeverDeletedByDeleteOrGet() throws Exception {
        ConcurrentRounds.run(2, 500,
                round -> assertTrue(cache.create(KEY, round, true)),
                (thread, round) -> {
                    if (thread == 0) {
                        CacheEntry entry = cache.findFirst(KEY);
                        if (entry != null) {
                            assertEquals(round, entry.value());
                            CacheEntry same = cache.get(KEY, round);
                            assertNotNull(same, "the pair was deleted while a caller held it");
                            cache.release(same);
                            cache.release(entry);
                        }
                    } else {
                        deleteTheExt4Way(KEY, round);
                    }
                },
                round -> {
                    assertNull(cache.get(KEY, round));
                    assertEquals(0, cache.size());
                });
    }

    /** ext4's pattern: deleteOrGet; if somebody holds the entry, wait until unused, release, retry. */
    private void deleteTheExt4Way(int key, long value) throws InterruptedException {
        for (int attempt = 0; ; attempt++) {
            CacheEntry inUse = cache.deleteOrGet(key, value);
            if (inUse == null) {
                return;
            }
            assertTrue(attempt < 10_000, "deleteOrGet kept returning the entry");
            try {
                assertTrue(cache.waitUnused(inUse, PATIENCE_SECONDS, TimeUnit.SECONDS), "waitUnused did not wake");
            } finally {
                cache.release(inUse);
            }
        }
    }

    /** Reclaim vs user (58318914186c). */
    @Test
    void reclaimNeverFreesAnEntrySomebodyHolds() throws Exception {
        ConcurrentRounds.run(2, 1, round -> {}, (thread, round) -> {
            for (int i = 0; i < 3000; i++) {
                if (thread == 0) {
                    CacheEntry entry = cache.findFirst(KEY);
                    if (entry != null) {
                        for (int check = 0; check < 3; check++) {
                            CacheEntry same = cache.get(KEY, entry.value());
                            assertNotNull(same, "reclaim freed an entry a caller held");
                            cache.release(same);
                        }
                        cache.release(entry);
                    }
                } else {
                    cache.create(KEY, i % 4, true);
                    cache.shrink(Long.MAX_VALUE);
                }
            }
        }, round -> {});
    }

    /** Create vs deleteOrGet (5fc4cbd9fde5): size equals the live entries and is never negative. */
    @Test
    void sizeEqualsTheLiveEntriesUnderCreateVsDeleteOrGet() throws Exception {
        int pairs = 8;
        ConcurrentRounds.run(2, 1, round -> {}, (thread, round) -> {
            for (int i = 0; i < 4000; i++) {
                int pair = (i * 7 + thread) % pairs;
                if ((i + thread) % 2 == 0) {
                    cache.create(KEY, pair, true);
                } else {
                    CacheEntry held = cache.deleteOrGet(KEY, pair);
                    if (held != null) {
                        cache.release(held);
                    }
                }
                long size = cache.size();
                assertTrue(size >= 0 && size <= pairs, "size " + size);
            }
        }, round -> {});
        long live = 0;
        for (int pair = 0; pair < pairs; pair++) {
            if (cached(KEY, pair)) {
                live++;
            }
        }
        assertEquals(live, cache.size());
        assertEquals(live, walk(KEY).size());
    }

    /** Touch vs setReusable (a44e84a9b776): neither flag update is lost. */
    @Test
    void touchVsSetReusableLosesNeitherUpdate() throws Exception {
        CacheEntry[] held = new CacheEntry[1];
        ConcurrentRounds.run(2, 300,
                round -> {
                    assertTrue(cache.create(KEY, round, round % 2 == 0));
                    held[0] = cache.get(KEY, round);
                },
                (thread, round) -> {
                    if (thread == 0) {
                        held[0].setReusable(round % 2 != 0); // flip it
                    } else {
                        cache.touch(held[0]);
                    }
                },
                round -> {
                    CacheEntry entry = held[0];
                    assertEquals(round % 2 != 0, entry.reusable(), "setReusable lost in round " + round);
                    cache.release(entry);
                    assertEquals(0, cache.shrink(1), "touch lost in round " + round + ": no second chance");
                    assertEquals(1, cache.shrink(1));
                    assertEquals(0, cache.size());
                });
    }

    /** findNext while the chain changes: the walk neither fails nor loops, and sees only its key. */
    @Test
    void aFindNextWalkSurvivesConcurrentChangesOfTheKeysEntries() throws Exception {
        for (long value = 0; value < 8; value++) {
            cache.create(KEY, value, true);
        }
        ConcurrentRounds.run(2, 1, round -> {}, (thread, round) -> {
            for (int i = 0; i < 2000; i++) {
                if (thread == 0) {
                    Set<Long> seen = new HashSet<>();
                    CacheEntry entry = cache.findFirst(KEY);
                    int steps = 0;
                    while (entry != null) {
                        assertEquals(KEY, entry.key());
                        assertTrue(entry.value() >= 0 && entry.value() < 16, "value " + entry.value());
                        seen.add(entry.value());
                        assertTrue(++steps <= 64, "walk does not end");
                        entry = cache.findNext(entry);
                    }
                } else {
                    long value = i % 16;
                    if (!cache.create(KEY, value, true)) {
                        CacheEntry held = cache.deleteOrGet(KEY, value);
                        if (held != null) {
                            cache.release(held);
                        }
                    }
                }
            }
        }, round -> {});
    }

    /** waitUnused vs release: the waiter always wakes. */
    @Test
    void waitUnusedAlwaysWakesWhenTheOtherHolderReleases() throws Exception {
        CacheEntry[] mine = new CacheEntry[1];
        CacheEntry[] other = new CacheEntry[1];
        ConcurrentRounds.run(2, 400,
                round -> {
                    assertTrue(cache.create(KEY, round, true));
                    mine[0] = cache.get(KEY, round);
                    other[0] = cache.get(KEY, round);
                },
                (thread, round) -> {
                    if (thread == 0) {
                        assertTrue(cache.waitUnused(mine[0], PATIENCE_SECONDS, TimeUnit.SECONDS),
                                "waiter not woken in round " + round);
                    } else {
                        for (int spin = round % 50; spin > 0; spin--) {
                            Thread.onSpinWait(); // vary who gets there first
                        }
                        cache.release(other[0]);
                    }
                },
                round -> {
                    cache.release(mine[0]);
                    assertNull(cache.deleteOrGet(KEY, round));
                });
    }

    /** Publication: an entry created by another thread is seen fully initialised. */
    @Test
    void anEntryCreatedByAnotherThreadIsSeenFullyInitialised() throws Exception {
        ConcurrentRounds.run(2, 500, round -> {}, (thread, round) -> {
            int key = round * 31 + 7;
            long value = ((long) round << 33) | 5;
            boolean reusable = round % 2 == 0;
            if (thread == 0) {
                assertTrue(cache.create(key, value, reusable));
            } else {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(PATIENCE_SECONDS);
                CacheEntry entry;
                while ((entry = cache.get(key, value)) == null) {
                    if (System.nanoTime() > deadline) {
                        fail("the created pair never became visible");
                    }
                    Thread.onSpinWait();
                }
                assertEquals(key, entry.key());
                assertEquals(value, entry.value());
                assertEquals(reusable, entry.reusable());
                cache.release(entry);
                if (reusable) {
                    try (CacheEntry found = cache.findFirst(key)) {
                        assertEquals(entry, found);
                    }
                }
            }
        }, round -> {});
    }

    /** Release to zero vs lookup: a lookup never hands out an entry whose count reached zero. */
    @Test
    void aLookupNeverReturnsAnEntryWhoseCountReachedZero() throws Exception {
        ConcurrentRounds.run(2, 1, round -> {}, (thread, round) -> {
            for (int i = 0; i < 4000; i++) {
                if (thread == 0) {
                    CacheEntry held = cache.deleteOrGet(KEY, 1);
                    if (held != null) {
                        cache.release(held);
                    }
                    cache.create(KEY, 1, true);
                    if (i % 16 == 0) {
                        cache.shrink(Long.MAX_VALUE);
                    }
                } else {
                    CacheEntry entry = (i % 2 == 0) ? cache.get(KEY, 1) : cache.findFirst(KEY);
                    if (entry != null) {
                        assertEquals(1, entry.value());
                        CacheEntry same = cache.get(KEY, 1);
                        assertEquals(entry, same, "a held entry must still be the cached one");
                        cache.release(same);
                        cache.release(entry); // a revived dead entry would be an over-release here
                    }
                }
            }
        }, round -> {});
        assertTrue(cache.size() <= 1);
    }

    /** Many threads hammering one key with the ext4 pattern: counts stay consistent. */
    @Test
    void ext4PatternOnOneKeyKeepsCountsConsistent() throws Exception {
        ConcurrentRounds.run(2, 1, round -> {}, (thread, round) -> {
            for (int i = 0; i < 2000; i++) {
                long value = i % 3;
                if (thread == 0) {
                    cache.create(KEY, value, true);
                    CacheEntry entry = cache.findFirst(KEY);
                    while (entry != null) {
                        if (entry.value() == value) {
                            cache.touch(entry);
                            cache.release(entry);
                            break;
                        }
                        entry = cache.findNext(entry);
                    }
                } else {
                    deleteTheExt4Way(KEY, value);
                }
            }
        }, round -> {});
        long live = walk(KEY).size();
        assertEquals(live, cache.size());
        assertEquals(live, cache.shrink(Long.MAX_VALUE) + cache.shrink(Long.MAX_VALUE));
        assertEquals(0, cache.size());
    }
}
