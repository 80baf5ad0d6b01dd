package org.mbcache.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mbcache.MbCache;

/**
 * Restores of one cache stay within its bound together: each takes its budget again just before it
 * creates, and they create one at a time, on a model cache (a count and a sink).
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class RestoreBudgetTest {

    private static final long MAX = 100;

    private final RestoreBudget budget = new RestoreBudget();
    private final AtomicLong size = new AtomicLong();

    /** A valid snapshot of {@code count} distinct pairs. */
    private static byte[] snapshotOf(int count) throws IOException {
        try (MbCache source = MbCache.builder().bucketBits(8).maxEntries(4L * count).build()) {
            for (int i = 0; i < count; i++) {
                source.create(i * 0x9E37_79B9, i, true);
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            source.writeSnapshot(out);
            return out.toByteArray();
        }
    }

    /** Restores into the model cache, every pair new: the count goes up one a create. */
    private long restore(byte[] snapshot, Snapshots.PairSink before) throws IOException {
        return budget.read(new ByteArrayInputStream(snapshot), MAX, size::get, (key, value, reusable) -> {
            before.create(key, value, reusable);
            size.incrementAndGet();
            return true;
        });
    }

    @Test
    void aRestoreTakesItsBudgetAgainOnceTheStreamIsRead() throws IOException {
        byte[] snapshot = snapshotOf((int) MAX);
        long created = budget.read(new ByteArrayInputStream(snapshot) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                size.set(MAX - 10); // other creates while the stream is read
                return super.read(b, off, len);
            }
        }, MAX, size::get, (key, value, reusable) -> size.incrementAndGet() > 0);

        assertEquals(10, created);
        assertEquals(MAX, size.get());
    }

    @Test
    void aRestoreCreatesOnlyOnceTheRestoreCreatingBeforeItHasFinished() throws Exception {
        byte[] snapshot = snapshotOf((int) MAX);
        CountDownLatch firstCreating = new CountDownLatch(1);
        CountDownLatch letFirstGoOn = new CountDownLatch(1);
        AtomicBoolean firstDone = new AtomicBoolean();
        AtomicBoolean secondOverlapped = new AtomicBoolean();
        CompletableFuture<Long> first = CompletableFuture.supplyAsync(() -> {
            try {
                long created = restore(snapshot, (key, value, reusable) -> {
                    firstCreating.countDown();
                    awaitQuietly(letFirstGoOn);
                    return true;
                });
                firstDone.set(true);
                return created;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, runnable -> new Thread(runnable, "first-restore").start());
        assertTrue(firstCreating.await(10, TimeUnit.SECONDS));
        Thread secondThread = new Thread(() -> {
            try {
                restore(snapshot, (key, value, reusable) -> {
                    secondOverlapped.compareAndSet(false, !firstDone.get());
                    return true;
                });
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, "second-restore");
        secondThread.start();
        // The second has read its stream and waits to create (or, were it not kept out, creates).
        while (secondThread.getState() != Thread.State.WAITING && secondThread.isAlive() && !secondOverlapped.get()) {
            Thread.onSpinWait();
        }
        letFirstGoOn.countDown();
        long createdByFirst = first.get(10, TimeUnit.SECONDS);
        secondThread.join(10_000);

        assertFalse(secondOverlapped.get(), "the second restore created while the first was creating");
        assertEquals(MAX, createdByFirst);
        assertEquals(MAX, size.get(), "the second restore created past the bound");
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            assertTrue(latch.await(10, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
