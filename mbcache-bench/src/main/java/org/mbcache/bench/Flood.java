package org.mbcache.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
 *   <li><b>before</b>: warm-up, then {@link #ROUNDS} rounds of one victim operation, one honest
 *       operation and one honest new create, each timed alone;</li>
 *   <li><b>flood</b>: {@code 2 * maxEntries} attacker creates, each timed, with an honest new create
 *       timed after every {@value #HONEST_EVERY} of them (the same fill);</li>
 *   <li><b>during</b>: {@link #ROUNDS} rounds of one more attacker create, one victim operation and
 *       one honest operation.</li>
 * </ol>
 * A phase that runs past its time budget stops early (an unprotected cache can make one create
 * cost milliseconds); the line says how many operations it did.
 *
 * <p>The floods, as an attacker through the public API only:
 * <ul>
 *   <li>{@link #ONE_KEY}: distinct values with one key, the key of an honest pair (distinct
 *       blocks whose content hash is equal);</li>
 *   <li>{@link #ONE_BUCKET}: distinct keys that the kernel's public {@code hash_32(key, bucketBits)}
 *       sends to one bucket (the bucket of an honest pair's key), several values a key when a
 *       bucket has fewer keys than the flood has creates.</li>
 * </ul>
 * A <i>victim operation</i> is {@code get} + {@code release} of an honest pair whose key shares the
 * attacked bucket (the attacked key itself in the one-key flood), then {@code create} +
 * {@code deleteOrGet} of a new pair with that key. An <i>honest operation</i> is the same on a
 * uniformly drawn honest pair. An <i>honest new create</i> is a create of a never-seen pair
 * (removed again, untimed, to keep the fill).
 *
 * <p>Each result is printed as one {@code FLOOD ...} line ({@link Result#line()}), which the main
 * job and the {@code flood} command read back from the child JVM.
 */
public final class Flood {
    /** Distinct values, one key. */
    public static final String ONE_KEY = "one-key";
    /** Distinct keys, one bucket by the kernel's {@code hash_32}. */
    public static final String ONE_BUCKET = "one-bucket";
    /** Both floods, in the order they run. */
    public static final List<String> KINDS = List.of(ONE_KEY, ONE_BUCKET);

    /** The two sizes of the issue: maxEntries 65,536 (bucketBits 12) and 1,048,576 (bucketBits 16). */
    public static final long[] SIZES = {1L << 16, 1L << 20};
    /** Rounds of the before and during phases: 10 samples above the 99.9th percentile. */
    public static final int ROUNDS = 10_000;
    /** An honest new create is timed after every this many attacker creates. */
    public static final int HONEST_EVERY = 16;
    /** The kernel's {@code GOLDEN_RATIO_32}, {@code hash_32}'s multiplier. */
    static final int GOLDEN_RATIO_32 = 0x61C88647;

    private static volatile long sink;

    private Flood() {}

    /**
     * One flood's figures. Times are ns per operation; p99.9 is the 99.9th percentile of single
     * operations; {@code attackerCreates} is how many of the flood phase's {@code plannedCreates} the time
     * budget let run (the during phase adds one a round).
     */
    public record Result(String backend, long maxEntries, String flood, double attackerNs, double honestCreateNs,
                         double victimBeforeNs, double victimDuringNs, double victimP999BeforeNs,
                         double victimP999DuringNs, double honestP999BeforeNs, double honestP999DuringNs,
                         long attackerCreates, long plannedCreates, long chainCapReclaims) {
        /** The attacker's create over an honest new create at the same fill. */
        public double attackerRatio() {
            return attackerNs / honestCreateNs;
        }

        /** Victims' mean cost during the flood over before it. */
        public double victimRatio() {
            return victimDuringNs / victimBeforeNs;
        }

        /** Honest operations' 99.9th percentile during the flood over before it. */
        public double honestP999Ratio() {
            return honestP999DuringNs / honestP999BeforeNs;
        }

        /** The line the child JVM prints. */
        public String line() {
            return String.format(Locale.ROOT, "FLOOD backend=%s maxEntries=%d flood=%s attackerNs=%s honestCreateNs=%s"
                            + " victimBeforeNs=%s victimDuringNs=%s victimP999BeforeNs=%s victimP999DuringNs=%s"
                            + " honestP999BeforeNs=%s honestP999DuringNs=%s attackerCreates=%d plannedCreates=%d"
                            + " chainCapReclaims=%d",
                    backend, maxEntries, flood, attackerNs, honestCreateNs, victimBeforeNs, victimDuringNs,
                    victimP999BeforeNs, victimP999DuringNs, honestP999BeforeNs, honestP999DuringNs,
                    attackerCreates, plannedCreates, chainCapReclaims);
        }

        /**
         * Reads back a {@link #line()}.
         *
         * @throws IllegalArgumentException if the line is not a FLOOD line or lacks a field
         */
        public static Result parse(String line) {
            if (!line.startsWith("FLOOD ")) {
                throw new IllegalArgumentException("not a FLOOD line: " + line);
            }
            Map<String, String> f = new LinkedHashMap<>();
            for (String kv : line.substring(6).trim().split(" +")) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    f.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
            }
            try {
                return new Result(req(f, "backend"), Long.parseLong(req(f, "maxEntries")), req(f, "flood"),
                        d(f, "attackerNs"), d(f, "honestCreateNs"), d(f, "victimBeforeNs"), d(f, "victimDuringNs"),
                        d(f, "victimP999BeforeNs"), d(f, "victimP999DuringNs"), d(f, "honestP999BeforeNs"),
                        d(f, "honestP999DuringNs"), Long.parseLong(req(f, "attackerCreates")),
                        Long.parseLong(req(f, "plannedCreates")), Long.parseLong(req(f, "chainCapReclaims")));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad FLOOD line: " + line, e);
            }
        }

        private static String req(Map<String, String> f, String k) {
            String v = f.get(k);
            if (v == null) {
                throw new IllegalArgumentException("FLOOD line without " + k);
            }
            return v;
        }

        private static double d(Map<String, String> f, String k) {
            return Double.parseDouble(req(f, k));
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

    /** Per-op samples and their summary. */
    static final class Samples {
        private final long[] ns;
        private int n;

        Samples(int capacity) {
            ns = new long[capacity];
        }

        void add(long t) {
            if (n < ns.length) {
                ns[n++] = t;
            }
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
            return s / n;
        }

        double percentile(double p) {
            if (n == 0) {
                return Double.NaN;
            }
            long[] sorted = Arrays.copyOf(ns, n);
            Arrays.sort(sorted);
            return sorted[(int) Math.min(n - 1, Math.ceil(p * n) - 1)];
        }
    }

    /** One flood on a fresh cache; every phase stops once it has run {@code budgetMs}. */
    static Result run(String backend, long maxEntries, String kind, long budgetMs) {
        int bits = bucketBits(maxEntries);
        DedupCache cache = Backends.dedup(backend, bits, maxEntries, Backends.executor());
        try {
            return run(cache, backend, maxEntries, bits, kind, budgetMs);
        } finally {
            cache.close();
        }
    }

    private static Result run(DedupCache cache, String backend, long maxEntries, int bits, String kind, long budgetMs) {
        int honest = (int) (maxEntries / 2);
        for (int i = 0; i < honest; i++) {
            cache.create(KeyIndex.keyOf(i), i, true);
        }
        System.gc(); // the fill's garbage is not the flood's: every phase starts from a collected heap
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
        int[] victims = victimList.stream().mapToInt(Integer::intValue).toArray();
        long planned = 2 * maxEntries;
        int[] attackKeys;
        switch (kind) {
            case ONE_KEY:
                attackKeys = new int[] {attackedKey};
                break;
            case ONE_BUCKET:
                attackKeys = keysOfBucket(attackedBucket, bits, (int) Math.min(planned, 1L << (32 - bits)));
                break;
            default:
                throw new IllegalArgumentException("unknown flood: " + kind + " (expected " + KINDS + ")");
        }
        SplittableRandom rnd = new SplittableRandom(0x5EED);
        long[] fresh = {1L << 44};
        long[] attackerValue = {1L << 48};

        // warm-up: the same operations, untimed
        for (int r = 0; r < ROUNDS; r++) {
            pairOp(cache, victims[r % victims.length], fresh[0]++);
            pairOp(cache, rnd.nextInt(honest), fresh[0]++);
            honestCreate(cache, fresh[0]++);
        }

        Samples victimBefore = new Samples(ROUNDS);
        Samples honestBefore = new Samples(ROUNDS);
        Samples createBefore = new Samples(ROUNDS);
        long deadline = System.nanoTime() + budgetMs * 1_000_000;
        for (int r = 0; r < ROUNDS && ((r & 63) != 0 || System.nanoTime() < deadline); r++) {
            victimBefore.add(pairOp(cache, victims[r % victims.length], fresh[0]++));
            honestBefore.add(pairOp(cache, rnd.nextInt(honest), fresh[0]++));
            createBefore.add(honestCreate(cache, fresh[0]++));
        }

        long capBefore = cache.stats().chainCapReclaims();
        Samples attacker = new Samples((int) Math.min(planned + ROUNDS, Integer.MAX_VALUE - 8));
        Samples createDuring = new Samples((int) (planned / HONEST_EVERY + 1));
        deadline = System.nanoTime() + budgetMs * 1_000_000;
        long done = 0;
        for (; done < planned && ((done & 63) != 0 || System.nanoTime() < deadline); done++) {
            attacker.add(attackerCreate(cache, attackKeys[(int) (done % attackKeys.length)], attackerValue[0]++));
            if (done % HONEST_EVERY == HONEST_EVERY - 1) {
                createDuring.add(honestCreate(cache, fresh[0]++));
            }
        }

        long flooded = done;
        Samples victimDuring = new Samples(ROUNDS);
        Samples honestDuring = new Samples(ROUNDS);
        deadline = System.nanoTime() + budgetMs * 1_000_000;
        for (int r = 0; r < ROUNDS && ((r & 63) != 0 || System.nanoTime() < deadline); r++) {
            attacker.add(attackerCreate(cache, attackKeys[(int) (done++ % attackKeys.length)], attackerValue[0]++));
            victimDuring.add(pairOp(cache, victims[r % victims.length], fresh[0]++));
            honestDuring.add(pairOp(cache, rnd.nextInt(honest), fresh[0]++));
        }
        long capReclaims = cache.stats().chainCapReclaims() - capBefore;
        return new Result(backend, maxEntries, kind, attacker.mean(), createDuring.mean(),
                victimBefore.mean(), victimDuring.mean(), victimBefore.percentile(0.999), victimDuring.percentile(0.999),
                honestBefore.percentile(0.999), honestDuring.percentile(0.999), flooded, planned, capReclaims);
    }

    /** get + release of honest pair {@code i}, then create + deleteOrGet of a new pair with its key; ns. */
    static long pairOp(DedupCache cache, int i, long freshValue) {
        int k = KeyIndex.keyOf(i);
        long t0 = System.nanoTime();
        CacheEntry e = cache.get(k, i);
        long seen = 0;
        if (e != null) {
            seen = e.value();
            cache.release(e);
        }
        boolean created = cache.create(k, freshValue, true);
        CacheEntry busy = cache.deleteOrGet(k, freshValue);
        long t = System.nanoTime() - t0;
        if (busy != null) { // nobody else runs here; release to keep the reference counts right
            cache.release(busy);
        }
        sink += seen + (created ? 1 : 0);
        return t;
    }

    /** A timed create of a never-seen pair, removed again untimed (the fill stays). */
    static long honestCreate(DedupCache cache, long value) {
        int k = KeyIndex.keyOf(value);
        long t0 = System.nanoTime();
        boolean created = cache.create(k, value, true);
        long t = System.nanoTime() - t0;
        CacheEntry busy = cache.deleteOrGet(k, value);
        if (busy != null) {
            cache.release(busy);
        }
        sink += created ? 1 : 0;
        return t;
    }

    static long attackerCreate(DedupCache cache, int key, long value) {
        long t0 = System.nanoTime();
        boolean created = cache.create(key, value, true);
        long t = System.nanoTime() - t0;
        sink += created ? 1 : 0;
        return t;
    }

    /**
     * {@code Flood BACKEND [SIZES [BUDGET_MS]]}: runs both floods at each size (comma-separated
     * maxEntries, default 65536,1048576) for one backend, printing one FLOOD line each.
     */
    public static void main(String[] args) {
        if (args.length < 1) {
            System.err.println("usage: Flood BACKEND [maxEntries,... [budgetMs]]");
            System.exit(2);
        }
        String backend = args[0];
        long[] sizes = args.length > 1 ? Arrays.stream(args[1].split(",")).mapToLong(Long::parseLong).toArray() : SIZES;
        long budgetMs = args.length > 2 ? Long.parseLong(args[2]) : 3000;
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
