package org.mbcache.contract;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.mbcache.DedupCache;

/**
 * The records of a snapshot, decoded straight from {@code docs/snapshot-format.md} (not with the
 * library's reader), so that tests check the bytes against the documented layout.
 */
public final class SnapshotRecords {

    /** Bytes of the header and of the trailer, as documented. */
    public static final int HEADER_BYTES = 16;
    /** Bytes of the trailer, as documented. */
    public static final int TRAILER_BYTES = 20;

    /** One record: a pair and its flags byte. */
    public record Record(int key, long value, int flags) {
        /** Whether the record's reusable flag (bit 0) is set. */
        public boolean reusable() {
            return (flags & 1) != 0;
        }

        /** The pair alone: the same key and value with the flags cleared, for comparing pairs. */
        public Record pair() {
            return new Record(key, value, 0);
        }
    }

    private SnapshotRecords() {}

    /** The snapshot of {@code cache}, as bytes. */
    public static byte[] snapshotOf(DedupCache cache) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            cache.writeSnapshot(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** The records of a well-formed snapshot, in order (checksums not checked here). */
    public static List<Record> records(byte[] snapshot) {
        ByteBuffer in = ByteBuffer.wrap(snapshot);
        in.position(HEADER_BYTES);
        List<Record> records = new ArrayList<>();
        for (int count = in.getInt(); count != 0; count = in.getInt()) {
            for (int i = 0; i < count; i++) {
                records.add(new Record(in.getInt(), in.getLong(), in.get() & 0xFF));
            }
            in.getInt(); // the block's checksum
        }
        return records;
    }

    /** The pairs of a snapshot, in order, flags dropped. */
    public static List<Record> pairs(byte[] snapshot) {
        return records(snapshot).stream().map(Record::pair).toList();
    }
}
