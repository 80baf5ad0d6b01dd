package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mbcache.contract.Pairs;

/**
 * The snapshot format ({@code docs/snapshot-format.md}) as a reader sees it: what a valid snapshot
 * costs on disk, and each kind of bad input refused with a {@link SnapshotFormatException} naming
 * the fault and its offset, with nothing created and the pairs already cached untouched. The codec
 * is shared by every backend; these run on the kernel port.
 */
class SnapshotFormatTest {

    private MbCache cache;

    @BeforeEach
    void openCache() {
        cache = MbCache.builder().bucketBits(4).maxEntries(1 << 16).executor(Runnable::run).build();
        cache.create(-1, -1, true); // a pair cached before every restore, which must survive it
    }

    @AfterEach
    void closeCache() {
        cache.close();
    }

    /** Restores {@code bytes}, expecting a refusal; checks the cache is as it was; returns the refusal. */
    private SnapshotFormatException refused(byte[] bytes) {
        SnapshotFormatException refusal =
                assertThrows(SnapshotFormatException.class, () -> cache.readSnapshot(new ByteArrayInputStream(bytes)));
        assertEquals(1, cache.size(), "a refused snapshot created pairs");
        assertTrue(Pairs.isCached(cache, -1, -1), "a refused snapshot lost a pair cached before");
        assertTrue(refusal.getMessage().contains("at byte " + refusal.offset()), refusal.getMessage());
        return refusal;
    }

    private static void assertMentions(SnapshotFormatException refusal, String what) {
        assertTrue(refusal.getMessage().contains(what), "message does not say '" + what + "': " + refusal.getMessage());
    }

    @Test
    void aValidSnapshotCostsAtMostFourteenBytesAPair() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long pairs;
        // A fixed seed: under it no chain of keys 0..99,999 reaches the cap, which a restore respects.
        try (MbCache large = MbCache.builder().bucketBits(14).maxEntries(1 << 20).hashSeed(42).build()) {
            for (int i = 0; i < 100_000; i++) {
                large.create(i, i, true);
            }
            pairs = large.writeSnapshot(out);
        }
        assertEquals(100_000, pairs);
        assertTrue(out.size() <= 14 * pairs, out.size() + " bytes for " + pairs + " pairs");
        assertEquals(16 + 13 * pairs + 8 * ((pairs + 4095) / 4096) + 20, out.size());
    }

    @Test
    void aSnapshotOfManySmallBlocksRestores() throws IOException {
        assertEquals(100, cache.readSnapshot(new ByteArrayInputStream(SnapshotBytes.of(100, 7))));
    }

    @Test
    void aSnapshotOfOneRecordBlocksRestoresEveryPair() throws IOException {
        int pairs = 3 * 4096 + 5;
        assertEquals(pairs, cache.readSnapshot(new ByteArrayInputStream(SnapshotBytes.of(pairs, 1))));
        for (int i = 0; i < pairs; i++) {
            assertTrue(Pairs.isCached(cache, i, 1000 + i), "pair " + i + " missing");
        }
        assertEquals(pairs + 1, cache.size());
    }

    @Test
    void aSnapshotOfOneRecordBlocksLargerThanTheBudgetRestoresItsNewest() throws IOException {
        // A fixed seed: a restore skips the pairs of a chain at its cap, and under this seed no chain of
        // the restored keys 4,001..9,999 reaches it.
        try (MbCache small = MbCache.builder().bucketBits(8).maxEntries(6000).executor(Runnable::run).hashSeed(42)
                .build()) {
            small.create(-1, -1, true);
            int pairs = 10_000;
            assertEquals(5999, small.readSnapshot(new ByteArrayInputStream(SnapshotBytes.of(pairs, 1))));
            assertTrue(Pairs.isCached(small, -1, -1));
            for (int i = 0; i < pairs; i++) {
                assertEquals(i >= pairs - 5999, Pairs.isCached(small, i, 1000 + i), "pair " + i);
            }
        }
    }

    @Test
    void blocksThatStraddleTheReadersChunksRestoreAndAreChecked() throws IOException {
        int perBlock = 4095; // the reader keeps records in chunks of 4,096: every block but the first straddles two
        byte[] snapshot = SnapshotBytes.of(3 * perBlock, perBlock);
        int secondBlock = SnapshotBytes.FIRST_BLOCK + 4 + perBlock * 13 + 4;
        for (int record : new int[] {0, 1, perBlock - 1}) { // in the first chunk, then in the second
            byte[] flipped = snapshot.clone();
            flipped[secondBlock + 4 + record * 13 + 5] ^= 4;
            assertMentions(refused(flipped), "block checksum mismatch");
        }
        byte[] flagged = snapshot.clone();
        flagged[secondBlock + 4 + 1 * 13 + 12] |= 0x10;
        SnapshotBytes.fixBlock(flagged, secondBlock);
        SnapshotBytes.fixTrailer(flagged);
        SnapshotFormatException refusal = refused(flagged);
        assertMentions(refusal, "unknown record flag bits 0x10 in record 1");
        assertEquals(secondBlock + 4 + 13 + 12, refusal.offset());

        assertEquals(3 * perBlock, cache.readSnapshot(new ByteArrayInputStream(snapshot)));
        for (int i = 0; i < 3 * perBlock; i++) {
            assertTrue(Pairs.isCached(cache, i, 1000 + i), "pair " + i + " missing");
        }
    }

    /**
     * A stream that keeps every array the reader hands it, and overwrites all of them with
     * {@code 0x66} before each later read and at the end of the stream.
     */
    private static InputStream scribblingOverItsReadersArrays(byte[] snapshot) {
        return new ByteArrayInputStream(snapshot) {
            private final java.util.List<byte[]> kept = new java.util.ArrayList<>();

            private void scribble() {
                kept.forEach(array -> Arrays.fill(array, (byte) 0x66));
            }

            @Override
            public synchronized int read(byte[] bytes, int offset, int length) {
                scribble();
                kept.add(bytes);
                return super.read(bytes, offset, length);
            }

            @Override
            public synchronized int read() {
                scribble();
                return super.read();
            }
        };
    }

    @Test
    void aStreamThatKeepsTheReadersArrayCannotChangeCheckedPairs() throws IOException {
        byte[] snapshot = SnapshotBytes.of(3, 1);
        assertEquals(3, cache.readSnapshot(scribblingOverItsReadersArrays(snapshot)));
        for (int i = 0; i < 3; i++) {
            assertTrue(Pairs.isCached(cache, i, 1000 + i), "pair " + i + " of the snapshot missing");
        }
        assertFalse(Pairs.isCached(cache, 0x66666666, 0x6666666666666666L), "a pair the stream forged was created");
        assertEquals(4, cache.size());
    }

    @Test
    void anEmptyStreamIsRefused() {
        SnapshotFormatException refusal = refused(new byte[0]);
        assertEquals(0, refusal.offset());
        assertMentions(refusal, "empty");
    }

    @Test
    void aTruncatedHeaderIsRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        assertMentions(refused(Arrays.copyOf(snapshot, 9)), "truncated: header");
    }

    @Test
    void aSnapshotTruncatedInsideABlockIsRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        SnapshotFormatException refusal = refused(Arrays.copyOf(snapshot, SnapshotBytes.FIRST_BLOCK + 30));
        assertMentions(refusal, "truncated: block of 4 records");
        assertEquals(SnapshotBytes.FIRST_BLOCK + 4, refusal.offset());
    }

    @Test
    void aSnapshotTruncatedBeforeItsTrailerIsRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        assertMentions(refused(Arrays.copyOf(snapshot, SnapshotBytes.trailer(snapshot))), "truncated: block record count");
    }

    @Test
    void aSnapshotTruncatedInsideItsTrailerIsRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        assertMentions(refused(Arrays.copyOf(snapshot, snapshot.length - 1)), "truncated: trailer checksum");
    }

    @Test
    void aWrongMagicIsRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        snapshot[1] = 'X';
        SnapshotFormatException refusal = refused(snapshot);
        assertEquals(0, refusal.offset());
        assertMentions(refusal, "bad magic");
    }

    @Test
    void aNewerMajorVersionIsRefusedAsNewer() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        snapshot[8] = 2;
        snapshot[12] ^= 1; // a newer layout need not keep the header checksum where version 1 has it
        SnapshotFormatException refusal = refused(snapshot);
        assertEquals(8, refusal.offset());
        assertMentions(refusal, "format version 2.0 is newer than the version this reader knows, 1.0");
    }

    @Test
    void aNewerMinorVersionIsRead() throws IOException {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        snapshot[9] = 7;
        SnapshotBytes.fixHeader(snapshot);
        assertEquals(10, cache.readSnapshot(new ByteArrayInputStream(snapshot)));
    }

    @Test
    void anUnknownHeaderFlagIsRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        snapshot[11] = 4;
        SnapshotBytes.fixHeader(snapshot);
        SnapshotFormatException refusal = refused(snapshot);
        assertEquals(10, refusal.offset());
        assertMentions(refusal, "unknown header flag bits 0x4");
    }

    @Test
    void aFlippedBitInTheHeaderIsRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        snapshot[10] ^= 0x10;
        SnapshotFormatException refusal = refused(snapshot);
        assertEquals(0, refusal.offset(), "a checksum mismatch is reported where the bytes it covers start");
        assertMentions(refusal, "header checksum mismatch");
    }

    @Test
    void aFlippedBitInARecordIsRefusedAtItsBlock() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        int secondBlock = SnapshotBytes.FIRST_BLOCK + 4 + 4 * 13 + 4;
        snapshot[secondBlock + 4 + 13 + 6] ^= 0x20;
        SnapshotFormatException refusal = refused(snapshot);
        assertEquals(secondBlock, refusal.offset());
        assertMentions(refusal, "block checksum mismatch");
    }

    @Test
    void aFlippedBitInABlockChecksumIsRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        snapshot[SnapshotBytes.FIRST_BLOCK + 4 + 4 * 13] ^= 1;
        assertMentions(refused(snapshot), "block checksum mismatch");
    }

    @Test
    void aBlockLengthOfTwoToTheThirtyFirstIsRefusedWithoutAllocatingIt() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        ByteBuffer.wrap(snapshot).putInt(SnapshotBytes.FIRST_BLOCK, 0x8000_0000);
        SnapshotFormatException refusal = refused(snapshot);
        assertEquals(SnapshotBytes.FIRST_BLOCK, refusal.offset());
        assertMentions(refusal, "block record count 2147483648 outside 1..4096");
    }

    @Test
    void aBlockLengthOfMinusOneIsRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        ByteBuffer.wrap(snapshot).putInt(SnapshotBytes.FIRST_BLOCK, -1);
        assertMentions(refused(snapshot), "block record count 4294967295 outside 1..4096");
    }

    @Test
    void aBlockLengthJustAboveTheMaximumIsRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        ByteBuffer.wrap(snapshot).putInt(SnapshotBytes.FIRST_BLOCK, 4097);
        assertMentions(refused(snapshot), "block record count 4097 outside 1..4096");
    }

    @Test
    void aBlockLengthLongerThanTheStreamIsRefusedAsTruncated() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        ByteBuffer.wrap(snapshot).putInt(SnapshotBytes.FIRST_BLOCK, 4096);
        assertMentions(refused(snapshot), "truncated: block of 4096 records");
    }

    @Test
    void anUnknownRecordFlagIsRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        snapshot[SnapshotBytes.FIRST_BLOCK + 4 + 12] |= 0x40;
        SnapshotBytes.fixBlock(snapshot, SnapshotBytes.FIRST_BLOCK);
        SnapshotBytes.fixTrailer(snapshot);
        SnapshotFormatException refusal = refused(snapshot);
        assertMentions(refusal, "unknown record flag bits 0x40 in record 0");
        assertEquals(SnapshotBytes.FIRST_BLOCK + 4 + 12, refusal.offset(), "not the offset of the flags byte");
    }

    @Test
    void anUnknownRecordFlagIsReportedAtItsFlagsByte() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        int secondBlock = SnapshotBytes.FIRST_BLOCK + 4 + 4 * 13 + 4;
        int flagsByte = secondBlock + 4 + 2 * 13 + 12;
        snapshot[flagsByte] |= (byte) 0x80;
        SnapshotBytes.fixBlock(snapshot, secondBlock);
        SnapshotBytes.fixTrailer(snapshot);
        SnapshotFormatException refusal = refused(snapshot);
        assertMentions(refusal, "unknown record flag bits 0x80 in record 2");
        assertEquals(flagsByte, refusal.offset());
    }

    @Test
    void aTrailerCountThatDisagreesWithTheRecordsIsRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        int trailer = SnapshotBytes.trailer(snapshot);
        ByteBuffer.wrap(snapshot).putLong(trailer + 4, 11);
        SnapshotBytes.fixTrailer(snapshot);
        SnapshotFormatException refusal = refused(snapshot);
        assertEquals(trailer + 4, refusal.offset(), "not the offset of the pair count");
        assertMentions(refusal, "trailer pair count 11 disagrees with the 10 records of the blocks");
    }

    @Test
    void aFlippedBitInTheTrailerIsRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        snapshot[SnapshotBytes.trailer(snapshot) + 9] ^= 2;
        assertMentions(refused(snapshot), "trailer checksum mismatch");
    }

    @Test
    void aMissingBlockIsRefusedEvenWithACountThatAgrees() {
        byte[] snapshot = SnapshotBytes.of(12, 4);
        int block = 4 + 4 * 13 + 4;
        byte[] cut = new byte[snapshot.length - block]; // the second block removed
        System.arraycopy(snapshot, 0, cut, 0, SnapshotBytes.FIRST_BLOCK + block);
        System.arraycopy(snapshot, SnapshotBytes.FIRST_BLOCK + 2 * block, cut, SnapshotBytes.FIRST_BLOCK + block,
                snapshot.length - SnapshotBytes.FIRST_BLOCK - 2 * block);
        int trailer = SnapshotBytes.trailer(cut);
        ByteBuffer.wrap(cut).putLong(trailer + 4, 8);
        ByteBuffer.wrap(cut).putInt(trailer + 16, SnapshotBytes.crc(cut, trailer, 16)); // blocks checksum kept
        SnapshotFormatException refusal = refused(cut);
        assertMentions(refusal, "blocks checksum mismatch");
        assertEquals(SnapshotBytes.FIRST_BLOCK, refusal.offset(), "not where the blocks it covers start");
    }

    @Test
    void bytesAfterTheTrailerAreRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        byte[] longer = Arrays.copyOf(snapshot, snapshot.length + 1);
        SnapshotFormatException refusal = refused(longer);
        assertEquals(snapshot.length, refusal.offset());
        assertMentions(refusal, "bytes after the trailer");
    }

    @Test
    void twoSnapshotsInOneStreamAreRefused() {
        byte[] snapshot = SnapshotBytes.of(10, 4);
        byte[] twice = Arrays.copyOf(snapshot, 2 * snapshot.length);
        System.arraycopy(snapshot, 0, twice, snapshot.length, snapshot.length);
        assertMentions(refused(twice), "bytes after the trailer");
    }

    @Test
    void randomBytesAreRefused() {
        Random random = new Random(42);
        for (int length : new int[] {1, 15, 16, 17, 100, 10_000}) {
            byte[] noise = new byte[length];
            random.nextBytes(noise);
            assertMentions(refused(noise), "at byte");
        }
    }

    @Test
    void randomBytesAfterAValidHeaderAreRefused() {
        byte[] header = Arrays.copyOf(SnapshotBytes.of(0, 4), 16);
        byte[] noise = new byte[5000];
        new Random(7).nextBytes(noise);
        byte[] input = Arrays.copyOf(header, header.length + noise.length);
        System.arraycopy(noise, 0, input, header.length, noise.length);
        refused(input);
    }

    @Test
    void aStreamThatFailsIsAPlainIOExceptionAndCreatesNothing() {
        IOException failure = new IOException("disk on fire");
        InputStream failing = new SequenceInputStream(
                new ByteArrayInputStream(Arrays.copyOf(SnapshotBytes.of(10, 4), 50)), new InputStream() {
                    @Override
                    public int read() throws IOException {
                        throw failure;
                    }
                });
        IOException thrown = assertThrows(IOException.class, () -> cache.readSnapshot(failing));
        assertSame(failure, thrown);
        assertFalse(thrown instanceof SnapshotFormatException);
        assertEquals(1, cache.size());
    }

    @Test
    void aSnapshotFileCutShortIsRefused(@TempDir Path directory) throws IOException {
        Path file = directory.resolve("cache.snapshot");
        byte[] snapshot = SnapshotBytes.of(100, 4096);
        Files.write(file, Arrays.copyOf(snapshot, snapshot.length / 2));
        assertThrows(SnapshotFormatException.class, () -> cache.readSnapshot(file));
        assertEquals(1, cache.size());
    }
}
