package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mbcache.contract.Pairs;
import org.mbcache.contract.SnapshotRecords;
import org.mbcache.contract.SnapshotRecords.Record;
import org.mbcache.internal.Snapshots;

/**
 * The kernel port's snapshot walk when reclaim passes, deletes and creates run between its chunks
 * (here: from the output stream, while the walk has let go of the LRU lock after its first block).
 * Every pair cached throughout is written exactly once, however the passes moved the list.
 */
class SnapshotWalkTest {

    private final MbCache cache = MbCache.builder().bucketBits(8).maxEntries(1 << 20).executor(Runnable::run).build();

    @AfterEach
    void closeCache() {
        cache.close();
    }

    /** A stream that runs {@code between} once, when the first block has been written. */
    private static ByteArrayOutputStream runningAfterTheFirstBlock(Runnable between) {
        return new ByteArrayOutputStream() {
            private boolean ran;

            @Override
            public synchronized void write(byte[] bytes, int offset, int length) {
                super.write(bytes, offset, length);
                if (!ran && size() > Snapshots.HEADER_BYTES) {
                    ran = true;
                    between.run();
                }
            }
        };
    }

    private void touch(int key) {
        try (CacheEntry entry = cache.get(key, key)) {
            cache.touch(entry);
        }
    }

    @Test
    void passesDeletesAndCreatesDuringTheWalkLoseNoPairCachedThroughout() throws IOException {
        int pairs = 3 * Snapshots.MAX_RECORDS_PER_BLOCK;
        for (int i = 0; i < pairs; i++) {
            cache.create(i, i, true);
        }
        for (int i = 0; i < pairs; i += 3) {
            touch(i); // second chances: the pass moves these behind the walk's cursor
        }
        Set<Integer> deleted = new HashSet<>();
        ByteArrayOutputStream out = runningAfterTheFirstBlock(() -> {
            cache.shrink(pairs / 2);
            for (int i = 1; i < pairs; i += 97) {
                cache.deleteOrGet(i, i);
                deleted.add(i);
            }
            for (int i = 0; i < 1000; i++) {
                cache.create(pairs + i, pairs + i, true);
            }
            cache.shrink(pairs / 4);
        });
        cache.writeSnapshot(out);
        List<Record> written = SnapshotRecords.pairs(out.toByteArray());
        assertEquals(written.size(), new HashSet<>(written).size(), "a pair was written twice");
        Set<Record> writtenSet = new HashSet<>(written);
        for (int i = 0; i < pairs; i++) {
            if (!deleted.contains(i) && Pairs.isCached(cache, i, i)) {
                assertTrue(writtenSet.contains(new Record(i, i, 0)), "pair " + i + " cached throughout is missing");
            }
        }
    }

    @Test
    void theWalksNextEntryPolledAsTheTailAndKeptIsStillWritten() throws IOException {
        int pairs = Snapshots.MAX_RECORDS_PER_BLOCK + 1; // the first block ends just before the tail
        for (int i = 0; i < pairs; i++) {
            cache.create(i, i, true);
        }
        CacheEntry last = cache.get(pairs - 1, pairs - 1);
        assertNotNull(last);
        try {
            // The pass frees every entry before the walk's next one, which it then polls as the
            // list's only entry (head and tail) and keeps, because it is held.
            ByteArrayOutputStream out = runningAfterTheFirstBlock(() -> cache.shrink(pairs));
            cache.writeSnapshot(out);
            List<Record> written = SnapshotRecords.pairs(out.toByteArray());
            assertEquals(pairs, written.size());
            assertEquals(new Record(pairs - 1, pairs - 1, 0), written.get(pairs - 1));
        } finally {
            cache.release(last);
        }
    }

    @Test
    void aSnapshotStartedFromTheStreamOfAnotherIsRefused() {
        for (int i = 0; i < 2 * Snapshots.MAX_RECORDS_PER_BLOCK; i++) {
            cache.create(i, i, true);
        }
        ByteArrayOutputStream out = runningAfterTheFirstBlock(() -> {
            try {
                cache.writeSnapshot(new ByteArrayOutputStream());
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        assertThrows(IllegalStateException.class, () -> cache.writeSnapshot(out));
        assertEquals(2 * Snapshots.MAX_RECORDS_PER_BLOCK,
                SnapshotRecords.pairs(SnapshotRecords.snapshotOf(cache)).size(), "the refused walk left the next one short");
    }

    @Test
    void aWalkThatACloseOvertakesFailsRatherThanEndingShort() {
        for (int i = 0; i < 2 * Snapshots.MAX_RECORDS_PER_BLOCK; i++) {
            cache.create(i, i, true);
        }
        ByteArrayOutputStream out = runningAfterTheFirstBlock(cache::close);
        assertThrows(IllegalStateException.class, () -> cache.writeSnapshot(out));
    }

    /** Whether the second writer's thread had its interrupt status set when its call ended. */
    private volatile boolean secondWriterInterrupted;

    /**
     * Starts a snapshot whose stream blocks in its first write, then a second snapshot on another
     * thread, which waits for the first; once it waits, runs {@code stop} on that thread, and
     * returns what the second snapshot threw within 5 s (null if it returned).
     */
    private Throwable secondSnapshotAfter(Consumer<Thread> stop) throws Exception {
        for (int i = 0; i < 100; i++) {
            cache.create(i, i, true);
        }
        CountDownLatch writing = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        OutputStream stuck = new OutputStream() {
            @Override
            public void write(int b) {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] bytes, int offset, int length) {
                writing.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        Thread first = daemon("stuck-snapshot-writer", () -> {
            try {
                cache.writeSnapshot(stuck);
            } catch (IOException | RuntimeException expected) {
                // closed meanwhile
            }
        });
        try {
            assertTrue(writing.await(10, TimeUnit.SECONDS), "the first snapshot never wrote");
            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            Thread second = daemon("waiting-snapshot-writer", () -> {
                Throwable thrown = null;
                try {
                    cache.writeSnapshot(OutputStream.nullOutputStream());
                } catch (Throwable t) {
                    thrown = t;
                }
                secondWriterInterrupted = Thread.currentThread().isInterrupted();
                outcome.complete(thrown);
            });
            awaitWaiting(second);
            stop.accept(second);
            return outcome.get(5, TimeUnit.SECONDS);
        } finally {
            release.countDown();
            first.join(10_000);
        }
    }

    private static Thread daemon(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    @Test
    void aSnapshotWaitingForAnotherStopsWhenTheCacheIsClosed() throws Exception {
        Throwable thrown = secondSnapshotAfter(waiting -> cache.close());
        assertTrue(thrown instanceof IllegalStateException, "after close: " + thrown);
        assertEquals("cache is closed", thrown.getMessage());
    }

    @Test
    void aSnapshotWaitingForAnotherAnswersAnInterruptWithInterruptedIoException() throws Exception {
        Throwable thrown = secondSnapshotAfter(Thread::interrupt);
        assertTrue(thrown instanceof InterruptedIOException, "after interrupt: " + thrown);
        assertTrue(secondWriterInterrupted, "the interrupt status was not restored");
    }

    /** Waits until {@code thread} waits (for the snapshot lock), at most 10 s. */
    private static void awaitWaiting(Thread thread) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (thread.getState() != Thread.State.WAITING && thread.getState() != Thread.State.TIMED_WAITING) {
            assertTrue(System.nanoTime() < deadline, "the second snapshot never waited: " + thread.getState());
            Thread.sleep(5);
        }
    }
}
