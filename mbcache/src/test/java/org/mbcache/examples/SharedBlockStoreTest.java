package org.mbcache.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.mbcache.contract.ConcurrentRounds;

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
            Runnable churn = () -> {
                try {
                    for (int i = 0; i < perThread; i++) {
                        long block = store.store(i % 2 == 0 ? ACL : LABEL);
                        assertTrue(store.sharers(block) >= 1, "a block is never freed under a sharer");
                        store.drop(block);
                    }
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            };
            ConcurrentRounds.together(churn, churn);

            assertEquals(0, store.blockCount());
            assertEquals(0, store.cachedBlocks());
        }
    }

    @Test
    void theExampleProgramSharesTenLabelsAndLeavesNothingBehind() throws InterruptedException {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        SharedBlockStore.run(new PrintStream(printed, true, StandardCharsets.UTF_8));

        assertEquals(String.format("1000 files, 10 distinct labels: 10 blocks%n"
                + "all files removed: 0 blocks, 0 cache entries%n"), printed.toString(StandardCharsets.UTF_8));
    }
}
