package org.mbcache.bench;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;

/**
 * The flood benchmark: what one writer who chooses keys costs everybody else. A plain harness
 * (not JMH: a flood is a sequence of phases, not a steady state), one backend per JVM.
 *
 * <p>For each backend, cache size and kind of flood, on a fresh cache with the fixed
 * {@link Backends#HASH_SEED} and the library's default chain cap:
 * <ol>
 *   <li><b>fill</b>: {@code maxEntries / 2} honest pairs {@code (keyOf(i), i)};</li>
 *   <li><b>before</b>: {@link #ROUNDS} rounds of: {@value #BATCH} honest new creates timed together,
 *       {@value #BATCH} victim operations timed together, {@value #BATCH} honest operations timed
 *       together, then one victim and one honest operation each timed alone;</li>
 *   <li><b>flood</b>: {@code 2 * maxEntries} attacker creates in batches of {@value #BATCH} timed
 *       together, every {@value #HONEST_EVERY}th batch followed by {@value #BATCH} honest new creates
 *       timed together (the same fill);</li>
 *   <li><b>during</b>: {@link #ROUNDS} rounds of {@value #BATCH} more attacker creates, then
 *       exactly the round of the before phase.</li>
 * </ol>
 * A phase that runs past its time budget stops early (an unprotected cache can make one create
 * cost milliseconds); the line says how many operations it did.
 *
 * <p>Implementation notes, on what makes the figures trustworthy:
 * <ul>
 *   <li><b>Warm-up</b>: before anything is measured, {@link #main} runs every kind of flood
 *       completely, {@value #WARM_UP_RUNS} times, on a throwaway cache of {@value #WARM_UP_ENTRIES}
 *       entries: the same code paths (fill, chain-cap reclaims, victim and honest operations,
 *       background reclaim), so that the JIT has compiled them before the first timed round.</li>
 *   <li><b>Central figures are medians</b> (means kept beside them) of batches of {@value #BATCH}
 *       operations timed together, divided by {@value #BATCH}: a {@code System.nanoTime} pair costs
 *       tens of ns, a sizeable share of an operation of about 100 ns, and timing single operations
 *       would add that constant to both sides of every ratio and pull it towards 1.</li>
 *   <li><b>Tails are single operations</b>: the 99.9th percentiles come from the operations timed
 *       alone ({@link #ROUNDS} a phase, so 20 samples above it), and include one nanoTime pair.</li>
 *   <li><b>Collections excluded</b>: the phases start from a collected heap (System.gc() and a
 *       pause of {@value #SETTLE_MS} ms, which also lets the background reclaim finish), and a round
 *       during which any collector ran is dropped and counted ({@code gcRounds}), so a percentile
 *       measures the cache, not the heap's size. The caller gives the JVM a fixed, pre-touched heap
 *       (see {@link #main}).</li>
 *   <li><b>Preemptions excluded</b>: where Linux tells a thread how long it has waited for a CPU
 *       ({@code run_delay} in {@code /proc/thread-self/schedstat}), a round during which the
 *       measuring thread waited is dropped and counted too ({@code preemptedRounds}): on a shared
 *       machine another process's time slice is no cost of the cache. This also drops the rounds in
 *       which this JVM's own background threads (the cache's reclaim, the JIT) took the CPU from it,
 *       which on a machine with a spare core would run beside it; a phase with many more such
 *       rounds during the flood than before it says so.</li>
 *   <li>The before and during phases interleave victim and honest operations the same way; the
 *       during phase only adds the attacker's batch in front of each round. Each runs until it has
 *       kept {@link #ROUNDS} rounds or spent its budget.</li>
 * </ul>
 *
 * <p>The floods, as an attacker through the public API only:
 * <ul>
 *   <li>{@link #ONE_KEY}: distinct values with one key, the key of an honest pair (distinct
 *       blocks whose content hash is equal);</li>
 *   <li>{@link #ONE_BUCKET}: distinct keys that the kernel's public {@code hash_32(key, bucketBits)}
 *       sends to one bucket (the bucket of an honest pair's key), several values a key when a
 *       bucket has fewer keys than the flood has creates.</li>
 * </ul>
 * The one-bucket flood writes {@code 2 * maxEntries} distinct keys, so during it the cache is at
 * its bound (mbcache's reclaim, Caffeine's eviction run) while before it, half full, it is not: its
 * during-over-before ratios include that, as an honest writer of as many new pairs would cause.
 *
 * <p>A <i>victim operation</i> is {@code get} + {@code release} of an honest pair whose key shares the
 * attacked bucket (the attacked key itself in the one-key flood), then {@code create} +
 * {@code deleteOrGet} of a new pair with that key. An <i>honest operation</i> is the same on a
 * uniformly drawn honest pair. An <i>honest new create</i> is a create of a never-seen pair
 * (removed again, untimed, to keep the fill).
 *
 * <p>Each result is printed as one {@code FLOOD ...} line ({@link Result#line()}), which the main
 * job and the {@code flood} command read back from the child JVM.
 */
public final class Flood {
    /**
     * The options of every JVM that runs {@link #main}: a fixed, pre-touched heap that holds 1,048,576
     * Caffeine-backend entries without collecting all the time, and C2 alone (see {@link #main}).
     */
    public static final List<String> CHILD_JVM = List.of("-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch", "-XX:-TieredCompilation");

    /** Distinct values, one key. */
    public static final String ONE_KEY = "one-key";
    /** Distinct keys, one bucket by the kernel's {@code hash_32}. */
    public static final String ONE_BUCKET = "one-bucket";
    /** Both floods, in the order they run. */
    public static final List<String> KINDS = List.of(ONE_KEY, ONE_BUCKET);

    /** The two sizes of the issue: maxEntries 65,536 (bucketBits 12) and 1,048,576 (bucketBits 16). */
    public static final long[] SIZES = {1L << 16, 1L << 20};
    /** Rounds of the before and during phases: single-op samples a phase, 20 above the 99.9th percentile. */
    public static final int ROUNDS = 20_000;
    /** Operations timed together for the medians and means. */
    public static final int BATCH = 16;
    /** Batches of attacker creates in the flood phase for one batch of honest new creates. */
    public static final int HONEST_EVERY = 4;
    /** Complete floods of each kind run, untimed, before the first measured one. */
    static final int WARM_UP_RUNS = 2;
    /** maxEntries of the warm-up floods' throwaway cache. */
    static final int WARM_UP_ENTRIES = 1 << 14;
    /** The pause after the System.gc() that starts every phase. */
    static final long SETTLE_MS = 100;
    /** The kernel's {@code GOLDEN_RATIO_32}, {@code hash_32}'s multiplier. */
    static final int GOLDEN_RATIO_32 = 0x61C88647;

    private static final List<GarbageCollectorMXBean> COLLECTORS = ManagementFactory.getGarbageCollectorMXBeans();

    private static volatile long sink;

    private Flood() {}

    /**
     * One flood's figures. Times are ns per operation: {@code ...Ns} are medians and
     * {@code ...MeanNs} means of batches of {@value #BATCH} operations timed together; {@code
     * ...P999...} are 99.9th percentiles of single operations. Rounds during which a collection ran
     * or the measuring thread waited for a CPU are excluded from all of them ({@code gcRounds} and
     * {@code preemptedRounds} count them). {@code attackerCreates} is how
     * many of the flood phase's {@code plannedCreates} the time budget let run (the during phase
     * adds {@value #BATCH} a round); {@code samples} is the number of single operations of each kind
     * timed in the shorter of the before and during phases.
     *
     * @param backend the backend's name ({@link Backends})
     * @param maxEntries the cache's bound
     * @param flood the kind of flood, {@link #ONE_KEY} or {@link #ONE_BUCKET}
     * @param attackerNs median of the attacker's creates, flood and during phases
     * @param honestCreateNs median of the honest new creates, flood and during phases (the same fill)
     * @param victimBeforeNs median of victim operations before the flood
     * @param victimDuringNs median of victim operations during the flood
     * @param victimP999BeforeNs 99.9th percentile of single victim operations before the flood
     * @param victimP999DuringNs 99.9th percentile of single victim operations during the flood
     * @param honestP999BeforeNs 99.9th percentile of single honest operations before the flood
     * @param honestP999DuringNs 99.9th percentile of single honest operations during the flood
     * @param attackerCreates attacker creates the flood phase ran
     * @param plannedCreates attacker creates the flood phase planned, {@code 2 * maxEntries}
     * @param chainCapReclaims entries reclaimed because a chain reached its cap, flood and during phases
     * @param honestBeforeNs median of honest operations before the flood
     * @param honestDuringNs median of honest operations during the flood
     * @param attackerMeanNs mean of the attacker's creates
     * @param honestCreateMeanNs mean of the honest new creates
     * @param victimBeforeMeanNs mean of victim operations before the flood
     * @param victimDuringMeanNs mean of victim operations during the flood
     * @param samples single operations of each kind timed in the shorter of the before and during phases
     * @param gcRounds rounds dropped because a collection ran during them, all phases
     * @param preemptedRounds rounds dropped because the measuring thread waited for a CPU during
     *     them, all phases (0 where the kernel does not tell)
     */
    public record Result(String backend, long maxEntries, String flood, double attackerNs, double honestCreateNs,
                         double victimBeforeNs, double victimDuringNs, double victimP999BeforeNs,
                         double victimP999DuringNs, double honestP999BeforeNs, double honestP999DuringNs,
                         long attackerCreates, long plannedCreates, long chainCapReclaims,
                         double honestBeforeNs, double honestDuringNs, double attackerMeanNs, double honestCreateMeanNs,
                         double victimBeforeMeanNs, double victimDuringMeanNs, long samples, long gcRounds,
                         long preemptedRounds) {
        /** The line: {@code FLOOD} and the record as JSON, so that the record's header is the one place that names the fields. */
        private static final ResultLine<Result> LINE = ResultLine.of(Result.class, "FLOOD");

        /** The attacker's create over an honest new create at the same fill (medians). */
        public double attackerRatio() {
            return attackerNs / honestCreateNs;
        }

        /** Victims' median cost during the flood over before it. */
        public double victimRatio() {
            return victimDuringNs / victimBeforeNs;
        }

        /** Honest operations' median cost during the flood over before it. */
        public double honestRatio() {
            return honestDuringNs / honestBeforeNs;
        }

        /** Honest operations' 99.9th percentile during the flood over before it. */
        public double honestP999Ratio() {
            return honestP999DuringNs / honestP999BeforeNs;
        }

        /** The line the child JVM prints: {@code FLOOD} and the record as JSON. */
        public String line() {
            return LINE.line(this);
        }

        /**
         * Reads back a {@link #line()}.
         *
         * @throws IllegalArgumentException if the line is not a FLOOD line or lacks a field
         */
        public static Result parse(String line) {
            return LINE.parse(line);
        }
    }

    /** The kernel's {@code hash_32(key, bits)}: the bucket mainline picks for a key. */
    static int hash32(int key, int bits) {
        return bits == 0 ? 0 : (key * GOLDEN_RATIO_32) >>> (32 - bits);
    }

    /** {@code a^-1 mod 2^32} for an odd {@code a} (Newton's iteration; each step doubles the correct bits). */
    static int inverse(int a) {
        if ((a & 1) == 0) {
            throw new IllegalArgumentException("even numbers have no inverse mod 2^32: " + a);
        }
        int x = a; // correct to 3 bits for any odd a
        for (int i = 0; i < 5; i++) {
            x *= 2 - a * x;
        }
        return x;
    }

    /**
     * {@code n} distinct keys that {@code hash_32(key, bits)} sends to {@code bucket}, the first ones
     * in the order of their low bits; at most {@code 2^(32 - bits)} exist.
     */
    static int[] keysOfBucket(int bucket, int bits, int n) {
        long available = 1L << (32 - bits);
        if (n > available) {
            throw new IllegalArgumentException(n + " keys asked, bucket holds " + available);
        }
        int inv = inverse(GOLDEN_RATIO_32);
        int[] keys = new int[n];
        int high = bits == 0 ? 0 : bucket << (32 - bits);
        for (int j = 0; j < n; j++) {
            keys[j] = (high | j) * inv;
        }
        return keys;
    }

    /** bucketBits of a size: 16 entries a bucket, the kernel's design load. */
    static int bucketBits(long maxEntries) {
        return 63 - Long.numberOfLeadingZeros(maxEntries) - 4;
    }

    /** Samples of one kind of timing, each the time of {@code opsPerSample} operations; figures per operation. */
    static final class Samples {
        private final int opsPerSample;
        private long[] ns = new long[1024];
        private int n;

        Samples(int opsPerSample) {
            this.opsPerSample = opsPerSample;
        }

        void add(long t) {
            if (n == ns.length) {
                ns = Arrays.copyOf(ns, 2 * n);
            }
            ns[n++] = t;
        }

        int count() {
            return n;
        }

        double mean() {
            if (n == 0) {
                return Double.NaN;
            }
            double s = 0;
            for (int i = 0; i < n; i++) {
                s += ns[i];
            }
            return s / n / opsPerSample;
        }

        double median() {
            return percentile(0.5);
        }

        /** The nearest-rank percentile, per operation. */
        double percentile(double p) {
            if (n == 0) {
                return Double.NaN;
            }
            long[] sorted = Arrays.copyOf(ns, n);
            Arrays.sort(sorted);
            return (double) sorted[(int) Math.max(0, Math.min(n - 1, Math.ceil(p * n) - 1))] / opsPerSample;
        }
    }

    /** Collections run so far by every collector of this JVM. */
    static long collections() {
        long n = 0;
        for (GarbageCollectorMXBean c : COLLECTORS) {
            n += Math.max(0, c.getCollectionCount());
        }
        return n;
    }

    /**
     * How long this thread has waited for a CPU: {@code run_delay}, the second figure of
     * {@code /proc/thread-self/schedstat}, read again through one open file (no garbage). Always 0
     * where the file is missing or unreadable, so that nothing is dropped there.
     */
    static final class RunDelay implements AutoCloseable {
        private final byte[] buf = new byte[128];
        private RandomAccessFile file;

        /** Opens the calling thread's schedstat; read only from that thread. */
        RunDelay() {
            try {
                file = new RandomAccessFile("/proc/thread-self/schedstat", "r");
                if (read() < 0) {
                    close();
                }
            } catch (IOException | SecurityException e) {
                close();
            }
        }

        /** Whether the kernel tells this thread's waits. */
        boolean available() {
            return file != null;
        }

        /** ns waited so far, 0 where not available. */
        long ns() {
            try {
                return file == null ? 0 : Math.max(0, read());
            } catch (IOException e) {
                close();
                return 0;
            }
        }

        private long read() throws IOException {
            file.seek(0);
            int n = file.read(buf);
            return parseRunDelay(buf, Math.max(0, n));
        }

        @Override
        public void close() {
            RandomAccessFile f = file;
            file = null;
            if (f != null) {
                try {
                    f.close();
                } catch (IOException ignored) {
                    // a procfs file; nothing was written
                }
            }
        }
    }

    /** The second whitespace-separated decimal of {@code buf[0, n)}, or -1 if there is none. */
    static long parseRunDelay(byte[] buf, int n) {
        int i = 0;
        for (int field = 0; field < 2; field++) {
            while (i < n && buf[i] == ' ') {
                i++;
            }
            int start = i;
            long v = 0;
            while (i < n && buf[i] >= '0' && buf[i] <= '9') {
                v = v * 10 + (buf[i++] - '0');
            }
            if (i == start) {
                return -1;
            }
            if (field == 1) {
                return v;
            }
        }
        return -1;
    }

    /** Starts a phase from a collected heap and a finished background reclaim. */
    static void settle() {
        System.gc();
        try {
            Thread.sleep(SETTLE_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the pause is a courtesy; keep the interrupt for the caller
        }
    }

    /** One flood on a fresh cache; every phase stops once it has run {@code budgetMs}. */
    static Result run(String backend, long maxEntries, String kind, long budgetMs) {
        if (!KINDS.contains(kind)) {
            throw new IllegalArgumentException("unknown flood: " + kind + " (expected " + KINDS + ")");
        }
        int bits = bucketBits(maxEntries);
        DedupCache cache = Backends.dedup(backend, bits, maxEntries, Backends.executor());
        try (RunDelay waits = new RunDelay()) {
            return new Run(cache, maxEntries, bits, kind, waits).measure(backend, budgetMs);
        } finally {
            cache.close();
        }
    }

    /** The state of one flood: the cache, its victims, the attacker's keys and the counters of fresh values. */
    private static final class Run {
        private final DedupCache cache;
        private final long maxEntries;
        private final String kind;
        private final int honest;
        private final int[] victims;
        private final int[] attackKeys;
        private final SplittableRandom rnd = new SplittableRandom(0x5EED);
        private final int[] victimBatch = new int[BATCH];
        private final int[] honestBatch = new int[BATCH];
        private long fresh = 1L << 44;
        private long attackerValue = 1L << 48;
        private long attacks;
        private int victimCursor;
        private final RunDelay waits;
        private long gcRounds;
        private long preemptedRounds;
        private long gcsAtStart;
        private long waitedAtStart;

        Run(DedupCache cache, long maxEntries, int bits, String kind, RunDelay waits) {
            this.cache = cache;
            this.waits = waits;
            this.maxEntries = maxEntries;
            this.kind = kind;
            this.honest = (int) (maxEntries / 2);
            for (int i = 0; i < honest; i++) {
                cache.create(KeyIndex.keyOf(i), i, true);
            }
            int attackedKey = KeyIndex.keyOf(0);
            int attackedBucket = hash32(attackedKey, bits);
            // victims: honest pairs in the attacked bucket (one-key: the attacked key's pair itself)
            List<Integer> victimList = new ArrayList<>();
            for (int i = 0; i < honest; i++) {
                int k = KeyIndex.keyOf(i);
                if (ONE_KEY.equals(kind) ? k == attackedKey : hash32(k, bits) == attackedBucket) {
                    victimList.add(i);
                }
            }
            victims = victimList.stream().mapToInt(Integer::intValue).toArray();
            attackKeys = ONE_KEY.equals(kind) ? new int[] {attackedKey}
                    : keysOfBucket(attackedBucket, bits, (int) Math.min(2 * maxEntries, 1L << (32 - bits)));
        }

        Result measure(String backend, long budgetMs) {
            long budgetNs = budgetMs * 1_000_000;
            Samples victimBefore = new Samples(BATCH);
            Samples honestBefore = new Samples(BATCH);
            Samples victimBefore1 = new Samples(1);
            Samples honestBefore1 = new Samples(1);
            settle();
            long deadline = System.nanoTime() + budgetNs;
            while (victimBefore1.count() < ROUNDS && System.nanoTime() < deadline) {
                round(null, null, victimBefore, honestBefore, victimBefore1, honestBefore1);
            }

            Samples attacker = new Samples(BATCH);
            Samples create = new Samples(BATCH);
            long planned = 2 * maxEntries;
            long capBefore = cache.stats().chainCapReclaims();
            settle();
            deadline = System.nanoTime() + budgetNs;
            for (long batch = 0; attacks < planned && System.nanoTime() < deadline; batch++) {
                startRound();
                long a = attackerBatch();
                long c = batch % HONEST_EVERY == 0 ? createBatch() : -1;
                if (roundKept()) {
                    attacker.add(a);
                    if (c >= 0) {
                        create.add(c);
                    }
                }
            }
            long flooded = attacks;

            Samples victimDuring = new Samples(BATCH);
            Samples honestDuring = new Samples(BATCH);
            Samples victimDuring1 = new Samples(1);
            Samples honestDuring1 = new Samples(1);
            settle();
            deadline = System.nanoTime() + budgetNs;
            while (victimDuring1.count() < ROUNDS && System.nanoTime() < deadline) {
                round(attacker, create, victimDuring, honestDuring, victimDuring1, honestDuring1);
            }
            long capReclaims = cache.stats().chainCapReclaims() - capBefore;
            return new Result(backend, maxEntries, kind, attacker.median(), create.median(),
                    victimBefore.median(), victimDuring.median(), victimBefore1.percentile(0.999),
                    victimDuring1.percentile(0.999), honestBefore1.percentile(0.999), honestDuring1.percentile(0.999),
                    flooded, planned, capReclaims, honestBefore.median(), honestDuring.median(), attacker.mean(),
                    create.mean(), victimBefore.mean(), victimDuring.mean(),
                    Math.min(victimBefore1.count(), victimDuring1.count()), gcRounds, preemptedRounds);
        }

        /**
         * One round of the before ({@code attacker} null) or during phase: the attacker's batch, a
         * batch of honest new creates (kept during the flood only, beside the flood phase's: the
         * before phase runs it to do the same work), a batch of victim and of honest operations, one
         * victim and one honest operation alone. Nothing is kept of a dropped round.
         */
        private void round(Samples attacker, Samples create, Samples victim, Samples honestOps, Samples victim1,
                           Samples honest1) {
            for (int j = 0; j < BATCH; j++) { // drawn before the clock starts
                victimBatch[j] = nextVictim();
                honestBatch[j] = rnd.nextInt(honest);
            }
            int v1 = nextVictim();
            int h1 = rnd.nextInt(honest);
            startRound();
            long a = attacker == null ? 0 : attackerBatch();
            long c = createBatch();
            long v = pairBatch(victimBatch);
            long h = pairBatch(honestBatch);
            long tv = pairOp(cache, v1, fresh++);
            long th = pairOp(cache, h1, fresh++);
            if (!roundKept()) {
                return;
            }
            if (attacker != null) {
                attacker.add(a);
                create.add(c);
            }
            victim.add(v);
            honestOps.add(h);
            victim1.add(tv);
            honest1.add(th);
        }

        private void startRound() {
            gcsAtStart = collections();
            waitedAtStart = waits.ns();
        }

        /** Whether the round since {@link #startRound} ran without a collection and without waiting for a CPU. */
        private boolean roundKept() {
            if (collections() != gcsAtStart) {
                gcRounds++;
                return false;
            }
            if (waits.ns() != waitedAtStart) {
                preemptedRounds++;
                return false;
            }
            return true;
        }

        private int nextVictim() {
            int i = victims[victimCursor];
            victimCursor = (victimCursor + 1) % victims.length;
            return i;
        }

        /** {@value #BATCH} attacker creates; ns. */
        private long attackerBatch() {
            long t0 = System.nanoTime();
            for (int j = 0; j < BATCH; j++) {
                attackerCreate(cache, attackKeys[(int) (attacks++ % attackKeys.length)], attackerValue++);
            }
            return System.nanoTime() - t0;
        }

        /** {@value #BATCH} pair operations, on these honest pairs; ns. */
        private long pairBatch(int[] pairs) {
            long t0 = System.nanoTime();
            for (int i : pairs) {
                pair(cache, i, fresh++);
            }
            return System.nanoTime() - t0;
        }

        /** {@value #BATCH} creates of never-seen pairs, timed, then removed again, untimed; ns. */
        private long createBatch() {
            long first = fresh;
            fresh += BATCH;
            long t0 = System.nanoTime();
            for (long v = first; v < first + BATCH; v++) {
                sink += cache.create(KeyIndex.keyOf(v), v, true) ? 1 : 0;
            }
            long t = System.nanoTime() - t0;
            for (long v = first; v < first + BATCH; v++) {
                remove(cache, KeyIndex.keyOf(v), v);
            }
            return t;
        }
    }

    /** get + release of honest pair {@code i}, then create + deleteOrGet of a new pair with its key. */
    static void pair(DedupCache cache, int i, long freshValue) {
        int k = KeyIndex.keyOf(i);
        CacheEntry e = cache.get(k, i);
        long seen = 0;
        if (e != null) {
            seen = e.value();
            cache.release(e);
        }
        boolean created = cache.create(k, freshValue, true);
        remove(cache, k, freshValue);
        sink += seen + (created ? 1 : 0);
    }

    /** {@link #pair} timed alone; ns. */
    static long pairOp(DedupCache cache, int i, long freshValue) {
        long t0 = System.nanoTime();
        pair(cache, i, freshValue);
        return System.nanoTime() - t0;
    }

    /** deleteOrGet of a pair; an entry returned busy is released (nobody else runs here) to keep the counts right. */
    private static void remove(DedupCache cache, int key, long value) {
        CacheEntry busy = cache.deleteOrGet(key, value);
        if (busy != null) {
            cache.release(busy);
        }
    }

    /** One attacker create, kept: the attacker never removes what it wrote. */
    static void attackerCreate(DedupCache cache, int key, long value) {
        sink += cache.create(key, value, true) ? 1 : 0;
    }

    /**
     * Every kind of flood, {@value #WARM_UP_RUNS} times, completely, on a throwaway cache of
     * {@value #WARM_UP_ENTRIES} entries: the measured code paths compiled before the first timed round.
     */
    static void warmUp(String backend, long budgetMs) {
        for (int i = 0; i < WARM_UP_RUNS; i++) {
            for (String kind : KINDS) {
                run(backend, WARM_UP_ENTRIES, kind, budgetMs);
            }
        }
    }

    /**
     * {@code Flood BACKEND [SIZES [BUDGET_MS]]}: runs both floods at each size (comma-separated
     * maxEntries, default 65536,1048576) for one backend, printing one FLOOD line each. Give the JVM
     * a fixed heap, pre-touched, large enough for the largest size without collecting all the time
     * ({@code -Xms2g -Xmx2g -XX:+AlwaysPreTouch} for 1,048,576), and {@code -XX:-TieredCompilation}:
     * with tiered compilation one JVM in three to five compiled the one-key victims' chain scan
     * into code a third slower (victims during over before 3.9-4.5 instead of 2.7-3.1, the same in
     * both sizes of that JVM), with C2 alone ten JVMs in a row gave 2.67-2.81. It prints the options
     * it got.
     */
    public static void main(String[] args) {
        if (args.length < 1) {
            System.err.println("usage: Flood BACKEND [maxEntries,... [budgetMs]]");
            System.exit(2);
        }
        String backend = args[0];
        long[] sizes = args.length > 1 ? Arrays.stream(args[1].split(",")).mapToLong(Long::parseLong).toArray() : SIZES;
        long budgetMs = args.length > 2 ? Long.parseLong(args[2]) : 3000;
        Runtime rt = Runtime.getRuntime();
        boolean waitsKnown;
        try (RunDelay waits = new RunDelay()) {
            waitsKnown = waits.available();
        }
        System.out.printf(Locale.ROOT, "heap %d MiB max, %d MiB committed, JVM options %s; rounds with a collection"
                        + " dropped; rounds preempted %s%n", rt.maxMemory() >> 20, rt.totalMemory() >> 20,
                ManagementFactory.getRuntimeMXBean().getInputArguments(),
                waitsKnown ? "dropped" : "kept (no /proc/thread-self/schedstat)");
        warmUp(backend, budgetMs);
        for (long size : sizes) {
            for (String kind : KINDS) {
                System.out.println(run(backend, size, kind, budgetMs).line());
            }
        }
        if (sink == 42) {
            System.out.println();
        }
    }
}
