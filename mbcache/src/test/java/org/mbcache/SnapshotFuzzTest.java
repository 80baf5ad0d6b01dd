package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;
import org.mbcache.contract.SnapshotRecords;
import org.mbcache.contract.SnapshotRecords.Record;

/**
 * Fuzzing of the snapshot reader: valid snapshots mutated (bit flips, truncations, splices of two
 * snapshots, length and count fields overwritten with hostile values, blocks repeated or dropped)
 * and plain random bytes. Whatever the input, a restore either succeeds, having created only pairs
 * of the valid snapshots, or throws an {@link IOException} (a {@link SnapshotFormatException}), having
 * created nothing; never another exception, and the pairs cached before are never lost or changed.
 * The inputs are bytes in memory, so a read always ends; the tries and their time are in the
 * property's report.
 */
class SnapshotFuzzTest {

    /** Valid snapshots the mutations start from: empty, one pair, several block sizes. */
    private static final List<byte[]> ORIGINALS = List.of(
            SnapshotBytes.of(0, 4),
            SnapshotBytes.of(1, 4),
            SnapshotBytes.of(10, 3),
            SnapshotBytes.of(100, 40, 7),
            SnapshotBytes.of(1000, 150, 64));

    /** Every pair of every original: whatever a restore creates must be among them. */
    private static final Set<Record> VALID_PAIRS = new HashSet<>();

    /** Offsets of the block count fields and the trailer of each original: where lengths live. */
    private static final List<int[]> LENGTH_FIELDS = new ArrayList<>();

    static {
        for (byte[] original : ORIGINALS) {
            VALID_PAIRS.addAll(SnapshotRecords.pairs(original));
            List<Integer> fields = new ArrayList<>();
            ByteBuffer in = ByteBuffer.wrap(original);
            for (int at = SnapshotBytes.FIRST_BLOCK; ; ) {
                fields.add(at);
                int records = in.getInt(at);
                if (records == 0) {
                    fields.add(at + 4); // the trailer's pair count (its low half at + 8)
                    fields.add(at + 8);
                    break;
                }
                at += 4 + records * 13 + 4;
            }
            LENGTH_FIELDS.add(fields.stream().mapToInt(Integer::intValue).toArray());
        }
    }

    /** Hostile values for a length or count field. */
    private static final int[] HOSTILE = {0x8000_0000, -1, 0, 1, 2, 4095, 4096, 4097, Integer.MAX_VALUE, 0x7FFF_FFF0, 13};

    /** A pair cached before every restore: it must survive them all, flag and all. */
    private static final int KEPT_KEY = -7;
    private static final long KEPT_VALUE = -7;

    private static final MbCache CACHE = newCache();

    private static MbCache newCache() {
        MbCache cache = MbCache.builder().bucketBits(6).maxEntries(1 << 16).executor(Runnable::run).build();
        cache.create(KEPT_KEY, KEPT_VALUE, false);
        return cache;
    }

    @AfterContainer
    static void closeCache() {
        CACHE.close();
    }

    @Property(tries = 100_000, shrinking = ShrinkingMode.BOUNDED)
    void aRestoreOfAnyBytesCreatesOnlyValidPairsOrNothing(@ForAll("inputs") byte[] input) {
        long before = CACHE.size();
        long created;
        try {
            created = CACHE.readSnapshot(new ByteArrayInputStream(input));
        } catch (IOException refused) {
            assertEquals(before, CACHE.size(), "a refused input created pairs: " + refused.getMessage());
            created = 0;
        }
        assertEquals(before + created, CACHE.size());
        if (created > 0) {
            for (Record pair : SnapshotRecords.pairs(SnapshotRecords.snapshotOf(CACHE))) {
                assertTrue(VALID_PAIRS.contains(pair) || pair.equals(new Record(KEPT_KEY, KEPT_VALUE, 0)),
                        "a restore created a pair of no valid snapshot: " + pair);
            }
        }
        try (CacheEntry kept = CACHE.get(KEPT_KEY, KEPT_VALUE)) {
            assertTrue(kept != null && !kept.reusable(), "the pair cached before was lost or changed");
        }
    }

    @Provide
    Arbitrary<byte[]> inputs() {
        Arbitrary<Integer> original = Arbitraries.integers().between(0, ORIGINALS.size() - 1);
        Arbitrary<Integer> seed = Arbitraries.integers();
        return Arbitraries.oneOf(
                Combinators.combine(original, seed, Arbitraries.integers().between(1, 4)).as(SnapshotFuzzTest::flipBits),
                Combinators.combine(original, seed).as(SnapshotFuzzTest::truncate),
                Combinators.combine(original, original, seed).as(SnapshotFuzzTest::splice),
                Combinators.combine(original, seed).as(SnapshotFuzzTest::overwriteLength),
                Combinators.combine(original, seed).as(SnapshotFuzzTest::repeatOrDropRange),
                Combinators.combine(original, seed).as(SnapshotFuzzTest::randomTail),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(300));
    }

    private static byte[] flipBits(int original, int seed, int flips) {
        Random random = new Random(seed);
        byte[] bytes = ORIGINALS.get(original).clone();
        for (int i = 0; i < flips; i++) {
            bytes[random.nextInt(bytes.length)] ^= (byte) (1 << random.nextInt(8));
        }
        return bytes;
    }

    private static byte[] truncate(int original, int seed) {
        byte[] bytes = ORIGINALS.get(original);
        return Arrays.copyOf(bytes, new Random(seed).nextInt(bytes.length + 1));
    }

    /** A prefix of one snapshot followed by a suffix of another (or the same). */
    private static byte[] splice(int first, int second, int seed) {
        Random random = new Random(seed);
        byte[] head = ORIGINALS.get(first);
        byte[] tail = ORIGINALS.get(second);
        int cut = random.nextInt(head.length + 1);
        int from = random.nextInt(tail.length + 1);
        byte[] bytes = Arrays.copyOf(head, cut + tail.length - from);
        System.arraycopy(tail, from, bytes, cut, tail.length - from);
        return bytes;
    }

    /** A block count, the trailer's count or any 4 bytes overwritten with a hostile value. */
    private static byte[] overwriteLength(int original, int seed) {
        Random random = new Random(seed);
        byte[] bytes = ORIGINALS.get(original).clone();
        int[] fields = LENGTH_FIELDS.get(original);
        int at = random.nextBoolean() ? fields[random.nextInt(fields.length)] : random.nextInt(bytes.length - 3);
        ByteBuffer.wrap(bytes).putInt(at, random.nextInt(4) == 0 ? random.nextInt() : HOSTILE[random.nextInt(HOSTILE.length)]);
        return bytes;
    }

    /** A range of bytes (often a whole block) repeated or cut out. */
    private static byte[] repeatOrDropRange(int original, int seed) {
        Random random = new Random(seed);
        byte[] bytes = ORIGINALS.get(original);
        int[] fields = LENGTH_FIELDS.get(original);
        int from;
        int to;
        if (fields.length > 3 && random.nextBoolean()) {
            int block = random.nextInt(fields.length - 3);
            from = fields[block];
            to = fields[block + 1];
        } else {
            from = random.nextInt(bytes.length + 1);
            to = from + random.nextInt(bytes.length - from + 1);
        }
        if (random.nextBoolean()) {
            byte[] dropped = Arrays.copyOf(bytes, bytes.length - (to - from));
            System.arraycopy(bytes, to, dropped, from, bytes.length - to);
            return dropped;
        }
        byte[] repeated = Arrays.copyOf(bytes, bytes.length + (to - from));
        System.arraycopy(bytes, from, repeated, to, bytes.length - from);
        return repeated;
    }

    /** A valid prefix followed by random bytes. */
    private static byte[] randomTail(int original, int seed) {
        Random random = new Random(seed);
        byte[] bytes = ORIGINALS.get(original);
        int keep = random.nextInt(bytes.length + 1);
        byte[] mixed = Arrays.copyOf(bytes, keep + random.nextInt(200));
        for (int i = keep; i < mixed.length; i++) {
            mixed[i] = (byte) random.nextInt();
        }
        return mixed;
    }
}
