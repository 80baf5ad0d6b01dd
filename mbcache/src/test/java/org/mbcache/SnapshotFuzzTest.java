package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.mbcache.contract.SnapshotRecords;
import org.mbcache.contract.SnapshotRecords.Record;

/**
 * A seeded fuzz test of the snapshot reader: valid snapshots mutated and plain random bytes, restored
 * one after another into one cache. Whatever the input, a restore either succeeds, having created
 * only pairs of the valid snapshots, or throws an {@link IOException} (a {@link SnapshotFormatException}),
 * having created nothing; never another exception or an {@link Error}, and the pair cached before is
 * never lost or changed.
 *
 * <p><b>Inputs.</b> Eight families, taken in turn (input {@code i} is of family {@code i % 8}):
 * bits flipped, a truncation, a splice of two snapshots, a count or length field (or any 4 bytes)
 * overwritten with a hostile value such as 2^31 or -1, a range (often a whole block) repeated or
 * dropped, a valid prefix with a random tail, random bytes, and random bytes after a valid header.
 * Input {@code i} is drawn from a {@link SplittableRandom} of its own, seeded from the run's seed and
 * {@code i}, so it is the same in every run of that seed.
 *
 * <p><b>Size of a run.</b> {@value #DEFAULT_INPUTS} inputs, stopped early once {@value #TIME_CAP_SECONDS}
 * seconds have passed (a loaded machine, a slow collector): the test then passes if at least
 * {@value #FLOOR_INPUTS} inputs ran and fails if fewer did, since a reader that slow is itself a
 * fault. On a shared 2-core machine a run took 2 to 13 s. The count, the seed and the time are printed.
 *
 * <p><b>Hangs.</b> The inputs are bytes in memory, so a read always ends; should the reader loop
 * anyway, an input still running after {@value #HANG_SECONDS} seconds fails the test, naming it.
 *
 * <p><b>Reproducing.</b> A failure names the run's seed, the input's index and family, how it was made
 * (which original, which offsets), its length and its first byte that differs from that original.
 * {@code -Dmbcache.fuzz.seed=} (decimal, or hex with {@code 0x}) sets the seed and
 * {@code -Dmbcache.fuzz.inputs=} the count; a count so set runs in full, with no time cap. Inputs
 * {@code 0..i} under the failure's seed replay it exactly, earlier restores included:
 * <pre>{@code mvn -o -pl mbcache test -Dtest=SnapshotFuzzTest -Dmbcache.fuzz.seed=<seed> -Dmbcache.fuzz.inputs=<i + 1>}</pre>
 */
class SnapshotFuzzTest {

    /** The seed of a run without {@code -Dmbcache.fuzz.seed}. */
    static final long DEFAULT_SEED = 0x6D62_6361_6368_6521L;
    /** Inputs of a run without {@code -Dmbcache.fuzz.inputs}. */
    static final int DEFAULT_INPUTS = 100_000;
    /** A default run stops at this many seconds... */
    static final int TIME_CAP_SECONDS = 20;
    /** ...and fails if fewer inputs than this ran by then. */
    static final int FLOOR_INPUTS = 20_000;
    /** One input running longer than this is a hang. */
    static final int HANG_SECONDS = 10;

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

    @AfterAll
    static void closeCache() {
        CACHE.close();
    }

    /** The input families, taken in turn. */
    enum Family {
        BIT_FLIPS, TRUNCATION, SPLICE, HOSTILE_FIELD, RANGE_REPEATED_OR_DROPPED, RANDOM_TAIL, RANDOM_BYTES,
        RANDOM_AFTER_HEADER
    }

    private static final Family[] FAMILIES = Family.values();

    /**
     * One input: its bytes, the original it was made from (-1 for none) and how it was made.
     */
    record Input(Family family, byte[] bytes, int original, String how) {}

    /** The input in flight, for the hang check: its index, and when it started. */
    private volatile long inFlight = -1;
    private volatile long inFlightSince;

    @Test
    void aRestoreOfAnyBytesCreatesOnlyValidPairsOrNothing() throws Exception {
        String seedProperty = System.getProperty("mbcache.fuzz.seed");
        String inputsProperty = System.getProperty("mbcache.fuzz.inputs");
        long seed = seedProperty == null || seedProperty.isBlank() ? DEFAULT_SEED : parseSeed(seedProperty.strip());
        boolean capped = inputsProperty == null || inputsProperty.isBlank();
        int inputs = capped ? DEFAULT_INPUTS : Integer.parseInt(inputsProperty.strip());

        ExecutorService worker = Executors.newSingleThreadExecutor(task -> {
            Thread thread = new Thread(task, "snapshot-fuzz");
            thread.setDaemon(true); // a hung reader must not keep the JVM alive
            return thread;
        });
        long start = System.nanoTime();
        Map<Family, Integer> ran;
        try {
            Future<Map<Family, Integer>> run = worker.submit(() -> fuzz(seed, inputs, capped, start));
            ran = awaitWithoutHang(run, seed);
        } finally {
            worker.shutdownNow();
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        int total = ran.values().stream().mapToInt(Integer::intValue).sum();
        System.out.printf("SnapshotFuzzTest: %,d of %,d inputs in %,d ms, seed %s; by family %s%n",
                total, inputs, millis, seedText(seed), ran);
        if (total < inputs) {
            assertTrue(total >= FLOOR_INPUTS, "only " + total + " of " + inputs + " inputs ran in the "
                    + TIME_CAP_SECONDS + " s cap (at least " + FLOOR_INPUTS + " must), seed " + seedText(seed));
        }
    }

    /** Waits for the run, failing it if one input has been in flight for more than {@value #HANG_SECONDS} s. */
    private Map<Family, Integer> awaitWithoutHang(Future<Map<Family, Integer>> run, long seed) throws Exception {
        for (;;) {
            try {
                return run.get(1, TimeUnit.SECONDS);
            } catch (ExecutionException failed) {
                if (failed.getCause() instanceof Error error) {
                    throw error;
                }
                throw failed;
            } catch (TimeoutException stillRunning) {
                long index = inFlight;
                long since = inFlightSince;
                if (index >= 0 && System.nanoTime() - since > TimeUnit.SECONDS.toNanos(HANG_SECONDS)) {
                    run.cancel(true);
                    Input input = input(seed, index);
                    fail(describe(seed, index, input) + "\n  still running after " + HANG_SECONDS + " s (a hang)");
                }
            }
        }
    }

    /** Restores inputs {@code 0..inputs-1} of {@code seed}, checking each; returns how many ran of each family. */
    private Map<Family, Integer> fuzz(long seed, int inputs, boolean capped, long start) {
        long cap = start + TimeUnit.SECONDS.toNanos(TIME_CAP_SECONDS);
        Map<Family, Integer> ran = new EnumMap<>(Family.class);
        for (long index = 0; index < inputs; index++) {
            long now = System.nanoTime();
            if (capped && now - cap > 0) {
                break;
            }
            Input input = input(seed, index);
            inFlightSince = now;
            inFlight = index;
            check(seed, index, input);
            inFlight = -1;
            ran.merge(input.family(), 1, Integer::sum);
        }
        return ran;
    }

    /**
     * Restores the input into {@link #CACHE} and checks the properties; an {@link AssertionError}
     * naming the input if one does not hold.
     */
    private static void check(long seed, long index, Input input) {
        long before = CACHE.size();
        long created;
        try {
            created = CACHE.readSnapshot(new ByteArrayInputStream(input.bytes()));
        } catch (IOException refused) {
            if (CACHE.size() != before) {
                throw violated(seed, index, input, "a refused input created pairs (size " + before + " before, "
                        + CACHE.size() + " after): " + refused, refused);
            }
            created = 0;
        } catch (Throwable other) {
            throw violated(seed, index, input, "the restore threw neither an IOException nor returned: " + other, other);
        }
        if (CACHE.size() != before + created) {
            throw violated(seed, index, input, "the restore reported " + created + " created, but the size went from "
                    + before + " to " + CACHE.size(), null);
        }
        if (created > 0) {
            for (Record pair : SnapshotRecords.pairs(SnapshotRecords.snapshotOf(CACHE))) {
                if (!VALID_PAIRS.contains(pair) && !pair.equals(new Record(KEPT_KEY, KEPT_VALUE, 0))) {
                    throw violated(seed, index, input, "a restore created a pair of no valid snapshot: " + pair, null);
                }
            }
        }
        try (CacheEntry kept = CACHE.get(KEPT_KEY, KEPT_VALUE)) {
            if (kept == null || kept.reusable()) {
                throw violated(seed, index, input,
                        "the pair cached before was " + (kept == null ? "lost" : "changed (now reusable)"), null);
            }
        }
    }

    private static AssertionError violated(long seed, long index, Input input, String what, Throwable cause) {
        return new AssertionError(describe(seed, index, input) + "\n  " + what, cause);
    }

    /** Input {@code index} of the run of {@code seed}: the same in every run. */
    static Input input(long seed, long index) {
        SplittableRandom random = new SplittableRandom(mix(seed + index * 0x9E37_79B9_7F4A_7C15L));
        Family family = FAMILIES[(int) (index % FAMILIES.length)];
        int original = random.nextInt(ORIGINALS.size());
        return switch (family) {
            case BIT_FLIPS -> flipBits(original, random);
            case TRUNCATION -> truncate(original, random);
            case SPLICE -> splice(original, random.nextInt(ORIGINALS.size()), random);
            case HOSTILE_FIELD -> overwriteField(original, random);
            case RANGE_REPEATED_OR_DROPPED -> repeatOrDropRange(original, random);
            case RANDOM_TAIL -> randomTail(original, random);
            case RANDOM_BYTES -> randomBytes(random);
            case RANDOM_AFTER_HEADER -> randomAfterHeader(random);
        };
    }

    /** Stafford's mix 13: neighbouring indexes get unrelated generators. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }

    private static Input flipBits(int original, SplittableRandom random) {
        byte[] bytes = ORIGINALS.get(original).clone();
        StringBuilder how = new StringBuilder("bits flipped (byte:bit)");
        for (int i = 0, flips = random.nextInt(1, 5); i < flips; i++) {
            int at = random.nextInt(bytes.length);
            int bit = random.nextInt(8);
            bytes[at] ^= (byte) (1 << bit);
            how.append(' ').append(at).append(':').append(bit);
        }
        return new Input(Family.BIT_FLIPS, bytes, original, how.toString());
    }

    private static Input truncate(int original, SplittableRandom random) {
        byte[] bytes = ORIGINALS.get(original);
        int length = random.nextInt(bytes.length + 1);
        return new Input(Family.TRUNCATION, Arrays.copyOf(bytes, length), original,
                "truncated to " + length + " of " + bytes.length + " bytes");
    }

    /** A prefix of one snapshot followed by a suffix of another (or the same). */
    private static Input splice(int first, int second, SplittableRandom random) {
        byte[] head = ORIGINALS.get(first);
        byte[] tail = ORIGINALS.get(second);
        int cut = random.nextInt(head.length + 1);
        int from = random.nextInt(tail.length + 1);
        byte[] bytes = Arrays.copyOf(head, cut + tail.length - from);
        System.arraycopy(tail, from, bytes, cut, tail.length - from);
        return new Input(Family.SPLICE, bytes, first,
                "bytes [0, " + cut + ") of original " + first + ", then [" + from + ", " + tail.length + ") of original "
                        + second);
    }

    /** A block count, the trailer's count or any 4 bytes overwritten with a hostile value. */
    private static Input overwriteField(int original, SplittableRandom random) {
        byte[] bytes = ORIGINALS.get(original).clone();
        int[] fields = LENGTH_FIELDS.get(original);
        int at = random.nextBoolean() ? fields[random.nextInt(fields.length)] : random.nextInt(bytes.length - 3);
        int value = random.nextInt(4) == 0 ? random.nextInt() : HOSTILE[random.nextInt(HOSTILE.length)];
        ByteBuffer.wrap(bytes).putInt(at, value);
        return new Input(Family.HOSTILE_FIELD, bytes, original,
                "int at " + at + " set to " + value + " (0x" + Integer.toHexString(value) + ")");
    }

    /** A range of bytes (often a whole block) repeated or cut out. */
    private static Input repeatOrDropRange(int original, SplittableRandom random) {
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
            return new Input(Family.RANGE_REPEATED_OR_DROPPED, dropped, original,
                    "bytes [" + from + ", " + to + ") dropped");
        }
        byte[] repeated = Arrays.copyOf(bytes, bytes.length + (to - from));
        System.arraycopy(bytes, from, repeated, to, bytes.length - from);
        return new Input(Family.RANGE_REPEATED_OR_DROPPED, repeated, original,
                "bytes [" + from + ", " + to + ") repeated");
    }

    /** A valid prefix followed by random bytes. */
    private static Input randomTail(int original, SplittableRandom random) {
        byte[] bytes = ORIGINALS.get(original);
        int keep = random.nextInt(bytes.length + 1);
        byte[] mixed = Arrays.copyOf(bytes, keep + random.nextInt(200));
        fillRandom(mixed, keep, random);
        return new Input(Family.RANDOM_TAIL, mixed, original,
                "first " + keep + " bytes kept, " + (mixed.length - keep) + " random bytes after them");
    }

    /** Random bytes, up to 300; short ones (a header cut short) a quarter of the time. */
    private static Input randomBytes(SplittableRandom random) {
        byte[] bytes = new byte[random.nextInt(4) == 0 ? random.nextInt(21) : random.nextInt(301)];
        fillRandom(bytes, 0, random);
        return new Input(Family.RANDOM_BYTES, bytes, -1, "random bytes");
    }

    /**
     * A valid header, then random bytes; half the time a small block count comes first, so that the
     * reader goes on to read a block.
     */
    private static Input randomAfterHeader(SplittableRandom random) {
        int header = SnapshotBytes.FIRST_BLOCK;
        byte[] bytes = Arrays.copyOf(ORIGINALS.get(0), header + random.nextInt(301));
        fillRandom(bytes, header, random);
        String how = "a valid header, then random bytes";
        if (bytes.length >= header + 4 && random.nextBoolean()) {
            int records = random.nextInt(1, 33);
            ByteBuffer.wrap(bytes).putInt(header, records);
            how = "a valid header, a block count of " + records + ", then random bytes";
        }
        return new Input(Family.RANDOM_AFTER_HEADER, bytes, 0, how);
    }

    private static void fillRandom(byte[] bytes, int from, SplittableRandom random) {
        for (int i = from; i < bytes.length; i++) {
            bytes[i] = (byte) random.nextInt(256);
        }
    }

    /**
     * Seed, index, family, how the input was made, its length, its first byte unlike its original, its
     * bytes if short, and how to replay it.
     */
    static String describe(long seed, long index, Input input) {
        StringBuilder text = new StringBuilder()
                .append("seed ").append(seedText(seed)).append(", input ").append(index)
                .append(", family ").append(input.family())
                .append(input.original() >= 0 ? " of original " + input.original() : "")
                .append(" (").append(input.how()).append("), ").append(input.bytes().length).append(" bytes");
        if (input.original() >= 0) {
            byte[] original = ORIGINALS.get(input.original());
            int differs = Arrays.mismatch(original, input.bytes());
            text.append(differs < 0 ? ", equal to the original"
                    : ", first unlike the original (" + original.length + " bytes) at byte " + differs);
        }
        if (input.bytes().length <= 64) {
            text.append(", hex ").append(HexFormat.of().formatHex(input.bytes()));
        }
        return text.append("; replay with -Dmbcache.fuzz.seed=").append(seedText(seed))
                .append(" -Dmbcache.fuzz.inputs=").append(index + 1).toString();
    }

    private static String seedText(long seed) {
        return "0x" + Long.toHexString(seed);
    }

    private static long parseSeed(String text) {
        if (text.startsWith("0x") || text.startsWith("0X")) {
            return Long.parseUnsignedLong(text.substring(2), 16);
        }
        return Long.parseLong(text);
    }
}
