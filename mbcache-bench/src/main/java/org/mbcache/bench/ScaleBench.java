package org.mbcache.bench;

import com.sun.management.GarbageCollectionNotificationInfo;
import it.unimi.dsi.fastutil.ints.Int2LongOpenHashMap;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;
import org.mbcache.CacheEntry;
import org.mbcache.CompactMbCache;
import org.mbcache.DedupCache;

/**
 * {@code java -jar mbcache-bench.jar scale [--sizes 100000,1000000,...] [--jvm-arg ARG]... [BACKEND...]}: how each
 * backend scales with its entry count, against {@code ConcurrentHashMap<Integer,long[]>} and
 * fastutil's {@code Int2LongOpenHashMap} (the floor of a plain primitive map). One JVM per backend
 * and size, its heap about twice what the structure is expected to retain (so the GC line shows
 * what a right-sized heap pays). Each JVM fills the structure with {@code n} random keys (bound
 * {@code maxEntries = n}), then measures medians of 5 rounds of 2^20 operations, one thread unless a
 * row says otherwise:
 * <ul>
 *   <li>{@code B/entry}: the heap retained per entry after a full collection (index and slack
 *       included); {@code churnedB/entry} the same after the churn rows (and the GC line), over
 *       {@code n} again: what a full structure keeps once creates at the bound have run;
 *       {@code turnedB/entry} (with {@code --turnovers K}) the same once at least {@code K * n}
 *       creates have run since the fill, so that every entry of the fill has been replaced;</li>
 *   <li>{@code hit}, {@code miss}: a lookup of a present or absent key, released (the caches:
 *       {@code findFirst}+{@code release}; {@code compact}: the primitive handles; the maps:
 *       {@code get});</li>
 *   <li>{@code batch-hit}: per key, the hits of {@value #BATCH} present keys a call ({@code compact}:
 *       one {@link CompactMbCache#findFirstHandles} over them, each handle then released; every other
 *       backend: its {@code hit} over the same keys, one after the other);</li>
 *   <li>{@code dup}: a refused duplicate ({@code create} of a cached pair; the maps:
 *       {@code putIfAbsent} of a present key);</li>
 *   <li>{@code churn}: a create of a new pair at the bound, its reclaim included (reclaim runs on
 *       the creating thread); the maps put the new key and remove the oldest, a FIFO, the floor;</li>
 *   <li>{@code hit2t}, {@code miss2t}: the {@code hit} and {@code miss} loops run by two threads at
 *       once over the same structure, started together, each its own key order (the second starts
 *       half-way through the keys) and its own 2^20 operations; ns per operation per thread, the
 *       slower thread's time each round, the median over the rounds. Every backend here may be read
 *       by two threads at once (see {@link Subject#lookup}), so no backend skips them;</li>
 *   <li>B/op of each single-threaded row, from the thread's allocation counter;</li>
 *   <li>a GC line while churning for 3 s: young and full pauses (count, total, longest, from the
 *       collectors' notifications) and the process CPU spent outside the measuring thread;</li>
 *   <li>{@code runGcPauses}, {@code runGcMaxMs}: the stop-the-world pauses over the whole child
 *       (filling, every measured loop, the GC line): count and longest, from the same notifications
 *       ({@link GcPauses}); the explicit collections that measure {@code B/entry} are not among
 *       them.</li>
 * </ul>
 * Backends: every {@link org.mbcache.testing.Backend} label (the compact layout as
 * {@code compact}, through its primitive API, and {@code compact-api}, through {@link DedupCache}),
 * {@code chm}, {@code fastutil}, {@code counted} (the counted floor, a one-line counted table:
 * {@link CountedFloor}) and {@code fastutil-counted} (fastutil's lookup plus a reference count in
 * a line of its own, {@link FastutilCounted}). Timings on a shared machine are indicative; compare ratios
 * from one run. Each {@code --jvm-arg} is passed to every child JVM after the heap options (for
 * example {@code -XX:+UseTransparentHugePages}, or another collector).
 */
public final class ScaleBench {

    private ScaleBench() {}

    /** The prefix of a child JVM's result line. */
    static final String PREFIX = "SCALE ";
    static final List<String> BACKENDS =
            List.of("compact", "compact-api", "mbcache", "caffeine", "chm", "fastutil", "counted", "fastutil-counted");
    private static final int OPS = 1 << 20;
    /** Keys a {@code batch-hit} call looks up. */
    static final int BATCH = 16;
    private static final int ROUNDS = 5;

    /**
     * Expected retained bytes per entry, for sizing each child's heap (about twice {@code n} times
     * this). {@code compact-api} retains what {@code compact} does: the {@link DedupCache} face keeps
     * no object per entry, it hands out short-lived views.
     */
    private static long expectedBytesPerEntry(String backend) {
        switch (backend) {
            case "compact":
            case "compact-api":
                return 32;
            case "fastutil":
            case "counted":
                return 40;
            case "fastutil-counted":
                return 72;
            case "chm":
            case "mbcache":
            case "mbcache-allocfirst":
                return 130;
            default:
                return 260;
        }
    }

    /**
     * The parent: one child JVM per backend and size, then the table and the ratios.
     *
     * @param args {@code [--sizes N,...] [--jvm-arg ARG]... [BACKEND...]}
     * @throws Exception if a child cannot be started
     */
    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException badArguments) {
            System.err.println("scale: " + badArguments.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        if (options == null) {
            System.out.println(USAGE);
            return;
        }
        System.out.println();
        System.out.println(table(run(options.sizes, options.backends, System.out, true, options.jvmArgs, options.turnovers)));
    }

    /** What {@code scale --help} prints, and a refused command line after its message. */
    static final String USAGE = "usage: java -jar mbcache-bench.jar scale [--sizes N,...] [--jvm-arg ARG]... [--turnovers K] "
            + "[BACKEND...]\n"
            + "  sizes: entry counts, at least 1,000 each (default 100000,1000000)\n"
            + "  turnovers: 0 to 100 (default 0); above 0, each child goes on creating at the bound until K * N creates\n"
            + "    since the fill, then reports turnedB/entry: the heap retained per entry once the structure has turned over\n"
            + "  backends: any of " + knownBackends() + " (default " + BACKENDS + ")\n"
            + "  hit2t, miss2t: hit and miss by two threads at once over the same structure, ns/op per thread\n"
            + "    (each thread's time over its own " + OPS + " operations; the slower thread's, median of " + ROUNDS + " rounds)\n"
            + "  runGcPauses, runGcMaxMs: stop-the-world pauses over the whole child (fill, every loop, the GC line),\n"
            + "    count and longest in ms; the explicit System.gc() calls that measure B/entry are not counted";

    /** Every backend label a child JVM understands: {@link #BACKENDS} and every {@code Backend} label. */
    static List<String> knownBackends() {
        List<String> known = new ArrayList<>(BACKENDS);
        for (org.mbcache.testing.Backend backend : org.mbcache.testing.Backend.values()) {
            if (!known.contains(backend.label())) {
                known.add(backend.label());
            }
        }
        return known;
    }

    /** The parent's arguments, checked before any child JVM starts. */
    static final class Options {
        final List<Long> sizes = new ArrayList<>(List.of(100_000L, 1_000_000L));
        final List<String> backends = new ArrayList<>();
        final List<String> jvmArgs = new ArrayList<>();
        /** {@code --turnovers}: creates at the bound, in multiples of {@code n}, before {@code turnedB/entry}; 0 skips it. */
        int turnovers;

        /**
         * The options of {@code args}, or {@code null} if they ask for the usage text.
         *
         * @throws IllegalArgumentException for an unknown option or backend, an option without its
         *     value, a size that is not a number of at least 1,000, or turnovers not in [0, 100]
         */
        static Options parse(String[] args) {
            Options options = new Options();
            List<String> known = knownBackends();
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                if (arg.equals("-h") || arg.equals("--help") || arg.equals("help")) {
                    return null;
                }
                if (arg.equals("--sizes") || arg.equals("--jvm-arg") || arg.equals("--turnovers")) {
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException(arg + " needs a value");
                    }
                    String value = args[++i];
                    if (arg.equals("--jvm-arg")) {
                        options.jvmArgs.add(value);
                        continue;
                    }
                    if (arg.equals("--turnovers")) {
                        options.turnovers = turnovers(value.trim());
                        continue;
                    }
                    options.sizes.clear();
                    for (String size : value.split(",")) {
                        options.sizes.add(size(size.trim()));
                    }
                } else if (arg.startsWith("-")) {
                    throw new IllegalArgumentException("unknown option " + arg);
                } else if (!known.contains(arg)) {
                    throw new IllegalArgumentException("unknown backend " + arg + " (expected one of " + known + ")");
                } else {
                    options.backends.add(arg);
                }
            }
            if (options.backends.isEmpty()) {
                options.backends.addAll(BACKENDS);
            }
            return options;
        }

        private static int turnovers(String text) {
            return (int) number("turnovers", text, 0, 100, "0 to 100");
        }

        private static long size(String text) {
            return number("size", text, 1000, Long.MAX_VALUE, "at least 1000");
        }

        /** {@code text} as a number in {@code [min, max]}, else an exception naming {@code what} and {@code range}. */
        private static long number(String what, String text, long min, long max, String range) {
            long n;
            try {
                n = Long.parseLong(text);
            } catch (NumberFormatException notANumber) {
                throw new IllegalArgumentException(what + " is not a number: " + text);
            }
            if (n < min || n > max) {
                throw new IllegalArgumentException(what + " must be " + range + ", was " + n);
            }
            return n;
        }
    }

    /** {@link #run(List, List, PrintStream, boolean, List)} with no extra JVM arguments. */
    static List<Map<String, String>> run(List<Long> sizes, List<String> backends, PrintStream echo, boolean gcLine)
            throws Exception {
        return run(sizes, backends, echo, gcLine, List.of(), 0);
    }

    /**
     * One child JVM per size and backend, in that order, echoing their output to {@code echo}.
     *
     * @param gcLine whether each child also churns for 3 s for its GC line
     * @param jvmArgs passed to every child after its heap options
     * @param turnovers creates at the bound, in multiples of the size, before each child's
     *     {@code turnedB/entry} (0: none, no such column)
     * @return the children's result rows (a child that failed leaves none)
     * @throws Exception if a child cannot be started
     */
    static List<Map<String, String>> run(List<Long> sizes, List<String> backends, PrintStream echo, boolean gcLine,
                                         List<String> jvmArgs, int turnovers) throws Exception {
        List<Map<String, String>> rows = new ArrayList<>();
        for (long n : sizes) {
            for (String backend : backends) {
                long heapMb = Math.max(256, 2 * (n * expectedBytesPerEntry(backend) >> 20) + 128);
                echo.println("# scale " + backend + " n=" + n + " -Xmx" + heapMb + "m" + (jvmArgs.isEmpty() ? "" : " " + String.join(" ", jvmArgs)));
                PrintStream capture = new PrintStream(OutputStream.nullOutputStream()) {
                    @Override
                    public void println(String line) {
                        String text = line.startsWith("  | ") ? line.substring(4) : line;
                        if (text.startsWith(PREFIX)) {
                            rows.add(parse(text.substring(PREFIX.length())));
                        }
                        echo.println(line);
                    }
                };
                List<String> options = new ArrayList<>(List.of("-Xms" + heapMb + "m", "-Xmx" + heapMb + "m", "-XX:+AlwaysPreTouch"));
                options.addAll(jvmArgs);
                QuickRun.childJvm(Child.class, options,
                        List.of(backend, Long.toString(n), Boolean.toString(gcLine), Integer.toString(turnovers)), line -> { },
                        capture);
            }
        }
        return rows;
    }

    private static Map<String, String> parse(String fields) {
        Map<String, String> row = new LinkedHashMap<>();
        for (String field : fields.trim().split(" ")) {
            int eq = field.indexOf('=');
            row.put(field.substring(0, eq), field.substring(eq + 1));
        }
        return row;
    }

    /**
     * The markdown table, then, per size, each comparison in words: one backend's time over the
     * time of what it is compared with, measured in the same run, and what that other figure is.
     */
    static String table(List<Map<String, String>> rows) {
        StringBuilder out = new StringBuilder();
        String[] columns = {"backend", "n", "B/entry", "churnedB/entry", "turnedB/entry", "hit", "batch-hit", "miss", "dup", "churn", "hit2t", "miss2t", "hitB/op",
                "batch-hitB/op", "missB/op", "dupB/op", "churnB/op", "gcPauses", "gcTotalMs", "gcMaxMs", "otherCpuMs",
                "runGcPauses", "runGcMaxMs"};
        if (rows.stream().noneMatch(row -> row.containsKey("turnedB/entry"))) {
            columns = Arrays.stream(columns).filter(column -> !column.equals("turnedB/entry")).toArray(String[]::new);
        }
        out.append("| ").append(String.join(" | ", columns)).append(" |\n");
        out.append("|").append(" --- |".repeat(columns.length)).append("\n");
        for (Map<String, String> row : rows) {
            out.append("|");
            for (String column : columns) {
                out.append(' ').append(row.getOrDefault(column, "")).append(" |");
            }
            out.append('\n');
        }
        out.append("\nTimes in ns/op (median of ").append(ROUNDS).append(" rounds of ").append(OPS)
                .append(" operations, one thread; hit2t and miss2t: two threads at once, each its own ").append(OPS)
                .append(" operations, the slower thread's time). gc*: 3 s of churn; runGc*: the whole child, "
                        + "its explicit collections left out.\n");
        rows.stream().map(r -> r.get("n")).distinct().forEach(n -> {
            Map<String, Map<String, String>> at = new LinkedHashMap<>();
            rows.stream().filter(r -> r.get("n").equals(n)).forEach(r -> at.put(r.get("backend"), r));
            StringBuilder lines = new StringBuilder();
            compare(lines, at, "compact", "hit", "fastutil", "hit",
                    "fastutil's get (a plain open-address map: one lookup that writes nothing, the least any lookup costs)");
            compare(lines, at, "compact", "hit", "counted", "hit",
                    "the counted floor (an open-address table whose 16-byte slot holds key, count and value: a hit's probe, "
                            + "its reference taken and given back by CAS and its value read are one cache line, the least a hit "
                            + "that counts references can cost)");
            compare(lines, at, "counted", "hit", "fastutil", "hit", "fastutil's get (what the counted floor's two CASes cost)");
            compare(lines, at, "compact", "hit", "fastutil-counted", "hit",
                    "fastutil's get plus a reference taken and given back by CAS on a count word in a line of its own "
                            + "(two lines a hit: the map's, then the count's)");
            compare(lines, at, "compact", "batch-hit", "fastutil", "hit",
                    "fastutil's get (per key: findFirstHandles over " + BATCH + " present keys a call, each handle released, "
                            + "over fastutil's get in its plain loop of random keys)");
            compare(lines, at, "compact", "hit", "compact", "batch-hit",
                    "compact's batch-hit (the same hits one findFirstHandle at a time, over findFirstHandles per key; "
                            + "above 1: the batch is faster)");
            compare(lines, at, "compact", "miss", "fastutil", "miss", "fastutil's miss (a plain lookup of an absent key)");
            compare(lines, at, "compact", "churn", "fastutil", "churn",
                    "fastutil's put-new-remove-oldest (a map bounded first in, first out, no reference counts: "
                            + "the least a bounded insert costs)");
            for (String op : new String[] {"hit", "miss", "dup", "churn"}) {
                compare(lines, at, "compact", op, "mbcache", op,
                        "mbcache's (the same kernel port with an object per entry; below 1: the compact layout is faster)");
            }
            for (String backend : new String[] {"compact", "mbcache", "fastutil", "counted"}) {
                for (String op : new String[] {"hit", "miss"}) {
                    compare(lines, at, backend, op + "2t", backend, op, backend + "'s " + op + " (2-thread time over "
                            + "1-thread time: two threads at once over the same structure, the slower one's ns/op, over one "
                            + "thread alone; 1: the second thread costs the first nothing)");
                }
            }
            if (lines.length() > 0) {
                out.append(String.format(Locale.ROOT, "%nAt %,d entries, each figure is one time over another from this run "
                        + "(above 1: slower than what it is compared with):%n", Long.parseLong(n))).append(lines);
            }
        });
        return out.toString();
    }

    /**
     * One comparison as a line, {@code - compact hit = 6.3x the counted floor (...)}, if both
     * backends ran at this size.
     */
    private static void compare(StringBuilder out, Map<String, Map<String, String>> at, String a, String aOp,
                                String b, String bOp, String comparedWith) {
        if (at.containsKey(a) && at.containsKey(b) && at.get(a).containsKey(aOp) && at.get(b).containsKey(bOp)) {
            double x = Double.parseDouble(at.get(a).get(aOp));
            double y = Double.parseDouble(at.get(b).get(bOp));
            out.append(String.format(Locale.ROOT, "- %s %s = %s %s%n", a, aOp, times(x / y), comparedWith));
        }
    }

    /** A ratio as {@code 0.64x}, {@code 6.30x} or {@code 31.6x}. */
    static String times(double ratio) {
        return String.format(Locale.ROOT, ratio >= 10 ? "%.1fx" : "%.2fx", ratio);
    }

    /** What the child measures: one structure behind four operations. */
    abstract static class Subject {
        abstract void create(int key, long value);

        /**
         * A lookup of {@code key}, released; 1 if found. {@code hit2t} and {@code miss2t} call it from
         * two threads at once, with no other operation running: every subject here allows that. The
         * caches and {@code chm} are thread-safe; {@code fastutil}'s get only reads, and its map does not
         * change while they run; {@code counted} and {@code fastutil-counted} write only a reference
         * count, by CAS, and {@code counted} moves no entry during a lookup. A subject that could not
         * be read so would have to skip those rows.
         */
        abstract int lookup(int key);

        /** A create of a pair that is cached (or a putIfAbsent of a present key); 1 if refused. */
        abstract int duplicate(int key, long value);

        /** A new pair at the bound; the maps also drop the oldest. */
        abstract void churn(int key, long value, int oldestKey);

        /** The lookups of {@code keys[from, from + BATCH)}, each released; how many were found. */
        int batchLookup(int[] keys, int from) {
            int found = 0;
            for (int i = from; i < from + BATCH; i++) {
                found += lookup(keys[i]);
            }
            return found;
        }

        long footprint() {
            return -1;
        }

        void close() {
        }
    }

    static class Dedup extends Subject {
        final DedupCache cache;

        Dedup(DedupCache cache) {
            this.cache = cache;
        }

        @Override
        void create(int key, long value) {
            cache.create(key, value, true);
        }

        @Override
        int lookup(int key) {
            CacheEntry entry = cache.findFirst(key);
            if (entry == null) {
                return 0;
            }
            cache.release(entry);
            return 1;
        }

        @Override
        int duplicate(int key, long value) {
            return cache.create(key, value, true) ? 0 : 1;
        }

        @Override
        void churn(int key, long value, int oldestKey) {
            cache.create(key, value, true);
        }

        @Override
        void close() {
            cache.close();
        }
    }

    /** The compact layout through its primitive API: handles instead of entry objects. */
    static final class CompactPrimitive extends Dedup {
        final CompactMbCache compact;

        private final int[] batchKeys = new int[BATCH];
        private final long[] batchHandles = new long[BATCH];

        CompactPrimitive(long n) {
            super(sizedCompact(n));
            compact = (CompactMbCache) cache;
        }

        @Override
        int batchLookup(int[] keys, int from) {
            System.arraycopy(keys, from, batchKeys, 0, BATCH);
            int found = compact.findFirstHandles(batchKeys, batchHandles);
            for (long handle : batchHandles) {
                if (handle != CompactMbCache.NO_ENTRY) {
                    compact.release(handle);
                }
            }
            return found;
        }

        @Override
        int lookup(int key) {
            long handle = compact.findFirstHandle(key);
            if (handle == CompactMbCache.NO_ENTRY) {
                return 0;
            }
            compact.release(handle);
            return 1;
        }

        @Override
        long footprint() {
            return compact.footprintBytes();
        }
    }

    static final class Chm extends Subject {
        final ConcurrentHashMap<Integer, long[]> map;

        Chm(long n) {
            map = new ConcurrentHashMap<>((int) n);
        }

        @Override
        void create(int key, long value) {
            map.put(key, new long[] {value});
        }

        @Override
        int lookup(int key) {
            return map.get(key) != null ? 1 : 0;
        }

        @Override
        int duplicate(int key, long value) {
            return map.putIfAbsent(key, new long[] {value}) != null ? 1 : 0;
        }

        @Override
        void churn(int key, long value, int oldestKey) {
            map.put(key, new long[] {value});
            map.remove(oldestKey);
        }
    }

    static class Fastutil extends Subject {
        final Int2LongOpenHashMap map;

        Fastutil(long n) {
            map = new Int2LongOpenHashMap((int) n);
            map.defaultReturnValue(Long.MIN_VALUE);
        }

        @Override
        void create(int key, long value) {
            map.put(key, value);
        }

        @Override
        int lookup(int key) {
            return map.get(key) != Long.MIN_VALUE ? 1 : 0;
        }

        @Override
        int duplicate(int key, long value) {
            return map.putIfAbsent(key, value) != Long.MIN_VALUE ? 1 : 0;
        }

        @Override
        void churn(int key, long value, int oldestKey) {
            map.put(key, value);
            map.remove(oldestKey);
        }
    }

    /**
     * fastutil's lookup, then a reference taken and given back by CAS on a count word in a line of
     * its own chosen by the key (as a cache's slot or entry would be): two lines a hit, where the
     * counted floor ({@link CountedFloor}) keeps key, count and value in one. A locked instruction orders the loads around it, so
     * lookups overlap their memory misses far less than plain {@code get}s do: this row shows what
     * the count alone costs at each size.
     */
    static final class FastutilCounted extends Fastutil {
        /** One count word per 16 bytes (a compact slot's size), {@code n} rounded up to a power of two of them. */
        final long[] counts;
        final int mask;

        FastutilCounted(long n) {
            super(n);
            int words = Integer.highestOneBit((int) Math.min(1 << 28, Math.max(2, n)) - 1) << 1;
            counts = new long[words * 2];
            mask = words - 1;
        }

        @Override
        int lookup(int key) {
            long value = map.get(key);
            if (value == Long.MIN_VALUE) {
                return 0;
            }
            int at = (int) ((key * 0x9E37_79B9L) >>> 7 & mask) << 1;
            LayoutProbe.countedHit(counts, at);
            return 1;
        }
    }

    /**
     * The compact layout bounded at {@code n}, its bucket count sized from that bound (14 entries a
     * bucket at every size, not a power of two): what its builder does when given no
     * {@code bucketBits}.
     */
    static CompactMbCache sizedCompact(long n) {
        return CompactMbCache.builder().maxEntries(n).executor(Runnable::run).hashSeed(Backends.HASH_SEED).build();
    }

    /** log2 of a bucket count that keeps at most {@code load} entries a bucket at {@code n}. */
    static int bucketBits(long n, int load) {
        long buckets = Math.max(1, (n + load - 1) / load);
        return Math.min(30, 64 - Long.numberOfLeadingZeros(buckets - 1));
    }

    /** The i-th key: a bijection of the int {@code i}, so keys never repeat and look random. */
    static int key(long i) {
        int x = (int) i * 0x9E37_79B9;
        x ^= x >>> 16;
        x *= 0x85EB_CA6B;
        return x ^ (x >>> 13);
    }

    static Subject open(String backend, long n) {
        switch (backend) {
            case "compact":
                return new CompactPrimitive(n);
            case "compact-api":
                return new Dedup(sizedCompact(n));
            case "chm":
                return new Chm(n);
            case "fastutil":
                return new Fastutil(n);
            case "fastutil-counted":
                return new FastutilCounted(n);
            case "counted":
                return new CountedFloor(n);
            default:
                return new Dedup(Backends.dedup(backend, bucketBits(n, 16), n, Runnable::run));
        }
    }

    /**
     * The stop-the-world collector pauses from {@link #start()} to {@link #close()}: count, total and
     * longest, summed from the collectors' notifications (which arrive on another thread). A
     * concurrent phase is not a pause and is skipped; so is a collection whose cause is
     * {@code System.gc()}, the child's own explicit collections that measure what the structure
     * retains (told apart by their cause, where a flag set around the calls would race with the
     * late notifications).
     */
    static final class GcPauses implements AutoCloseable {
        /** The cause a collector gives a collection that {@code System.gc()} asked for. */
        static final String EXPLICIT_CAUSE = "System.gc()";

        private final AtomicLong pauses = new AtomicLong();
        private final AtomicLong totalMs = new AtomicLong();
        private final AtomicLong maxMs = new AtomicLong();
        private final List<NotificationEmitter> emitters = new ArrayList<>();
        private final NotificationListener listener = this::notified;

        private GcPauses() {}

        /** Listens to every collector from now on. */
        static GcPauses start() {
            GcPauses gc = new GcPauses();
            for (GarbageCollectorMXBean collector : ManagementFactory.getGarbageCollectorMXBeans()) {
                if (collector instanceof NotificationEmitter) {
                    ((NotificationEmitter) collector).addNotificationListener(gc.listener, null, null);
                    gc.emitters.add((NotificationEmitter) collector);
                }
            }
            return gc;
        }

        private void notified(Notification notification, Object handback) {
            if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(notification.getType())) {
                return;
            }
            GarbageCollectionNotificationInfo info =
                    GarbageCollectionNotificationInfo.from((CompositeData) notification.getUserData());
            if (info.getGcName().contains("Concurrent") || info.getGcAction().contains("concurrent")
                    || EXPLICIT_CAUSE.equals(info.getGcCause())) {
                return;
            }
            long ms = info.getGcInfo().getDuration();
            pauses.incrementAndGet();
            totalMs.addAndGet(ms);
            maxMs.accumulateAndGet(ms, Math::max);
        }

        /** Waits 200 ms for the last notifications, then stops listening; the figures are final after it. */
        @Override
        public void close() {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            for (NotificationEmitter emitter : emitters) {
                try {
                    emitter.removeNotificationListener(listener);
                } catch (ListenerNotFoundException ignored) {
                    // not registered: nothing to remove
                }
            }
        }

        long pauses() {
            return pauses.get();
        }

        long totalMs() {
            return totalMs.get();
        }

        long maxMs() {
            return maxMs.get();
        }
    }

    /** One backend at one size, in a JVM of its own. */
    public static final class Child {
        private Child() {}

        private static final com.sun.management.ThreadMXBean THREADS =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();
        private static long sink;

        /**
         * Measures and prints one result line.
         *
         * @param args {@code BACKEND N [GC_LINE [TURNOVERS]]} ({@code GC_LINE}: {@code false} skips the GC
         *     line; {@code TURNOVERS}: creates at the bound, in multiples of {@code N}, before
         *     {@code turnedB/entry}, 0 or absent for none)
         */
        public static void main(String[] args) {
            GcPauses run = GcPauses.start();
            String backend = args[0];
            long n = Long.parseLong(args[1]);
            boolean gcLine = args.length < 3 || Boolean.parseBoolean(args[2]);
            int turnovers = args.length < 4 ? 0 : Integer.parseInt(args[3]);
            int mask = OPS - 1;
            java.util.SplittableRandom random = new java.util.SplittableRandom(42);
            int[] hits = new int[OPS];
            int[] misses = new int[OPS];
            long[] hitValues = new long[OPS];
            for (int i = 0; i < OPS; i++) {
                long at = random.nextLong(n);
                hits[i] = key(at);
                hitValues[i] = at;
                misses[i] = key(n * 4 + random.nextLong(1L << 30));
            }
            long before = usedAfterGc();
            Subject subject = open(backend, n);
            for (long i = 0; i < n; i++) {
                subject.create(key(i), i);
            }
            long retained = usedAfterGc() - before;
            Map<String, String> row = new LinkedHashMap<>();
            row.put("backend", backend);
            row.put("n", Long.toString(n));
            row.put("B/entry", format(retained / (double) n));
            if (subject.footprint() > 0) {
                row.put("arraysB/entry", format(subject.footprint() / (double) n));
            }
            measure(row, "hit", () -> {
                int found = 0;
                for (int i = 0; i < OPS; i++) {
                    found += subject.lookup(hits[i & mask]);
                }
                return found;
            });
            measure(row, "batch-hit", () -> {
                int found = 0;
                for (int i = 0; i < OPS; i += BATCH) {
                    found += subject.batchLookup(hits, i);
                }
                return found;
            });
            measure(row, "miss", () -> {
                int found = 0;
                for (int i = 0; i < OPS; i++) {
                    found += subject.lookup(misses[i & mask]);
                }
                return found;
            });
            measureTwoThreads(row, "hit2t", from -> {
                int found = 0;
                for (int i = 0; i < OPS; i++) {
                    found += subject.lookup(hits[(from + i) & mask]);
                }
                return found;
            });
            measureTwoThreads(row, "miss2t", from -> {
                int found = 0;
                for (int i = 0; i < OPS; i++) {
                    found += subject.lookup(misses[(from + i) & mask]);
                }
                return found;
            });
            measure(row, "dup", () -> {
                int refused = 0;
                for (int i = 0; i < OPS; i++) {
                    refused += subject.duplicate(hits[i & mask], hitValues[i & mask]);
                }
                return refused;
            });
            long[] next = {n};
            measure(row, "churn", () -> {
                for (int i = 0; i < OPS; i++) {
                    long j = next[0]++;
                    subject.churn(key(j), j, key(j - n));
                }
                return 0;
            });
            if (gcLine) {
                gcLine(row, subject, next, n);
            }
            row.put("churnedB/entry", format((usedAfterGc() - before) / (double) n));
            if (turnovers > 0) { // on from the churn rows until turnovers * n creates since the fill
                for (long last = n + turnovers * n; next[0] < last; ) {
                    long j = next[0]++;
                    subject.churn(key(j), j, key(j - n));
                }
                row.put("turnedB/entry", format((usedAfterGc() - before) / (double) n));
            }
            // The key arrays were counted in before: reachable to here, or their 16 MiB leaves churnedB/entry.
            sink += hits[0] + misses[0] + hitValues[0];
            run.close();
            row.put("runGcPauses", Long.toString(run.pauses()));
            row.put("runGcMaxMs", Long.toString(run.maxMs()));
            subject.close();
            StringBuilder line = new StringBuilder(PREFIX);
            row.forEach((k, v) -> line.append(k).append('=').append(v).append(' '));
            System.out.println(line.toString().trim());
            System.out.println("sink " + sink);
        }

        interface Loop {
            long run();
        }

        private static void measure(Map<String, String> row, String name, Loop loop) {
            double[] times = new double[ROUNDS];
            long allocated = 0;
            for (int round = 0; round < ROUNDS; round++) {
                long bytes = THREADS.getCurrentThreadAllocatedBytes();
                long t0 = System.nanoTime();
                sink += loop.run();
                times[round] = (System.nanoTime() - t0) / (double) OPS;
                if (round == ROUNDS - 1) {
                    allocated = THREADS.getCurrentThreadAllocatedBytes() - bytes;
                }
            }
            Arrays.sort(times);
            row.put(name, format(times[ROUNDS / 2]));
            row.put(name + "B/op", format(allocated / (double) OPS));
        }

        /** One thread's loop of 2^20 operations, starting at {@code from} in its keys. */
        interface ThreadLoop {
            long run(int from);
        }

        /**
         * {@code loop} by two threads at once, released together by a barrier, the second starting
         * half-way through the keys: per round, the slower thread's time over its 2^20
         * operations; the row gets the median over the rounds.
         */
        private static void measureTwoThreads(Map<String, String> row, String name, ThreadLoop loop) {
            double[] times = new double[ROUNDS];
            for (int round = 0; round < ROUNDS; round++) {
                CyclicBarrier start = new CyclicBarrier(2);
                long[] nanos = new long[2];
                long[] results = new long[2];
                Throwable[] failures = new Throwable[2];
                Thread[] threads = new Thread[2];
                for (int t = 0; t < 2; t++) {
                    int id = t;
                    threads[t] = new Thread(() -> {
                        try {
                            start.await();
                            long t0 = System.nanoTime();
                            results[id] = loop.run(id * (OPS / 2));
                            nanos[id] = System.nanoTime() - t0;
                        } catch (Throwable failure) {
                            failures[id] = failure;
                        }
                    }, "scale-" + name + "-" + t);
                    threads[t].start();
                }
                for (int t = 0; t < 2; t++) {
                    try {
                        threads[t].join();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(name + " interrupted", e);
                    }
                    if (failures[t] != null) {
                        throw new IllegalStateException(name + ": thread " + t + " failed", failures[t]);
                    }
                }
                sink += results[0] + results[1]; // join: the threads' writes are visible here
                times[round] = Math.max(nanos[0], nanos[1]) / (double) OPS;
            }
            Arrays.sort(times);
            row.put(name, format(times[ROUNDS / 2]));
        }

        /** Churns for 3 s while the collectors' notifications are summed. */
        private static void gcLine(Map<String, String> row, Subject subject, long[] next, long n) {
            GcPauses pauses = GcPauses.start();
            com.sun.management.OperatingSystemMXBean os =
                    (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            long cpu0 = os.getProcessCpuTime();
            long own0 = THREADS.getCurrentThreadCpuTime();
            long end = System.nanoTime() + 3_000_000_000L;
            long ops = 0;
            while (System.nanoTime() < end) {
                for (int i = 0; i < 4096; i++) {
                    long j = next[0]++;
                    subject.churn(key(j), j, key(j - n));
                }
                ops += 4096;
            }
            long other = (os.getProcessCpuTime() - cpu0) - (THREADS.getCurrentThreadCpuTime() - own0);
            pauses.close();
            row.put("gcChurnOps", Long.toString(ops));
            row.put("gcPauses", Long.toString(pauses.pauses()));
            row.put("gcTotalMs", Long.toString(pauses.totalMs()));
            row.put("gcMaxMs", Long.toString(pauses.maxMs()));
            row.put("otherCpuMs", Long.toString(other / 1_000_000));
        }

        private static long usedAfterGc() {
            long used = Long.MAX_VALUE;
            for (int i = 0; i < 4; i++) {
                System.gc();
                used = Math.min(used, MEMORY.getHeapMemoryUsage().getUsed());
            }
            return used;
        }

        private static String format(double value) {
            return String.format(Locale.ROOT, value >= 100 ? "%.0f" : "%.1f", value);
        }
    }
}
