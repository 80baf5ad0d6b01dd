package org.mbcache.caffeine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mbcache.CacheEntry;

/**
 * The race behind "Skipping the sibling walk" (see CaffeineDedupCache's implementation notes): one
 * thread gives a held key more values while another thread's synchronous pass walks, scans the map
 * for keys with two values, and records {@code noSiblingGroupsAsOf}. Should the pass record a count
 * that already includes those inserts while its scan missed them, every later pass skips the walk,
 * and the unheld values of the held key, which Caffeine cannot evict (their group weighs 0), stay.
 *
 * <p>Each round starts from {@code maxEntries} = M = 3 (threshold 2M = 6): key 0 with one value
 * held for the whole test, two more held single-value keys, two unheld ones (five entries), and a
 * sibling count that has moved since any pass looked. Then, at once:
 * <ul>
 *   <li>the passer creates one more key: the cache reaches 2M, and its pass, finding no key with
 *       two values, walks and scans the whole map;
 *   <li>the sibling maker, after a random delay within the length of a pass, empties the cache
 *       down to key 0's held value (releases and deletes the two held keys, deletes the unheld ones
 *       and the passer's) and gives key 0 M + 1 more values, each create staying below 2M, so that
 *       no pass of its own frees them.
 * </ul>
 * Once both are done (nothing in flight, held = 1): the cache must not claim to know that no key
 * has two values while key 0 has some, and creates that fill Caffeine's share again (M + 1
 * single-value keys) must keep the size within 2M + held. Only the walk can free key 0's M + 1
 * unheld values; without it the size reaches 1 + (M + 1) + M = 2M + 2.
 *
 * <p>The race window is the pass's scan of the map, so the test makes it long: the map is grown
 * first to 2^18 buckets (Caffeine's ConcurrentHashMap never shrinks), which makes the scan take a
 * few hundred microseconds, and key 0 lies in bucket 0, which the scan passes first; the maker's
 * dozen operations fit in the rest of it. Fails within a few hundred rounds (under a second) if
 * the pass records the count read after its walk and scan instead of before, and in the first
 * round if inserts are not counted.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SiblingWalkSkipRaceTest {

    private static final int MAX_ENTRIES = 3;
    private static final int THRESHOLD = 2 * MAX_ENTRIES;
    /** The key whose held value makes its other values unevictable: bucket 0 of the map. */
    private static final int KEY = 0;
    /** Values of {@link #KEY} the sibling maker creates per round: more than Caffeine's share. */
    private static final int SIBLINGS = MAX_ENTRIES + 1;
    /** Keys held at once while growing the map: 2^18 buckets (resize past 0.75 * 2^17). */
    private static final int GROWTH = 100_000;
    private static final int GROWTH_BASE = 10_000_000;
    private static final int ROUND_KEYS = 16;
    private static final int MAX_ROUNDS = 2_000;
    private static final long TIME_BUDGET_NANOS = TimeUnit.SECONDS.toNanos(3);
    /** Rounds without the sibling maker that time the pass (and warm it up). */
    private static final int CALIBRATION_ROUNDS = 200;

    /** The keys and values of one round. */
    private static final class Round {
        final int heldA;
        final int heldB;
        final int singleA;
        final int singleB;
        final int passerKey;
        final int firstRefillKey;
        final long firstSibling;
        final long bumpValue;
        CacheEntry holdA;
        CacheEntry holdB;

        Round(int round) {
            int base = 1_000 + round * ROUND_KEYS;
            heldA = base;
            heldB = base + 1;
            singleA = base + 2;
            singleB = base + 3;
            passerKey = base + 4;
            firstRefillKey = base + 5; // .. base + 5 + MAX_ENTRIES
            firstSibling = 1 + (long) round * (SIBLINGS + 1);
            bumpValue = firstSibling + SIBLINGS;
        }

        int[] keys() {
            int[] keys = new int[5 + MAX_ENTRIES + 1];
            keys[0] = heldA;
            keys[1] = heldB;
            keys[2] = singleA;
            keys[3] = singleB;
            keys[4] = passerKey;
            for (int i = 0; i <= MAX_ENTRIES; i++) {
                keys[5 + i] = firstRefillKey + i;
            }
            return keys;
        }
    }

    @Test
    void aSiblingMadeDuringAPassesScanIsNeverLeftBehindASkippedWalk() throws Exception {
        try (CaffeineDedupCache cache = CaffeineDedupCache.builder().maxEntries(MAX_ENTRIES).executor(Runnable::run).build()) {
            growTheMap(cache);
            cache.create(KEY, 0, true);
            CacheEntry keyHeld = cache.get(KEY, 0);
            assertNotNull(keyHeld);
            assertEquals(1, cache.size());

            long passNanos = calibratePass(cache);
            CyclicBarrier barrier = new CyclicBarrier(2);
            AtomicReference<Round> current = new AtomicReference<>();
            AtomicReference<Throwable> makerFailure = new AtomicReference<>();
            AtomicBoolean stopping = new AtomicBoolean();
            Thread maker = new Thread(() -> {
                try {
                    for (;;) {
                        barrier.await(10, TimeUnit.SECONDS); // the round starts
                        spin(ThreadLocalRandom.current().nextLong(passNanos));
                        makeSiblings(cache, current.get());
                        barrier.await(10, TimeUnit.SECONDS); // the round is quiet
                    }
                } catch (InterruptedException | BrokenBarrierException e) {
                    if (!stopping.get()) {
                        makerFailure.set(e);
                    }
                } catch (Throwable t) {
                    makerFailure.set(t);
                    barrier.reset(); // the passer's await fails at once instead of timing out
                }
            }, "sibling-maker");
            maker.start();

            long deadline = System.nanoTime() + TIME_BUDGET_NANOS;
            int rounds = 0;
            try {
                while (rounds < MAX_ROUNDS && System.nanoTime() - deadline < 0) {
                    Round round = new Round(CALIBRATION_ROUNDS + rounds++);
                    setUp(cache, round);
                    current.set(round);
                    barrier.await(10, TimeUnit.SECONDS);
                    cache.create(round.passerKey, 0, true); // reaches 2M: a pass that walks and scans
                    barrier.await(10, TimeUnit.SECONDS);
                    checkQuietRound(cache, round, rounds);
                    tearDown(cache, round);
                }
            } catch (BrokenBarrierException | TimeoutException e) {
                fail("the sibling maker failed", makerFailure.get() != null ? makerFailure.get() : e);
            } finally {
                stopping.set(true);
                maker.interrupt();
                maker.join(10_000);
            }
            if (makerFailure.get() != null) {
                fail("the sibling maker failed", makerFailure.get());
            }
            assertTrue(rounds > 0);
            cache.release(keyHeld);
        }
    }

    /**
     * Holds {@link #GROWTH} keys at once, so that Caffeine's map grows to 2^18 buckets, then
     * deletes them: the map keeps its buckets, and a scan of it takes long enough to race with.
     */
    private static void growTheMap(CaffeineDedupCache cache) {
        List<CacheEntry> held = new ArrayList<>(GROWTH);
        for (int i = 0; i < GROWTH; i++) {
            cache.create(GROWTH_BASE + i, 0, true);
            held.add(cache.get(GROWTH_BASE + i, 0));
        }
        for (CacheEntry entry : held) {
            cache.release(entry);
            assertNull(cache.deleteOrGet(entry.key(), 0));
        }
        assertEquals(0, cache.size());
    }

    /**
     * The median time of the passer's create, its pass walking and scanning the whole map, in
     * rounds without the sibling maker: the span over which the maker's start is spread.
     */
    private static long calibratePass(CaffeineDedupCache cache) {
        long[] nanos = new long[CALIBRATION_ROUNDS];
        for (int i = 0; i < CALIBRATION_ROUNDS; i++) {
            Round round = new Round(i);
            setUp(cache, round);
            long start = System.nanoTime();
            cache.create(round.passerKey, 0, true);
            nanos[i] = System.nanoTime() - start;
            assertTrue(cache.knowsNoGroupHasSiblings(), "calibration: the pass walked and scanned");
            cache.release(round.holdA);
            cache.release(round.holdB);
            tearDown(cache, round);
        }
        Arrays.sort(nanos, CALIBRATION_ROUNDS / 2, CALIBRATION_ROUNDS);
        return Math.max(1, nanos[CALIBRATION_ROUNDS * 3 / 4]); // the median of the warm half
    }

    /**
     * Five entries, below 2M: key 0's held value, two more held keys, two unheld ones; and key 0
     * has had a second value since any pass looked (created and deleted again, below the
     * threshold, so that no pass runs).
     */
    private static void setUp(CaffeineDedupCache cache, Round round) {
        cache.create(round.heldA, 0, true);
        round.holdA = cache.get(round.heldA, 0);
        cache.create(round.heldB, 0, true);
        round.holdB = cache.get(round.heldB, 0);
        cache.create(KEY, round.bumpValue, true);
        assertNull(cache.deleteOrGet(KEY, round.bumpValue));
        cache.create(round.singleA, 0, true);
        cache.create(round.singleB, 0, true);
        assertEquals(THRESHOLD - 1, cache.size(), "set-up");
    }

    /**
     * Empties the cache down to key 0's held value, then gives key 0 {@link #SIBLINGS} more values,
     * each create below 2M (no pass of its own frees them).
     */
    private static void makeSiblings(CaffeineDedupCache cache, Round round) {
        cache.release(round.holdA);
        cache.release(round.holdB);
        cache.deleteOrGet(round.heldA, 0);
        cache.deleteOrGet(round.heldB, 0);
        cache.deleteOrGet(round.singleA, 0);
        cache.deleteOrGet(round.singleB, 0);
        cache.deleteOrGet(round.passerKey, 0);
        for (int i = 0; i < SIBLINGS; i++) {
            cache.create(KEY, round.firstSibling + i, true);
        }
    }

    /**
     * With both threads done: the skip must not be armed while key 0 has unheld values, and the
     * creates that fill Caffeine's share again must leave the size within 2M + held.
     */
    private static void checkQuietRound(CaffeineDedupCache cache, Round round, int rounds) {
        for (int key : round.keys()) { // whatever the maker deleted before it existed
            cache.deleteOrGet(key, 0);
        }
        long held = 1; // key 0's first value
        long siblings = cache.size() - held;
        if (siblings > 0 && cache.knowsNoGroupHasSiblings()) {
            fail("round " + rounds + ": a pass recorded that no key has two values while key 0 has "
                    + (siblings + 1) + " (the skip is armed with the siblings still there)");
        }
        for (int i = 0; i <= MAX_ENTRIES; i++) {
            cache.create(round.firstRefillKey + i, 0, true);
            assertTrue(cache.size() <= THRESHOLD + held, "round " + rounds + ": size " + cache.size()
                    + " > 2 * maxEntries + held = " + (THRESHOLD + held) + " after refill create " + i
                    + " (key 0's unheld values were left behind a skipped walk)");
        }
    }

    /** Back to key 0's held value alone. */
    private static void tearDown(CaffeineDedupCache cache, Round round) {
        for (int key : round.keys()) {
            cache.deleteOrGet(key, 0);
        }
        for (int i = 0; i < SIBLINGS; i++) {
            cache.deleteOrGet(KEY, round.firstSibling + i);
        }
        assertEquals(1, cache.size(), "tear-down");
    }

    private static void spin(long nanos) {
        long start = System.nanoTime();
        while (System.nanoTime() - start < nanos) {
            Thread.onSpinWait();
        }
    }
}
