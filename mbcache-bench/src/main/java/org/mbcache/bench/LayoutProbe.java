package org.mbcache.bench;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import org.mbcache.internal.StripedStatistics;

/**
 * {@code java -Xms2g -Xmx2g -XX:+AlwaysPreTouch -jar mbcache-bench.jar layout [N]}: what a counted
 * hit costs for each way of placing a bucket and its slots in memory, before anyone builds the
 * layout. Plain arrays sized for {@code N} entries (default 10^7): 16-byte heads, 64-byte records
 * and 16-byte slots at 14 entries a bucket (the design study that led to the compact layout), and
 * 64-byte lines at 6 entries a bucket, a header and seven meta words (key in the upper half) as
 * {@link org.mbcache.CompactMbCache}'s buckets are today. Each access
 * pattern below is a hit's memory traffic and nothing else: the loads a lookup makes, then a
 * reference taken and given back by CAS on the slot's word (as {@code findFirstHandle} +
 * {@code release} do). One thread, {@code 2^20} random buckets a round, median of 7 rounds, every
 * loaded value summed into a sink so that no load can be dropped:
 * <ul>
 *   <li>{@code one-line}: one random slot line, then the CAS: the counted floor, one miss;</li>
 *   <li>{@code head+record, CAS in record}: two independent lines in two arrays, then the CAS on
 *       the record's line;</li>
 *   <li>{@code head+record -> slot} (the compact layout today): head and record together, then the
 *       slot whose index the record holds, in another array;</li>
 *   <li>{@code record -> slot, same page}: a record followed by its bucket's 16 slots in one array
 *       (320 bytes a bucket), the slot picked by what the record holds: a dependent miss, within the
 *       record's 4 KiB page for all but about one block in thirteen (those that straddle two);</li>
 *   <li>{@code head+block, 5 lines}: the head, and the record and all four slot lines of such a
 *       block loaded together before the CAS (no dependent load, more lines);</li>
 *   <li>{@code two plain loads}: two independent lines and no CAS, as fastutil's lookup;</li>
 *   <li>{@code line, 7 keys compared}: the compact hit's line: the header and the seven meta words
 *       loaded, the key compared with each without a branch ({@code CompactLine.keyPositions}), and
 *       the CAS on the word that holds it;</li>
 *   <li>{@code line, its word known}: the same line, the CAS on the key's word at a position known
 *       beforehand (what a lookup that did not have to search its line would do);</li>
 *   <li>{@code one-line + 7 compares}: {@code one-line} plus the seven compares of the line's
 *       search made on the one word it loaded: no more loads or lines, only the instructions;</li>
 *   <li>{@code line + fingerprint word}: the line searched through a second word of 8-bit
 *       fingerprints of its seven keys, all compared at once, then the CAS (a layout not built: what
 *       a search in a few instructions would save, for one more line and 8 bytes a bucket).</li>
 *   <li>{@code one-line + counted lookup}: {@code one-line}, then the lookup counted by the caches'
 *       own counters ({@link StripedStatistics#add}: the calling thread's stripe from its id, and an
 *       atomic add to that stripe's cell);</li>
 *   <li>{@code one-line + add, one cell}: {@code one-line}, then the same atomic add to one fixed
 *       cell: the add without the thread's stripe;</li>
 *   <li>{@code one-line + thread id}: {@code one-line}, then only the thread's stripe
 *       ({@link StripedStatistics#stripeOfCurrentThread}), summed: the stripe without the add.</li>
 * </ul>
 * The line patterns separate the instructions of a hit from its lines: a counted hit's CAS waits for
 * its own loads, but the processor runs the next hits' loads ahead of it as far as its reorder
 * window reaches, so the more instructions a hit has, the fewer hits' misses overlap. Times wander
 * between runs and machines; read the ratios to {@code one-line} within one run.
 */
final class LayoutProbe {
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final int OPS = 1 << 20;
    private static final int ROUNDS = 7;
    /** Longs of a block: a record (8) and 16 slots of two longs. */
    private static final int BLOCK_LONGS = 8 + 32;
    /** Entries a bucket of the line patterns: as a compact table sized from its bound. */
    private static final int LINE_ENTRIES = 6;

    private LayoutProbe() {}

    private static long sink;

    /**
     * Runs the probe and prints its table.
     *
     * @param args {@code [N]}, the entries the arrays are sized for (default 10^7)
     */
    public static void main(String[] args) {
        run(args.length > 0 ? Integer.parseInt(args[0]) : 10_000_000, System.out);
    }

    /** The probe at {@code n} entries, its table printed to {@code out}; {@code n} in [224, 10^8]. */
    static void run(int n, java.io.PrintStream out) {
        if (n < 16 * 14 || n > 100_000_000) {
            throw new IllegalArgumentException("N must be in [224, 10^8], was " + n);
        }
        int buckets = n / 14;
        SplittableRandom random = new SplittableRandom(42);
        long[] heads = new long[buckets * 2];
        long[] records = new long[buckets * 8];
        long[] slots = new long[n * 2];
        long[] blocks = new long[buckets * BLOCK_LONGS];
        for (int i = 0; i < records.length; i++) {
            records[i] = random.nextInt(n); // a slot index, as a record's reference holds one
        }
        for (int b = 0; b < buckets; b++) {
            for (int j = 0; j < 8; j++) {
                blocks[b * BLOCK_LONGS + j] = random.nextInt(16); // a position in the bucket's own block
            }
        }
        int lineBuckets = n / LINE_ENTRIES;
        long[] lines = new long[lineBuckets * 8];
        for (int i = 0; i < lines.length; i++) {
            lines[i] = (long) random.nextInt() << 32 | 1; // a key, and a count of one (the cache's reference)
        }
        int[] bucketOf = new int[OPS];
        int[] slotOf = new int[OPS];
        int[] lineWordOf = new int[OPS];
        for (int i = 0; i < OPS; i++) {
            bucketOf[i] = random.nextInt(buckets);
            slotOf[i] = random.nextInt(n);
            lineWordOf[i] = random.nextInt(lineBuckets) * 8 + 1 + random.nextInt(7);
        }
        long[] fingerprints = new long[lineBuckets];
        for (int b = 0; b < lineBuckets; b++) {
            for (int j = 1; j <= 7; j++) {
                fingerprints[b] |= fingerprint((int) (lines[b * 8 + j] >>> 32)) << 8 * (j - 1);
            }
        }
        Lines lineArrays = new Lines(lines, lineWordOf, fingerprints);
        String[] names = {"one-line", "head+record, CAS in record", "head+record -> slot",
            "record -> slot, same page", "head+block, 5 lines", "two plain loads", "line, 7 keys compared",
            "line, its word known", "one-line + 7 compares", "line + fingerprint word",
            "one-line + counted lookup", "one-line + add, one cell", "one-line + thread id"};
        double[][] times = new double[names.length][ROUNDS];
        for (int round = 0; round < ROUNDS; round++) {
            for (int p = 0; p < names.length; p++) {
                long t0 = System.nanoTime();
                int linePattern = p - PATTERNS.length;
                sink += p < PATTERNS.length ? PATTERNS[p].run(heads, records, slots, blocks, bucketOf, slotOf)
                        : linePattern < LINE_PATTERNS.length ? LINE_PATTERNS[linePattern].run(lineArrays, slots, slotOf)
                        : COUNT_PATTERNS[linePattern - LINE_PATTERNS.length].run(heads, records, slots, blocks,
                                bucketOf, slotOf);
                times[p][round] = (System.nanoTime() - t0) / (double) OPS;
            }
        }
        double floor = median(times[0]);
        out.printf(Locale.ROOT, "layout probe, N=%,d (%,d buckets), ns/op, median of %d rounds of %d%n",
                n, buckets, ROUNDS, OPS);
        out.println("| pattern | ns/op | / one-line |");
        out.println("| --- | ---: | ---: |");
        for (int p = 0; p < names.length; p++) {
            double t = median(times[p]);
            out.printf(Locale.ROOT, "| %s | %.1f | %.2f |%n", names[p], t, t / floor);
        }
        out.println("sink " + sink);
    }

    /** One access pattern: 2^20 counted hits (or plain lookups), the sum of what they loaded. */
    private interface Pattern {
        long run(long[] heads, long[] records, long[] slots, long[] blocks, int[] bucketOf, int[] slotOf);
    }

    /**
     * The patterns, in the order of {@code names}, each its own loop: one loop with a switch on the
     * pattern inside measured two plain loads at 35-41 ns against 22-24 this way (the switch costs
     * the plain loads their overlap), while the counted patterns did not move beyond the noise.
     */
    private static final Pattern[] PATTERNS = {
        LayoutProbe::oneLine, LayoutProbe::headAndRecord, LayoutProbe::recordThenSlot,
        LayoutProbe::slotInRecordPage, LayoutProbe::wholeBlock, LayoutProbe::twoPlainLoads,
    };

    /** The count patterns, after the line patterns in {@code names}. */
    private static final Pattern[] COUNT_PATTERNS = {
        LayoutProbe::oneLineCounted, LayoutProbe::oneLineAddOneCell, LayoutProbe::oneLineThreadId,
    };

    /** The line patterns' arrays: the lines, and for each operation the index of the word holding its key. */
    private record Lines(long[] words, int[] wordOf, long[] fingerprints) {}

    /** A line pattern: 2^20 counted hits, the sum of what they loaded. */
    private interface LinePattern {
        long run(Lines lines, long[] slots, int[] slotOf);
    }

    private static final LinePattern[] LINE_PATTERNS = {
        LayoutProbe::lineSearched, LayoutProbe::lineWordKnown, LayoutProbe::oneLineWithCompares,
        LayoutProbe::lineByFingerprints,
    };

    private static final long BYTE_ONES = 0x0101_0101_0101_0101L;
    private static final long BYTE_HIGHS = 0x8080_8080_8080_8080L;

    /** A key's 8-bit fingerprint, never 0 (the byte of an empty position): odd, 128 values. */
    private static long fingerprint(int key) {
        return (key * 0x9E37_79B9 >>> 24) | 1;
    }

    /**
     * The line searched through a word of its seven keys' fingerprints, one byte a position, in an
     * array of its own (a second line, its address known from the bucket as the line's is): the
     * positions whose byte equals the key's found at once (a zero-byte test on the word XOR the
     * fingerprint repeated), the CAS on the first of them if its word holds the key, the seven-key
     * search where it does not (another key of the line with the same fingerprint: 5 % of hits).
     */
    private static long lineByFingerprints(Lines lines, long[] slots, int[] slotOf) {
        long[] words = lines.words();
        long[] fingerprints = lines.fingerprints();
        long sum = 0;
        for (int i = 0; i < OPS; i++) {
            int at = lines.wordOf()[i];
            int base = at & ~7;
            int key = (int) (words[at] >>> 32);
            long x = fingerprints[base >>> 3] ^ fingerprint(key) * BYTE_ONES;
            long matches = (x - BYTE_ONES) & ~x & BYTE_HIGHS;
            if (matches == 0) {
                continue;
            }
            int candidate = base + 1 + (Long.numberOfTrailingZeros(matches) >>> 3);
            if ((int) (words[candidate] >>> 32) != key) {
                int positions = keyPositions(words, base, key);
                candidate = positions == 0 ? 0 : base + Integer.numberOfTrailingZeros(positions);
            }
            sum += candidate == 0 ? 0 : countedHit(words, candidate) + words[base];
        }
        return sum;
    }

    private static long lineSearched(Lines lines, long[] slots, int[] slotOf) {
        long[] words = lines.words();
        long sum = 0;
        for (int i = 0; i < OPS; i++) {
            int at = lines.wordOf()[i];
            int base = at & ~7;
            int key = (int) (words[at] >>> 32); // the operation's key: known to the caller, as a lookup's
            int positions = keyPositions(words, base, key);
            sum += positions == 0 ? 0 : countedHit(words, base + Integer.numberOfTrailingZeros(positions)) + words[base];
        }
        return sum;
    }

    private static long lineWordKnown(Lines lines, long[] slots, int[] slotOf) {
        long[] words = lines.words();
        long sum = 0;
        for (int i = 0; i < OPS; i++) {
            int at = lines.wordOf()[i];
            sum += countedHit(words, at) + words[at & ~7];
        }
        return sum;
    }

    private static long oneLineWithCompares(Lines lines, long[] slots, int[] slotOf) {
        long sum = 0;
        for (int i = 0; i < OPS; i++) {
            int at = 2 * slotOf[i] + 1;
            long word = countedHit(slots, at);
            int key = (int) slots[at - 1];
            sum += word + (comparesOnOneWord(word, key) == 42 ? 1 : 0);
        }
        return sum;
    }

    /** {@code CompactLine.keyPositions}' seven compares over the words of a line. */
    private static int keyPositions(long[] words, int base, int key) {
        int positions = 0;
        for (int j = 1; j <= 7; j++) {
            positions |= ((int) (words[base + j] >>> 32) == key ? 1 : 0) << j;
        }
        return positions;
    }

    /** The same seven compares, each on {@code word} shifted by its position: the instructions without the loads. */
    private static int comparesOnOneWord(long word, int key) {
        int positions = 0;
        for (int j = 1; j <= 7; j++) {
            positions |= ((int) ((word >>> j) >>> 32) == key ? 1 : 0) << j;
        }
        return positions;
    }

    private static long oneLine(long[] heads, long[] records, long[] slots, long[] blocks, int[] bucketOf,
                                int[] slotOf) {
        long sum = 0;
        for (int i = 0; i < OPS; i++) {
            sum += countedHit(slots, 2 * slotOf[i] + 1);
        }
        return sum;
    }

    private static long headAndRecord(long[] heads, long[] records, long[] slots, long[] blocks, int[] bucketOf,
                                      int[] slotOf) {
        long sum = 0;
        for (int i = 0; i < OPS; i++) {
            int b = bucketOf[i];
            sum += heads[2 * b] + countedHit(records, b * 8 + (i & 7));
        }
        return sum;
    }

    private static long recordThenSlot(long[] heads, long[] records, long[] slots, long[] blocks, int[] bucketOf,
                                       int[] slotOf) {
        long sum = 0;
        for (int i = 0; i < OPS; i++) {
            int b = bucketOf[i];
            long head = heads[2 * b];
            int slot = (int) records[b * 8 + (i & 7)];
            sum += head + countedHit(slots, 2 * slot + 1);
        }
        return sum;
    }

    private static long slotInRecordPage(long[] heads, long[] records, long[] slots, long[] blocks, int[] bucketOf,
                                         int[] slotOf) {
        long sum = 0;
        for (int i = 0; i < OPS; i++) {
            int base = bucketOf[i] * BLOCK_LONGS;
            int pos = (int) blocks[base + (i & 7)];
            sum += countedHit(blocks, base + 8 + 2 * pos + 1);
        }
        return sum;
    }

    private static long wholeBlock(long[] heads, long[] records, long[] slots, long[] blocks, int[] bucketOf,
                                   int[] slotOf) {
        long sum = 0;
        for (int i = 0; i < OPS; i++) {
            int b = bucketOf[i];
            int base = b * BLOCK_LONGS;
            long lines = heads[2 * b] + blocks[base + 8] + blocks[base + 16] + blocks[base + 24] + blocks[base + 32];
            int pos = (int) (blocks[base + (i & 7)] + (lines & 1)) & 15;
            sum += countedHit(blocks, base + 8 + 2 * pos + 1);
        }
        return sum;
    }

    private static long twoPlainLoads(long[] heads, long[] records, long[] slots, long[] blocks, int[] bucketOf,
                                      int[] slotOf) {
        long sum = 0;
        for (int i = 0; i < OPS; i++) {
            sum += slots[2 * slotOf[i]] + records[bucketOf[i] * 8];
        }
        return sum;
    }

    /** The count patterns' statistics: the caches' own counters, two of them (a hit and a miss). */
    private static final StripedStatistics COUNTS = new StripedStatistics(2);
    /** One cell, 128 bytes from the array's header, for the add without the thread's stripe. */
    private static final long[] ONE_CELL = new long[32];

    private static long oneLineCounted(long[] heads, long[] records, long[] slots, long[] blocks, int[] bucketOf,
                                       int[] slotOf) {
        long sum = 0;
        for (int i = 0; i < OPS; i++) {
            long word = countedHit(slots, 2 * slotOf[i] + 1);
            COUNTS.add(word == 0 ? 1 : 0, 1);
            sum += word;
        }
        return sum;
    }

    private static long oneLineAddOneCell(long[] heads, long[] records, long[] slots, long[] blocks, int[] bucketOf,
                                          int[] slotOf) {
        long sum = 0;
        for (int i = 0; i < OPS; i++) {
            long word = countedHit(slots, 2 * slotOf[i] + 1);
            LONGS.getAndAdd(ONE_CELL, 16 + (word == 0 ? 1 : 0), 1L);
            sum += word;
        }
        return sum;
    }

    private static long oneLineThreadId(long[] heads, long[] records, long[] slots, long[] blocks, int[] bucketOf,
                                        int[] slotOf) {
        int mask = COUNTS.stripes() - 1;
        long sum = 0;
        for (int i = 0; i < OPS; i++) {
            sum += countedHit(slots, 2 * slotOf[i] + 1) + StripedStatistics.stripeOfCurrentThread(mask);
        }
        return sum;
    }

    /**
     * A reference taken and given back on the word at {@code at}, as a hit and its release do (two
     * CAS loops); the word as the second CAS found it. Also {@code scale}'s {@code fastutil-counted}.
     */
    static long countedHit(long[] array, int at) {
        long word;
        do {
            word = (long) LONGS.getVolatile(array, at);
        } while (!LONGS.compareAndSet(array, at, word, word + 1));
        do {
            word = (long) LONGS.getVolatile(array, at);
        } while (!LONGS.compareAndSet(array, at, word, word - 1));
        return word;
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
