package org.mbcache;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.mbcache.internal.Snapshots;

/**
 * Snapshots built and doctored for the tests of refused input: valid snapshots of chosen pairs and
 * block sizes, and the checksums recomputed after a field was changed on purpose, so that a test
 * reaches the one check it is about. Offsets follow {@code docs/snapshot-format.md}.
 */
final class SnapshotBytes {

    /** Offset of the first block. */
    static final int FIRST_BLOCK = 16;

    private SnapshotBytes() {}

    /** A valid snapshot of pairs {@code (i, 1000 + i)}, {@code i < pairs}, in blocks of {@code perBlock}. */
    static byte[] of(int pairs, int perBlock) {
        return of(0, pairs, perBlock);
    }

    /** A valid snapshot of pairs {@code (i, 1000 + i)} for {@code first <= i < first + pairs}. */
    static byte[] of(int first, int pairs, int perBlock) {
        int[] next = {first};
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            Snapshots.write(out, (keys, values, flags, from, max) -> {
                int n = Math.min(max, first + pairs - next[0]);
                for (int i = 0; i < n; i++, next[0]++) {
                    keys[from + i] = next[0];
                    values[from + i] = 1000 + next[0];
                    flags[from + i] = (byte) (next[0] % 2);
                }
                return n;
            }, perBlock);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** Offset of the trailer: its zero count. */
    static int trailer(byte[] snapshot) {
        return snapshot.length - 20;
    }

    /** Recomputes the header's CRC32C after a change of bytes 0-11. */
    static void fixHeader(byte[] snapshot) {
        ByteBuffer.wrap(snapshot).putInt(12, crc(snapshot, 0, 12));
    }

    /** Recomputes the CRC32C of the block at {@code at} after a change of its records. */
    static void fixBlock(byte[] snapshot, int at) {
        int records = ByteBuffer.wrap(snapshot).getInt(at);
        int length = 4 + records * 13;
        ByteBuffer.wrap(snapshot).putInt(at + length, crc(snapshot, at, length));
    }

    /**
     * Recomputes the trailer's blocks checksum (over every block as it now stands) and its own
     * CRC32C; the pair count is left as it is.
     */
    static void fixTrailer(byte[] snapshot) {
        int trailer = trailer(snapshot);
        ByteBuffer.wrap(snapshot).putInt(trailer + 12, crc(snapshot, FIRST_BLOCK, trailer - FIRST_BLOCK));
        ByteBuffer.wrap(snapshot).putInt(trailer + 16, crc(snapshot, trailer, 16));
    }

    static int crc(byte[] bytes, int from, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, from, length);
        return (int) crc.getValue();
    }
}
