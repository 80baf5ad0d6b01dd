package org.mbcache.contract;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;
import org.mbcache.testing.Backend;

/**
 * The {@link DedupCache} contract's answers to misuse and to {@code close()} ({@code docs/contract.md},
 * sections 2 and 6): null and foreign arguments, over-releases, calls after and racing
 * {@code close()}, and waiters woken by it, one behaviour per test, run against every
 * {@link Backend}.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
@ParameterizedClass(name = "{0}")
@EnumSource(Backend.class)
class CloseAndMisuseContractTest extends DedupCacheFixture {

    private static void assertNullPointerNaming(String argument, Executable call) {
        NullPointerException e = assertThrows(NullPointerException.class, call);
        assertNotNull(e.getMessage(), "the exception names the argument");
        assertTrue(e.getMessage().contains(argument), "message '" + e.getMessage() + "' names " + argument);
    }

    @Test
    void aNullEntryIsANullPointerExceptionNamingTheArgument() {
        assertNullPointerNaming("entry", () -> cache.findNext(null));
        assertNullPointerNaming("entry", () -> cache.waitUnused(null));
        assertNullPointerNaming("entry", () -> cache.waitUnused(null, 1, TimeUnit.SECONDS));
        assertNullPointerNaming("entry", () -> cache.touch(null));
        assertNullPointerNaming("entry", () -> cache.release(null));
    }

    @Test
    void aNullTimeUnitIsANullPointerExceptionNamingTheArgument() {
        cache.create(KEY, 1, true);
        try (CacheEntry entry = cache.get(KEY, 1)) {
            assertNullPointerNaming("unit", () -> cache.waitUnused(entry, 1, null));
        }
    }

    @Test
    void anEntryOfAnotherCacheIsAnIllegalArgumentException() {
        DedupCache other = anotherCache();
        other.create(KEY, 1, true);
        cache.create(KEY, 1, true);
        CacheEntry foreign = other.get(KEY, 1);
        assertThrows(IllegalArgumentException.class, () -> cache.findNext(foreign));
        assertThrows(IllegalArgumentException.class, () -> cache.waitUnused(foreign));
        assertThrows(IllegalArgumentException.class, () -> cache.waitUnused(foreign, 1, TimeUnit.SECONDS));
        assertThrows(IllegalArgumentException.class, () -> cache.touch(foreign));
        assertThrows(IllegalArgumentException.class, () -> cache.release(foreign));
        other.release(foreign); // still held once: the failed calls changed nothing
        assertNull(other.deleteOrGet(KEY, 1));
        assertTrue(cached(KEY, 1));
    }

    @Test
    void anEntryOfAnotherImplementationIsAnIllegalArgumentException() {
        CacheEntry stranger = new CacheEntry() {
            @Override public int key() { return KEY; }
            @Override public long value() { return 1; }
            @Override public boolean reusable() { return true; }
            @Override public void setReusable(boolean reusable) {}
            @Override public void close() {}
        };
        cache.create(KEY, 1, true);
        assertThrows(IllegalArgumentException.class, () -> cache.release(stranger));
        assertThrows(IllegalArgumentException.class, () -> cache.findNext(stranger));
        assertThrows(IllegalArgumentException.class, () -> cache.touch(stranger));
    }

    @Test
    void everyCallOnTheCacheAfterCloseIsAnIllegalStateException() {
        cache.create(KEY, 1, true);
        cache.close();
        List<Executable> calls = List.of(
                () -> cache.create(KEY, 2, true),
                () -> cache.findFirst(KEY),
                () -> cache.get(KEY, 1),
                () -> cache.deleteOrGet(KEY, 1),
                () -> cache.size(),
                () -> cache.shrink(1),
                () -> cache.stats());
        for (Executable call : calls) {
            assertThrows(IllegalStateException.class, call);
        }
    }

    @Test
    void aCreateRacingCloseEitherSucceedsOrSaysTheCacheIsClosed() throws Exception {
        for (int round = 0; round < 50; round++) {
            DedupCache racing = anotherCache();
            int first = round * 10_000;
            CompletableFuture<String> creator = CompletableFuture.supplyAsync(() -> {
                try {
                    for (int key = first; ; key++) {
                        racing.create(key, key, true);
                    }
                } catch (IllegalStateException e) {
                    return e.getMessage();
                }
            });
            Thread.yield();
            racing.close();
            String message = creator.get(PATIENCE_SECONDS, TimeUnit.SECONDS);
            assertTrue(message.contains("closed"), "not the closed message: " + message);
        }
    }

    @Test
    void aReleaseRacingCloseEitherSucceedsOrSaysTheCacheIsClosed() throws Exception {
        assertEveryFailureRacingCloseSaysClosed(racing -> {
            CacheEntry found = racing.findFirst(KEY);
            CacheEntry got = racing.get(KEY, 2);
            CacheEntry handedBack = racing.deleteOrGet(KEY, 3); // held by the test: handed back
            for (CacheEntry entry : new CacheEntry[] {found, got, handedBack}) {
                if (entry != null) {
                    racing.release(entry);
                }
            }
        });
    }

    /**
     * A pair held until {@code close()} is cached until then: a lookup racing the close finds it
     * (it ran before the close) or is told that the cache is closed. A miss would say the pair is
     * not cached, and from {@code deleteOrGet} that nobody holds it.
     */
    @Test
    void aLookupOfAPairHeldUntilCloseFindsItOrSaysTheCacheIsClosed() throws Exception {
        assertEveryFailureRacingCloseSaysClosed(racing -> {
            releaseFound(racing, racing.get(KEY, 3), "get");
            releaseFound(racing, racing.findFirst(KEY), "findFirst");
            releaseFound(racing, racing.deleteOrGet(KEY, 3), "deleteOrGet");
        });
    }

    private static void releaseFound(DedupCache racing, CacheEntry found, String lookup) {
        if (found == null) {
            throw new AssertionError(lookup + " missed a pair held until close()");
        }
        racing.release(found);
    }

    @Test
    void aFindNextWalkRacingCloseEitherSucceedsOrSaysTheCacheIsClosed() throws Exception {
        assertEveryFailureRacingCloseSaysClosed(racing -> {
            CacheEntry entry = racing.findFirst(KEY);
            while (entry != null) {
                entry = racing.findNext(entry);
            }
        });
    }

    /**
     * Races {@code close()} against a thread that repeats {@code use} on a cache holding three values
     * of {@link #KEY} (the third held by the test throughout), many rounds, closing after a varying
     * number of repetitions: whatever {@code use} throws must be the closed cache's
     * {@link IllegalStateException}, never a complaint about the caller's references.
     */
    private void assertEveryFailureRacingCloseSaysClosed(Consumer<DedupCache> use) throws Exception {
        for (int round = 0; round < 300; round++) {
            DedupCache racing = anotherCache();
            for (long value = 1; value <= 3; value++) {
                racing.create(KEY, value, true);
            }
            CacheEntry heldByTheTest = racing.get(KEY, 3);
            AtomicInteger repetitions = new AtomicInteger();
            CompletableFuture<Throwable> user = CompletableFuture.supplyAsync(() -> {
                try {
                    for (;;) {
                        use.accept(racing);
                        repetitions.incrementAndGet();
                    }
                } catch (Throwable failure) {
                    return failure;
                }
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(PATIENCE_SECONDS);
            while (repetitions.get() < round % 7 && !user.isDone() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            racing.close();
            Throwable failure = user.get(PATIENCE_SECONDS, TimeUnit.SECONDS);
            if (!(failure instanceof IllegalStateException) || !failure.getMessage().contains("closed")) {
                throw new AssertionError("round " + round + ": not the closed cache's exception: " + failure,
                        failure);
            }
            assertNotNull(heldByTheTest);
        }
    }

    @Test
    void everyCallWithAnEntryAfterCloseIsAnIllegalStateException() {
        cache.create(KEY, 1, true);
        cache.create(KEY, 2, true);
        CacheEntry entry = cache.findFirst(KEY);
        cache.close();
        List<Executable> calls = List.of(
                () -> cache.findNext(entry),
                () -> cache.waitUnused(entry),
                () -> cache.waitUnused(entry, 1, TimeUnit.SECONDS),
                () -> cache.touch(entry),
                () -> cache.release(entry),
                () -> entry.setReusable(false),
                entry::close);
        for (Executable call : calls) {
            assertThrows(IllegalStateException.class, call);
        }
    }

    @Test
    void aBadEntryArgumentAfterCloseIsStillAnIllegalStateException() {
        DedupCache other = anotherCache();
        other.create(KEY, 1, true);
        CacheEntry foreign = other.get(KEY, 1);
        cache.close();
        List<Executable> calls = List.of(
                () -> cache.findNext(null),
                () -> cache.findNext(foreign),
                () -> cache.waitUnused(null),
                () -> cache.waitUnused(foreign, 1, TimeUnit.SECONDS),
                () -> cache.waitUnused(foreign, 1, null),
                () -> cache.touch(null),
                () -> cache.touch(foreign),
                () -> cache.release(null),
                () -> cache.release(foreign));
        for (Executable call : calls) {
            assertThrows(IllegalStateException.class, call);
        }
        other.release(foreign);
    }

    @Test
    void aWaiterWhoseWakeUpFailedStillReturnsOnceTheEntryIsUnused() throws Exception {
        WaitQueueFaults faults = WaitQueueFaults.injectInto(cache);
        cache.create(KEY, 1, true);
        CacheEntry mine = cache.get(KEY, 1);
        CacheEntry other = cache.get(KEY, 1); // the last other holder: ext4's waiter waits for it
        AtomicBoolean returned = new AtomicBoolean();
        Thread waiter = WaitQueueFaults.waiterFor(cache, mine, returned);
        faults.arm();
        try {
            cache.release(other); // the reference is dropped; the wake-up may throw
        } catch (OutOfMemoryError injected) {
            // the release happened all the same
        }
        faults.disarm();
        waiter.join(PATIENCE_SECONDS * 1000L); // nobody releases again: the waiter must notice by itself
        boolean stuck = waiter.isAlive();
        waiter.interrupt();
        assertFalse(stuck, "waitUnused still sleeps although the entry is unused");
        assertTrue(returned.get());
        cache.release(mine);
    }

    @Test
    void aCloseThatFailedWakingTheWaitersIsFinishedByTheNextClose() throws Exception {
        WaitQueueFaults faults = WaitQueueFaults.injectInto(cache);
        cache.create(KEY, 1, true);
        CacheEntry mine = cache.get(KEY, 1);
        cache.get(KEY, 1); // a second holder: the waiter waits for it
        AtomicBoolean returned = new AtomicBoolean();
        Thread waiter = WaitQueueFaults.waiterFor(cache, mine, returned);
        faults.arm();
        assertThrows(OutOfMemoryError.class, cache::close);
        faults.disarm();
        assertThrows(IllegalStateException.class, () -> cache.get(KEY, 1), "closed from the first close() on");
        cache.close();
        waiter.join(PATIENCE_SECONDS * 1000L);
        boolean stuck = waiter.isAlive();
        waiter.interrupt();
        assertFalse(stuck, "a waiter still sleeps in waitUnused of a closed cache");
        assertTrue(returned.get());
    }

    @Test
    void closeIsIdempotent() {
        cache.create(KEY, 1, true);
        cache.close();
        cache.close();
        assertThrows(IllegalStateException.class, () -> cache.size());
    }

    @Test
    void closeWakesThreadsBlockedInWaitUnusedWithAnIllegalStateException() throws Exception {
        cache.create(KEY, 1, true);
        CacheEntry mine = cache.get(KEY, 1);
        CacheEntry other = cache.get(KEY, 1);
        CountDownLatch started = new CountDownLatch(2);
        Future<Void> untimed = inThread(() -> {
            started.countDown();
            assertThrows(IllegalStateException.class, () -> cache.waitUnused(mine));
        });
        Future<Void> timed = inThread(() -> {
            started.countDown();
            assertThrows(IllegalStateException.class, () -> cache.waitUnused(mine, 30, TimeUnit.SECONDS));
        });
        started.await();
        Thread.sleep(50); // let both block
        cache.close();
        join(untimed);
        join(timed);
        assertNotNull(other);
    }
}
