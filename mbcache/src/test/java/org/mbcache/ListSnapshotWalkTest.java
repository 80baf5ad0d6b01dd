package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mbcache.internal.HashedWaitQueues;
import org.mbcache.internal.Lifecycle;
import org.mbcache.internal.Snapshots;

/**
 * The list layout's snapshot walk on its own ({@link ListSnapshotWalk}), over a real
 * {@link ListLru} and {@link Lifecycle}: the order and the chunks, what is left out, the stream
 * written with the LRU lock let go, and the one-at-a-time rule with its ways out of a wait.
 */
class ListSnapshotWalkTest {

    private final Lifecycle lifecycle = new Lifecycle();
    private final ListEntryOwner owner = new ListEntryOwner(lifecycle, new HotCellTable(), new HashedWaitQueues(1));
    private final ListLru lru = new ListLru(1, new ReentrantLock());
    private final ListSnapshotWalk walk = new ListSnapshotWalk(lru, lifecycle);
    private final ExecutorService others = Executors.newFixedThreadPool(2);
    /** Lets the walk of {@link #blockedWalk} go on. */
    private final CountDownLatch go = new CountDownLatch(1);

    /** Stops the threads the waiting tests run walks on. */
    @AfterEach
    void stopOtherThreads() {
        others.shutdownNow();
    }

    /** An entry on the LRU list with only the cache's reference. */
    private ListEntry listed(int key) {
        ListEntry entry = new ListEntry(owner, key, 1000L + key, true);
        lru.append(entry);
        entry.releaseReference();
        return entry;
    }

    /** The keys of a snapshot, in the order written. */
    private static List<Integer> keysOf(byte[] snapshot) throws IOException {
        List<Integer> keys = new ArrayList<>();
        Snapshots.readChecked(new ByteArrayInputStream(snapshot), Long.MAX_VALUE).createNewest(Long.MAX_VALUE, (key, value, reusable) -> keys.add(key));
        return keys;
    }

    /** A whole snapshot written by the walk under test. */
    private byte[] snapshot() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        walk.write(out);
        return out.toByteArray();
    }

    /** A stream that keeps nothing and runs {@code onWrite} at each of its writes. */
    private static OutputStream onEachWrite(Runnable onWrite) {
        return new OutputStream() {
            @Override
            public void write(int b) {
                onWrite.run();
            }

            @Override
            public void write(byte[] b, int off, int len) {
                onWrite.run();
            }
        };
    }

    /** A stream whose writes wait until {@code go} opens, each having opened {@code writing}. */
    private static OutputStream blockingStream(CountDownLatch writing, CountDownLatch go) {
        return onEachWrite(() -> {
            writing.countDown();
            try {
                go.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while blocked in a write", e);
            }
        });
    }

    /**
     * Starts a walk of one pair on another thread, and returns once that walk is blocked in its
     * stream's first write, holding the walk, until {@link #go} opens.
     */
    private Future<Long> blockedWalk() throws InterruptedException {
        listed(1);
        CountDownLatch writing = new CountDownLatch(1);
        Future<Long> first = others.submit(() -> walk.write(blockingStream(writing, go)));
        assertTrue(writing.await(10, TimeUnit.SECONDS));
        return first;
    }

    @Test
    void pairsAreWrittenOldestFirst() throws IOException {
        listed(3);
        listed(1);
        listed(2);
        assertEquals(List.of(3, 1, 2), keysOf(snapshot()));
    }

    @Test
    void aWalkLongerThanAChunkWritesEveryPairOnceInOrder() throws IOException {
        int pairs = 2 * ListSnapshotWalk.SNAPSHOT_CHUNK + 7;
        List<Integer> expected = new ArrayList<>();
        for (int key = 0; key < pairs; key++) {
            listed(key);
            expected.add(key);
        }
        assertEquals(expected, keysOf(snapshot()));
    }

    @Test
    void deadEntriesAreLeftOut() throws IOException {
        listed(1);
        listed(2).kill();
        listed(3);
        assertEquals(List.of(1, 3), keysOf(snapshot()));
    }

    @Test
    void theStreamIsWrittenWithTheLruLockLetGo() throws IOException {
        listed(1);
        boolean[] lockedWhileWriting = {false};
        walk.write(onEachWrite(() -> lockedWhileWriting[0] |= lru.lock.isLocked()));
        assertFalse(lockedWhileWriting[0]);
    }

    @Test
    void aWalkStartedFromTheStreamOfAnotherIsRefused() throws IOException {
        listed(1);
        Throwable[] nested = {null};
        walk.write(onEachWrite(() -> {
            if (nested[0] == null) {
                nested[0] = assertThrows(Throwable.class, () -> walk.write(new ByteArrayOutputStream()));
            }
        }));
        assertInstanceOf(IllegalStateException.class, nested[0]);
    }

    @Test
    void aClosedCacheWritesNothing() {
        listed(1);
        lifecycle.beginClose();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThrows(IllegalStateException.class, () -> walk.write(out));
        assertEquals(0, out.size());
    }

    @Test
    void aWalkWaitingForAnotherStopsWhenTheCacheCloses() throws Exception {
        Future<Long> first = blockedWalk();
        Future<Long> second = others.submit(() -> walk.write(new ByteArrayOutputStream()));
        Thread.sleep(2 * ListSnapshotWalk.SNAPSHOT_WAIT_POLL_MS);
        assertFalse(second.isDone());
        lifecycle.beginClose();
        ExecutionException stopped = assertThrows(ExecutionException.class, () -> second.get(10, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, stopped.getCause());
        go.countDown();
        assertThrows(ExecutionException.class, () -> first.get(10, TimeUnit.SECONDS)); // closed under it
    }

    @Test
    void anInterruptedWaitIsAnInterruptedIOExceptionWithTheInterruptStatusSetAgain() throws Exception {
        Future<Long> first = blockedWalk();
        Thread.currentThread().interrupt();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            assertThrows(InterruptedIOException.class, () -> walk.write(out));
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
        assertEquals(0, out.size());
        go.countDown();
        assertEquals(1, first.get(10, TimeUnit.SECONDS));
    }
}
