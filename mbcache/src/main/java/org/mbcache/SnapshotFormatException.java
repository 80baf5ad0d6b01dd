package org.mbcache;

import java.io.IOException;

/**
 * A snapshot that {@link DedupCache#readSnapshot(java.io.InputStream)} refused: not a snapshot, a
 * format version or flag this library does not know, or bytes that fail their checks (a checksum, a
 * length out of range, a count that disagrees with the records, the stream ending early or going on
 * after the trailer). The format is described in {@code docs/snapshot-format.md}.
 *
 * <p>A refused snapshot creates nothing: the restore inserts pairs only after the whole snapshot,
 * trailer included, has been read and checked. {@link #offset()} says where in the stream the fault
 * was found; the message names it and what was wrong.
 */
public final class SnapshotFormatException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The byte offset from the start of the snapshot at which the fault was found. */
    private final long offset;

    /**
     * A fault found at {@code offset}.
     *
     * @param what what was wrong, in words ("block checksum mismatch")
     * @param offset the byte offset, from the start of the snapshot, of the field or block at fault
     */
    public SnapshotFormatException(String what, long offset) {
        super("snapshot rejected at byte " + offset + ": " + what);
        this.offset = offset;
    }

    /**
     * Where the fault was found: the offset, from the first byte of the snapshot, of the field that
     * failed its check (an unknown record flag: the record's flags byte), or for a checksum that
     * disagrees, of the bytes it covers (the header, a block, the trailer; for the blocks checksum,
     * the first block); for a truncated snapshot, where the read that came short started. The
     * table is in {@code docs/snapshot-format.md}.
     *
     * @return the byte offset, not negative
     */
    public long offset() {
        return offset;
    }
}
