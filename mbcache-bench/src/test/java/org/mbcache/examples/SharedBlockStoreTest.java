package org.mbcache.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The share-or-write example: what ext4 does with an xattr block, checked on real bytes. */
class SharedBlockStoreTest {

    private static final byte[] ACL = "system.posix_acl_access=u::rw-,g::r--,o::r--".getBytes(StandardCharsets.UTF_8);
    private static final byte[] LABEL = "security.selinux=system_u:object_r:etc_t".getBytes(StandardCharsets.UTF_8);

    @Test
    void theSameBytesStoredTwiceShareOneBlock() {
        try (SharedBlockStore store = new SharedBlockStore(16)) {
            long first = store.store(ACL);
            long second = store.store(ACL.clone());

            assertEquals(first, second);
            assertEquals(1, store.blockCount());
            assertEquals(2, store.sharers(first));
        }
    }

    @Test
    void differentBytesWithTheSameHashAreNotShared() {
        try (SharedBlockStore store = new SharedBlockStore(16, bytes -> 42)) {
            long acl = store.store(ACL);
            long label = store.store(LABEL);

            assertNotEquals(acl, label);
            assertEquals(acl, store.store(ACL));
            assertEquals(label, store.store(LABEL));
            assertEquals(2, store.blockCount());
        }
    }

    @Test
    void aBlockAtItsSharerLimitIsNotOfferedSoANewOneIsWritten() {
        try (SharedBlockStore store = new SharedBlockStore(2)) {
            long full = store.store(ACL);
            store.store(ACL);

            long next = store.store(ACL);

            assertNotEquals(full, next);
            assertEquals(2, store.sharers(full));
            assertEquals(1, store.sharers(next));
        }
    }

    @Test
    void aBlockBelowItsLimitAgainIsSharedAgain() throws InterruptedException {
        try (SharedBlockStore store = new SharedBlockStore(2)) {
            long block = store.store(ACL);
            store.store(ACL);
            store.drop(block);

            assertEquals(block, store.store(ACL));
            assertEquals(1, store.blockCount());
        }
    }

    @Test
    void theLastSharerLeavingDeletesTheBlockAndItsCacheEntry() throws InterruptedException {
        try (SharedBlockStore store = new SharedBlockStore(16)) {
            long block = store.store(ACL);
            store.store(ACL);

            store.drop(block);
            assertEquals(1, store.blockCount());
            store.drop(block);

            assertEquals(0, store.blockCount());
            assertEquals(0, store.cachedBlocks());
        }
    }

    @Test
    void sharersComingAndGoingAtOnceNeitherLoseNorLeakABlock() throws Exception {
        int perThread = 2_000;
        try (SharedBlockStore store = new SharedBlockStore(3)) {
            Callable<Void> churn = () -> {
                for (int i = 0; i < perThread; i++) {
                    long block = store.store(i % 2 == 0 ? ACL : LABEL);
                    assertTrue(store.sharers(block) >= 1, "a block is never freed under a sharer");
                    store.drop(block);
                }
                return null;
            };
            ExecutorService threads = Executors.newFixedThreadPool(2);
            try {
                for (Future<Void> f : threads.invokeAll(List.of(churn, churn), 30, TimeUnit.SECONDS)) {
                    f.get(); // rethrows a failed assertion; a part that ran past the limit is cancelled and fails here
                }
            } finally {
                threads.shutdownNow();
            }

            assertEquals(0, store.blockCount());
            assertEquals(0, store.cachedBlocks());
        }
    }

    @Test
    void theExampleProgramWritesTwoBlocksALabelAtTheSharerLimitAndLeavesNothingBehind() throws InterruptedException {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        SharedBlockStore.run(new PrintStream(printed, true, StandardCharsets.UTF_8));

        assertEquals(String.format("1000 files, 10 distinct labels, at most 64 files a block%n"
                + "stored: 20 blocks written, 980 stores shared an existing block%n"
                + "files sharing each block (blocks 0-19): 64 64 64 64 64 64 64 64 64 64 36 36 36 36 36 36 36 36 36 36%n"
                + "cache: 20 entries; creates 20, lookups 980 hits + 20 misses (hit rate 98.0%%), deletes 0%n"
                + "all files removed: 0 blocks, 0 cache entries; creates 20, lookups 990 hits + 20 misses (hit rate 98.0%%),"
                + " deletes 20%n"), printed.toString(StandardCharsets.UTF_8));
    }
}
