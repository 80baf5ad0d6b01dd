package org.mbcache.internal;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.zip.CRC32C;
import org.mbcache.SnapshotFormatException;

/**
 * The snapshot codec shared by every backend ({@code docs/snapshot-format.md}): a backend supplies
 * its pairs oldest first ({@link PairSource}) and creates pairs ({@link PairSink}); everything about
 * bytes is here.
 *
 * <p>Layout, big-endian: a 16-byte header (magic, major and minor version, flags, the header's
 * CRC32C); blocks of 1 to {@value #MAX_RECORDS_PER_BLOCK} records of {@value #RECORD_BYTES} bytes
 * (key, value, flags), each block led by its record count and followed by the CRC32C of count and
 * records; a 20-byte trailer (a zero count, the pair count, the CRC32C of all block bytes, the
 * trailer's own CRC32C); then the end of the stream.
 *
 * <p>Reading is all or nothing and bounded: no length read from the stream sizes an allocation
 * beyond one block ({@value #MAX_BLOCK_BYTES} bytes, checked before it is read); verified
 * records are kept 13 bytes each, up to the restore's budget of pairs (the newest, whole chunks
 * dropped from the oldest end as newer ones arrive), and created only once the trailer and the end
 * of the stream have been checked. So a stream that fails any check creates nothing.
 */
public final class Snapshots {

    /** The first eight bytes of every snapshot: {@code 0x89 'M' 'B' 'C' 'S' 'N' 'A' 'P'}. */
    static final long MAGIC = 0x894D_4243_534E_4150L;
    /** The format's major version: a reader refuses any other. */
    public static final int MAJOR_VERSION = 1;
    /** The format's minor version: readers of the same major version read every minor one. */
    public static final int MINOR_VERSION = 0;
    /** Bytes of the header: magic 8, major 1, minor 1, flags 2, CRC32C 4. */
    public static final int HEADER_BYTES = 16;
    /** Bytes of one record: key 4, value 8, flags 1. */
    public static final int RECORD_BYTES = 13;
    /** The most records one block holds. */
    public static final int MAX_RECORDS_PER_BLOCK = 4096;
    /** The most bytes one block occupies: its count, its records, its CRC32C. */
    public static final int MAX_BLOCK_BYTES = 4 + MAX_RECORDS_PER_BLOCK * RECORD_BYTES + 4;
    /** Bytes of the trailer after its zero count: pair count 8, blocks CRC32C 4, trailer CRC32C 4. */
    static final int TRAILER_REST_BYTES = 16;
    /** A record's flag: the pair is reusable. */
    public static final int RECORD_REUSABLE = 1;
    /** A record's flag: the entry was referenced (had a second chance pending); not restored. */
    public static final int RECORD_REFERENCED = 2;
    private static final int RECORD_FLAGS_KNOWN = RECORD_REUSABLE | RECORD_REFERENCED;

    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);

    private Snapshots() {}

    /** A backend's pairs, oldest first, handed over in batches. */
    @FunctionalInterface
    public interface PairSource {
        /**
         * Copies the next pairs, at most {@code max}, into the arrays from index {@code from}.
         *
         * @param keys where the keys go
         * @param values where the values go
         * @param flags where the record flags go ({@link #RECORD_REUSABLE}, {@link #RECORD_REFERENCED})
         * @param from the first index to fill
         * @param max the most pairs to copy, at least 1
         * @return how many were copied; 0 once there are no more (then every later call returns 0)
         */
        int next(int[] keys, long[] values, byte[] flags, int from, int max);
    }

    /** Where a restore creates its pairs: a backend's {@code create}. */
    @FunctionalInterface
    public interface PairSink {
        /**
         * Creates the pair unless it is cached.
         *
         * @param key the key
         * @param value the value
         * @param reusable the reusable flag
         * @return whether this call created it
         */
        boolean create(int key, long value, boolean reusable);
    }

    /**
     * Writes a snapshot of the pairs {@code source} hands over, in that order. Does not close or
     * flush {@code out} beyond what its own writes do.
     *
     * @param out where the bytes go
     * @param source the pairs, oldest first
     * @return the number of pairs written
     * @throws IOException if {@code out} throws
     */
    public static long write(OutputStream out, PairSource source) throws IOException {
        return write(out, source, MAX_RECORDS_PER_BLOCK);
    }

    /**
     * Writes a snapshot in blocks of at most {@code recordsPerBlock} records (readers take any size
     * from 1 to {@value #MAX_RECORDS_PER_BLOCK}): small blocks for tests of multi-block snapshots.
     *
     * @param out where the bytes go
     * @param source the pairs, oldest first
     * @param recordsPerBlock in {@code [1, MAX_RECORDS_PER_BLOCK]}
     * @return the number of pairs written
     * @throws IOException if {@code out} throws
     * @throws IllegalArgumentException if {@code recordsPerBlock} is out of range
     */
    public static long write(OutputStream out, PairSource source, int recordsPerBlock) throws IOException {
        Objects.requireNonNull(out, "out");
        if (recordsPerBlock < 1 || recordsPerBlock > MAX_RECORDS_PER_BLOCK) {
            throw new IllegalArgumentException("recordsPerBlock must be in [1, " + MAX_RECORDS_PER_BLOCK + "], was "
                    + recordsPerBlock);
        }
        int[] keys = new int[MAX_RECORDS_PER_BLOCK];
        long[] values = new long[MAX_RECORDS_PER_BLOCK];
        byte[] flags = new byte[MAX_RECORDS_PER_BLOCK];
        byte[] buffer = new byte[MAX_BLOCK_BYTES];
        CRC32C crc = new CRC32C();
        CRC32C blocksCrc = new CRC32C();

        LONG.set(buffer, 0, MAGIC);
        buffer[8] = (byte) MAJOR_VERSION;
        buffer[9] = (byte) MINOR_VERSION;
        SHORT.set(buffer, 10, (short) 0);
        crc.update(buffer, 0, 12);
        INT.set(buffer, 12, (int) crc.getValue());
        out.write(buffer, 0, HEADER_BYTES);

        long pairs = 0;
        boolean more = true;
        while (more) {
            int n = 0;
            while (n < recordsPerBlock) {
                int got = source.next(keys, values, flags, n, recordsPerBlock - n);
                if (got <= 0) {
                    more = false;
                    break;
                }
                n += got;
            }
            if (n == 0) {
                break;
            }
            INT.set(buffer, 0, n);
            int at = 4;
            for (int i = 0; i < n; i++, at += RECORD_BYTES) {
                INT.set(buffer, at, keys[i]);
                LONG.set(buffer, at + 4, values[i]);
                buffer[at + 12] = flags[i];
            }
            crc.reset();
            crc.update(buffer, 0, at);
            INT.set(buffer, at, (int) crc.getValue());
            at += 4;
            blocksCrc.update(buffer, 0, at);
            out.write(buffer, 0, at);
            pairs += n;
        }

        INT.set(buffer, 0, 0);
        LONG.set(buffer, 4, pairs);
        INT.set(buffer, 12, (int) blocksCrc.getValue());
        crc.reset();
        crc.update(buffer, 0, 16);
        INT.set(buffer, 16, (int) crc.getValue());
        out.write(buffer, 0, 4 + TRAILER_REST_BYTES);
        return pairs;
    }

    /**
     * Reads a whole snapshot and checks it, and answers its newest {@code budget} records, to be
     * created, oldest of those first, with {@link CheckedRecords#createNewest}: nothing is created
     * unless every check passed, the end of the stream included. Does not close {@code in}.
     *
     * <p>Memory: one landing buffer of a block's maximum, which is the only array handed to
     * {@code in}; each block is copied out of it before it is checked, so bytes the stream changes
     * later (it may keep the array) are never checked or created. The checked records are kept 13
     * bytes each in chunks of {@value #MAX_RECORDS_PER_BLOCK} records, only the newest
     * {@code budget} of them (whole chunks dropped from the oldest end): at most
     * {@code 13 * min(budget, pairs)} bytes plus three chunks and the landing buffer (212,996 bytes),
     * whatever the sizes of the blocks.
     *
     * @param in the snapshot
     * @param budget the most pairs to keep (the newest); zero or less keeps none but still checks
     * @return the kept records
     * @throws SnapshotFormatException if the bytes are not a valid snapshot of a known version
     * @throws IOException if {@code in} throws
     */
    public static CheckedRecords readChecked(InputStream in, long budget) throws IOException {
        Objects.requireNonNull(in, "in");
        Reader reader = new Reader(in);
        CheckedRecords kept = new CheckedRecords();
        byte[] word = new byte[4]; // a block's count and checksum as checked, never handed to the stream
        CRC32C crc = new CRC32C();

        reader.header();
        CRC32C blocksCrc = new CRC32C();
        long pairs = 0;
        for (;;) {
            long blockAt = reader.offset;
            int n = reader.readInt("block record count");
            if (n == 0) {
                break;
            }
            if (n < 0 || n > MAX_RECORDS_PER_BLOCK) {
                throw new SnapshotFormatException("block record count " + Integer.toUnsignedString(n)
                        + " outside 1.." + MAX_RECORDS_PER_BLOCK, blockAt);
            }
            int recordBytes = n * RECORD_BYTES; // at most MAX_BLOCK_BYTES - 8, checked above
            byte[] landing = reader.read(recordBytes + 4, "block of " + n + " records");
            int checksum = (int) INT.get(landing, recordBytes);
            kept.append(landing, n);
            INT.set(word, 0, n);
            crc.reset();
            crc.update(word, 0, 4);
            kept.updateLast(crc, n);
            if ((int) crc.getValue() != checksum) {
                throw new SnapshotFormatException("block checksum mismatch (block of " + n + " records)", blockAt);
            }
            int unknown = kept.firstUnknownFlags(n, RECORD_FLAGS_KNOWN);
            if (unknown >= 0) {
                long flagAt = blockAt + 4 + (long) unknown * RECORD_BYTES + 12;
                throw new SnapshotFormatException("unknown record flag bits 0x"
                        + Integer.toHexString(kept.flagsOfLast(n, unknown) & ~RECORD_FLAGS_KNOWN)
                        + " in record " + unknown, flagAt);
            }
            blocksCrc.update(word, 0, 4);
            kept.updateLast(blocksCrc, n);
            INT.set(word, 0, checksum);
            blocksCrc.update(word, 0, 4);
            pairs += n;
            kept.trim(budget);
        }
        long trailerAt = reader.offset - 4;
        long count = reader.readLong("trailer pair count");
        int blocksChecksum = reader.readInt("trailer blocks checksum");
        int trailerChecksum = reader.readInt("trailer checksum");
        byte[] trailer = new byte[16];
        INT.set(trailer, 0, 0);
        LONG.set(trailer, 4, count);
        INT.set(trailer, 12, blocksChecksum);
        crc.reset();
        crc.update(trailer, 0, 16);
        if ((int) crc.getValue() != trailerChecksum) {
            throw new SnapshotFormatException("trailer checksum mismatch", trailerAt);
        }
        if (count != pairs) {
            throw new SnapshotFormatException("trailer pair count " + Long.toUnsignedString(count)
                    + " disagrees with the " + pairs + " records of the blocks", trailerAt + 4);
        }
        if ((int) blocksCrc.getValue() != blocksChecksum) {
            throw new SnapshotFormatException("blocks checksum mismatch (a block missing, repeated or reordered)",
                    HEADER_BYTES);
        }
        if (in.read() != -1) {
            throw new SnapshotFormatException("bytes after the trailer", reader.offset);
        }
        return kept;
    }

    /**
     * The checked records, 13 bytes each as in a block, in chunks of {@value #MAX_RECORDS_PER_BLOCK}
     * records: the oldest chunk first, the last one filled up to {@link #lastFill}. A block of at most
     * that many records spans at most the last two chunks. Arrays here are never handed to the stream.
     */
    public static final class CheckedRecords {
        static final int CHUNK_RECORDS = MAX_RECORDS_PER_BLOCK;
        final ArrayDeque<byte[]> chunks = new ArrayDeque<>();
        /** The newest chunk, and the one before it (null if none): where the newest block lies. */
        byte[] last;
        byte[] previous;
        /** Records in the last chunk. */
        int lastFill = CHUNK_RECORDS;
        /** Records in all chunks. */
        long records;
        /** A chunk dropped by {@link #trim}, used again for the next one. */
        byte[] spare;

        /** Copies the first {@code n} records of {@code from} after the last one kept. */
        void append(byte[] from, int n) {
            int copied = 0;
            while (copied < n) {
                if (lastFill == CHUNK_RECORDS) {
                    byte[] chunk = spare != null ? spare : new byte[CHUNK_RECORDS * RECORD_BYTES];
                    chunks.addLast(chunk);
                    spare = null;
                    previous = last;
                    last = chunk;
                    lastFill = 0;
                }
                int now = Math.min(n - copied, CHUNK_RECORDS - lastFill);
                System.arraycopy(from, copied * RECORD_BYTES, last, lastFill * RECORD_BYTES, now * RECORD_BYTES);
                lastFill += now;
                copied += now;
                records += now;
            }
        }

        /** Feeds the bytes of the last {@code n} records to {@code crc}, oldest first. */
        void updateLast(CRC32C crc, int n) {
            if (n > lastFill) {
                int before = n - lastFill;
                crc.update(previous, (CHUNK_RECORDS - before) * RECORD_BYTES, before * RECORD_BYTES);
                crc.update(last, 0, lastFill * RECORD_BYTES);
            } else {
                crc.update(last, (lastFill - n) * RECORD_BYTES, n * RECORD_BYTES);
            }
        }

        /** The flags byte of record {@code i} of the last {@code n} records. */
        int flagsOfLast(int n, int i) {
            int fromEnd = n - i; // 1 for the newest record
            return fromEnd <= lastFill
                    ? last[(lastFill - fromEnd) * RECORD_BYTES + 12] & 0xFF
                    : previous[(CHUNK_RECORDS - (fromEnd - lastFill)) * RECORD_BYTES + 12] & 0xFF;
        }

        /** The index among the last {@code n} records of the first with a flag bit outside {@code known}, or -1. */
        int firstUnknownFlags(int n, int known) {
            for (int i = 0; i < n; i++) {
                if ((flagsOfLast(n, i) & ~known) != 0) {
                    return i;
                }
            }
            return -1;
        }

        /** Drops whole oldest chunks while the others still hold {@code budget} records. */
        void trim(long budget) {
            previous = null;
            while (!chunks.isEmpty()) {
                int oldest = chunks.size() == 1 ? lastFill : CHUNK_RECORDS;
                if (records - oldest < budget) {
                    return;
                }
                spare = chunks.pollFirst();
                records -= oldest;
                if (chunks.isEmpty()) {
                    last = null;
                    lastFill = CHUNK_RECORDS;
                }
            }
        }

        private CheckedRecords() {}

        /**
         * Creates the newest {@code budget} of the kept records (at most all of them), oldest first.
         *
         * @param budget the most pairs to create; zero or less creates none
         * @param sink where they are created
         * @return how many the sink reported created
         */
        public long createNewest(long budget, PairSink sink) {
            if (budget <= 0) {
                return 0;
            }
            long skip = Math.max(0, records - budget);
            long created = 0;
            int remaining = chunks.size();
            for (byte[] chunk : chunks) {
                int filled = --remaining == 0 ? lastFill : CHUNK_RECORDS;
                int from = (int) Math.min(skip, filled);
                skip -= from;
                created += createAll(chunk, from, filled, sink);
            }
            return created;
        }
    }

    /**
     * Creates records {@code from} to {@code to} of a chunk; returns how many the sink created. A
     * method of its own, small, so that the JIT compiles the loop with the sink inlined.
     */
    private static int createAll(byte[] chunk, int from, int to, PairSink sink) {
        int created = 0;
        for (int at = from * RECORD_BYTES, end = to * RECORD_BYTES; at < end; at += RECORD_BYTES) {
            if (sink.create((int) INT.get(chunk, at), (long) LONG.get(chunk, at + 4),
                    (chunk[at + 12] & RECORD_REUSABLE) != 0)) {
                created++;
            }
        }
        return created;
    }

    /**
     * Exact reads that count their offset and turn an early end into a format error. Every read
     * goes into {@link #landing}, the one array handed to the stream; what is checked is copied out
     * of it first (a field into a local, a block's records into {@link CheckedRecords}).
     */
    private static final class Reader {
        final InputStream in;
        final byte[] landing = new byte[MAX_BLOCK_BYTES - 4];
        final byte[] header = new byte[HEADER_BYTES];
        final CRC32C crc = new CRC32C();
        long offset;

        Reader(InputStream in) {
            this.in = in;
        }

        /** Reads {@code length} bytes, at most a block's records and checksum, into the landing buffer. */
        byte[] read(int length, String what) throws IOException {
            int got = in.readNBytes(landing, 0, length);
            if (got != length) {
                long at = offset;
                offset += got;
                throw new SnapshotFormatException("truncated: " + what + " needs " + length + " bytes, the stream "
                        + (offset == 0 ? "is empty" : "ended after " + got), at);
            }
            offset += length;
            return landing;
        }

        int readInt(String what) throws IOException {
            return (int) INT.get(read(4, what), 0);
        }

        long readLong(String what) throws IOException {
            return (long) LONG.get(read(8, what), 0);
        }

        void header() throws IOException {
            System.arraycopy(read(HEADER_BYTES, "header"), 0, header, 0, HEADER_BYTES);
            byte[] scratch = header;
            if ((long) LONG.get(scratch, 0) != MAGIC) {
                throw new SnapshotFormatException("bad magic: not an mbcache snapshot", 0);
            }
            int major = scratch[8] & 0xFF;
            if (major != MAJOR_VERSION) {
                throw new SnapshotFormatException("format version " + major + "." + (scratch[9] & 0xFF)
                        + (major > MAJOR_VERSION ? " is newer than" : " is not") + " the version this reader knows, "
                        + MAJOR_VERSION + "." + MINOR_VERSION, 8);
            }
            // Magic and major version come first and keep their places in every version: a newer
            // header may be laid out differently, and must be reported as newer, not as damaged.
            crc.update(scratch, 0, 12);
            if ((int) crc.getValue() != (int) INT.get(scratch, 12)) {
                throw new SnapshotFormatException("header checksum mismatch", 0);
            }
            int flags = (short) SHORT.get(scratch, 10) & 0xFFFF;
            if (flags != 0) {
                throw new SnapshotFormatException("unknown header flag bits 0x" + Integer.toHexString(flags), 10);
            }
        }
    }

    /**
     * Writes a snapshot to {@code file} atomically: to a temporary file in the same directory, forced
     * to the device, then moved over {@code file} with {@code ATOMIC_MOVE}; the temporary file is
     * deleted if anything fails.
     *
     * @param file the target
     * @param writer writes the snapshot to a stream, returning the pair count
     * @return what {@code writer} returned
     * @throws IOException if writing, forcing or moving fails, or {@code file} has no parent
     *     directory (a root: a {@link FileSystemException} naming it)
     */
    public static long writeFile(Path file, StreamWriter writer) throws IOException {
        Objects.requireNonNull(file, "file");
        Path target = file.toAbsolutePath();
        Path directory = target.getParent();
        if (directory == null || target.getFileName() == null) {
            throw new FileSystemException(target.toString(), null,
                    "not a file a snapshot can be written to: it has no parent directory");
        }
        Path temporary = Files.createTempFile(directory, "." + target.getFileName() + ".", ".tmp");
        boolean moved = false;
        try {
            long pairs;
            try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.WRITE)) {
                OutputStream out = new BufferedOutputStream(Channels.newOutputStream(channel), 1 << 16);
                pairs = writer.write(out);
                out.flush();
                channel.force(true);
            }
            Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            moved = true;
            forceDirectory(directory);
            return pairs;
        } finally {
            if (!moved) {
                Files.deleteIfExists(temporary);
            }
        }
    }

    /** Makes the rename durable where the platform allows forcing a directory (Linux); else nothing. */
    private static void forceDirectory(Path directory) {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException | UnsupportedOperationException notSupported) {
            // Not every platform opens directories; the file itself is forced and in place.
        }
    }

    /**
     * Reads a snapshot from {@code file} with {@code reader}, through a buffer.
     *
     * @param file the snapshot file
     * @param reader reads the snapshot from a stream, returning the pairs created
     * @return what {@code reader} returned
     * @throws IOException if opening or reading fails, or the snapshot is refused
     */
    public static long readFile(Path file, StreamReader reader) throws IOException {
        Objects.requireNonNull(file, "file");
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
            return reader.read(in);
        }
    }

    /** A backend's {@code writeSnapshot(OutputStream)}. */
    @FunctionalInterface
    public interface StreamWriter {
        /**
         * Writes a snapshot.
         *
         * @param out the stream
         * @return pairs written
         * @throws IOException if the stream throws
         */
        long write(OutputStream out) throws IOException;
    }

    /** A backend's {@code readSnapshot(InputStream)}. */
    @FunctionalInterface
    public interface StreamReader {
        /**
         * Reads a snapshot.
         *
         * @param in the stream
         * @return pairs created
         * @throws IOException if the stream throws or the snapshot is refused
         */
        long read(InputStream in) throws IOException;
    }
}
