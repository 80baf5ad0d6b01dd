package org.mbcache.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.mbcache.CacheStats;
import org.mbcache.DedupCache;

/**
 * The bursty writer ({@code java -jar mbcache-bench.jar bursty}): one thread creates bursts of new
 * pairs with idle gaps between them, on a small cache whose background work runs on a
 * single-thread executor of its own. It shows whether the background work keeps up with bursts
 * that add more than one pass frees, or leaves the writer to reclaim synchronously.
 *
 * <p>For each backend, after a warm-up of the same bursts: the synchronous passes per 1,000 creates,
 * the share of reclaim passes that the writer ran (synchronous over synchronous plus background,
 * from {@link CacheStats}), the size right after the last burst and 100 ms later, how long the
 * count took to fall below 1.25 x {@code maxEntries}, and the writer's create latency (p50, p99,
 * p99.9, each create timed on its own with a {@code System.nanoTime} pair). For reference, the
 * p99 of a create below the bound, timed the same way: the same bursts on a cache with a bound it
 * never reaches, where the writer deletes the oldest burst after each new one (untimed), so that
 * the count, and the chains a create walks, stay about as they are at the bound. Both caches are
 * warmed up before either is measured. Both p99s once more without each burst's first create,
 * which follows the idle gap on cold caches in either regime: with bursts of 128 those are 0.8 %
 * of the creates, and the create that hands the background work over (at the bound, about one a
 * burst, waking the executor's thread) another 0.8 %, so together they decide the p99 at the
 * bound, where below it the first creates alone stay under it.
 *
 * <p>Targets (printed with each result): synchronous passes at most 1 % of background passes; the
 * count below 1.25 x {@code maxEntries} within 100 ms of the last burst; the writer's p99 within
 * twice a below-bound create's.
 */
public final class BurstyWriter {
    private BurstyWriter() {}

    /**
     * One run's shape.
     *
     * @param maxEntries the cache's bound
     * @param bucketBits log2 of the bucket count (the mbcache backends)
     * @param burst new creates per burst
     * @param periodMicros from the start of one burst to the start of the next
     * @param warmupMs bursts before the measurement, on the same cache
     * @param measureMs bursts measured
     */
    record Config(long maxEntries, int bucketBits, int burst, long periodMicros, long warmupMs, long measureMs) {
        /** maxEntries 1,024, bucketBits 6, bursts of 128 every 5 ms, 1 s of warm-up, 3 s measured. */
        static final Config DEFAULT = new Config(1024, 6, 128, 5_000, 1_000, 3_000);
    }

    /** How long after the last burst the count is looked at again. */
    static final long SETTLE_MS = 100;
    /** The count the background work must be back below within {@link #SETTLE_MS}, over {@code maxEntries}. */
    static final double SETTLED_FACTOR = 1.25;

    /**
     * One backend's figures; latencies in nanoseconds.
     *
     * @param backend the backend's label
     * @param creates creates measured
     * @param synchronousPasses synchronous reclaim passes during the measurement
     * @param backgroundPasses background reclaim passes during the measurement
     * @param entriesReclaimed entries reclaimed during the measurement (all kinds)
     * @param sizeAtEnd the size right after the last burst
     * @param sizeAfterSettle the size {@link #SETTLE_MS} later
     * @param settleMs ms from the last burst until the count was below {@link #SETTLED_FACTOR} x
     *     maxEntries (-1 if it was not within {@link #SETTLE_MS})
     * @param p50 the writer's median create
     * @param p99 the writer's 99th percentile create
     * @param p999 the writer's 99.9th percentile create
     * @param belowBoundP99 the 99th percentile of a create below the bound
     * @param laterP99 the writer's 99th percentile create, leaving out each burst's first create
     * @param belowBoundLaterP99 the same below the bound
     * @param maxEntries the bound
     */
    record Result(String backend, long creates, long synchronousPasses, long backgroundPasses, long entriesReclaimed,
                  long sizeAtEnd, long sizeAfterSettle, long settleMs, double p50, double p99, double p999,
                  double belowBoundP99, double laterP99, double belowBoundLaterP99, long maxEntries) {

        /** Synchronous passes per 1,000 creates. */
        double synchronousPer1000Creates() {
            return creates == 0 ? 0 : 1000.0 * synchronousPasses / creates;
        }

        /** The share of reclaim passes the writer ran (synchronous ones), 0 to 1. */
        double writerShareOfPasses() {
            long passes = synchronousPasses + backgroundPasses;
            return passes == 0 ? 0 : (double) synchronousPasses / passes;
        }

        boolean synchronousTargetMet() {
            return synchronousPasses <= 0.01 * backgroundPasses;
        }

        boolean settleTargetMet() {
            return settleMs >= 0;
        }

        boolean latencyTargetMet() {
            return p99 <= 2 * belowBoundP99;
        }

        /** The table row (markdown). */
        String row() {
            return String.format(Locale.ROOT, "| %s | %d | %.2f | %.1f %% | %d | %d | %s | %.0f | %.0f | %.0f | %.0f | %.0f / %.0f | %s |",
                    backend, creates, synchronousPer1000Creates(), 100 * writerShareOfPasses(), sizeAtEnd,
                    sizeAfterSettle, settleMs < 0 ? "> " + SETTLE_MS : Long.toString(settleMs), p50, p99, p999,
                    belowBoundP99, laterP99, belowBoundLaterP99, verdicts());
        }

        String verdicts() {
            return (synchronousTargetMet() ? "sync ok" : "SYNC MISSED") + ", " + (settleTargetMet() ? "settle ok" : "SETTLE MISSED")
                    + ", " + (latencyTargetMet() ? "p99 ok" : "P99 MISSED");
        }
    }

    static final String HEADER = "| backend | creates | sync passes / 1,000 creates | writer's share of passes"
            + " | size at end | size +100 ms | ms to < 1.25 x max | p50 ns | p99 ns | p99.9 ns | below-bound p99 ns"
            + " | p99 ns without bursts' first creates, at / below the bound | targets |\n"
            + "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |";

    /** {@code bursty [BACKEND...] [--warmup-ms MS] [--measure-ms MS]}: every DedupCache backend by default. */
    public static void main(String[] args) throws Exception {
        List<String> backends = new ArrayList<>();
        Config config = Config.DEFAULT;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--warmup-ms") && i + 1 < args.length) {
                config = new Config(config.maxEntries(), config.bucketBits(), config.burst(), config.periodMicros(),
                        Long.parseLong(args[++i]), config.measureMs());
            } else if (args[i].equals("--measure-ms") && i + 1 < args.length) {
                config = new Config(config.maxEntries(), config.bucketBits(), config.burst(), config.periodMicros(),
                        config.warmupMs(), Long.parseLong(args[++i]));
            } else if (Backends.DEDUP.contains(args[i])) {
                backends.add(args[i]);
            } else {
                throw new IllegalArgumentException("bursty: unknown argument " + args[i] + " (backends: " + Backends.DEDUP + ")");
            }
        }
        if (backends.isEmpty()) {
            backends.addAll(Backends.DEDUP);
        }
        System.out.println(report(backends, config));
    }

    /** Runs each backend and returns the table. */
    static String report(List<String> backends, Config config) throws InterruptedException {
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
                "# bursty writer: maxEntries %d, bucketBits %d, bursts of %d new creates every %d us,"
                        + " %d ms warm-up, %d ms measured, single-thread executor; Java %s%n%n%s%n",
                config.maxEntries(), config.bucketBits(), config.burst(), config.periodMicros(), config.warmupMs(),
                config.measureMs(), Runtime.version(), HEADER));
        for (String backend : backends) {
            out.append(run(backend, config).row()).append('\n');
        }
        return out.toString();
    }

    /**
     * One backend: both caches warmed up first (the JIT's work done before either is measured),
     * then the below-bound reference measured, then the bursts at the bound. The reference's
     * cache has a bound 1,024 times {@code maxEntries}, and its writer deletes the oldest burst
     * (untimed) once the count has reached {@code maxEntries}.
     */
    static Result run(String backend, Config config) throws InterruptedException {
        ExecutorService belowExecutor = singleThreadExecutor();
        ExecutorService executor = singleThreadExecutor();
        try (DedupCache belowBound = Backends.dedup(backend, config.bucketBits(), 1024 * config.maxEntries(), belowExecutor);
                DedupCache cache = Backends.dedup(backend, config.bucketBits(), config.maxEntries(), executor)) {
            Writer belowBoundWriter = new Writer(belowBound, config, true);
            Writer writer = new Writer(cache, config, false);
            belowBoundWriter.bursts(config.warmupMs());
            writer.bursts(config.warmupMs());
            Writer.Latencies belowBoundLatencies = belowBoundWriter.bursts(config.measureMs());

            CacheStats before = cache.stats();
            Writer.Latencies measured = writer.bursts(config.measureMs());
            Flood.Samples latencies = measured.all();
            long sizeAtEnd = cache.size();
            long end = System.nanoTime();
            long settleMs = -1;
            long settleDeadline = end + TimeUnit.MILLISECONDS.toNanos(SETTLE_MS);
            for (long now = end; now < settleDeadline; now = System.nanoTime()) {
                if (cache.size() < SETTLED_FACTOR * config.maxEntries()) {
                    settleMs = TimeUnit.NANOSECONDS.toMillis(now - end);
                    break;
                }
                LockSupport.parkNanos(100_000);
            }
            LockSupport.parkNanos(Math.max(0, settleDeadline - System.nanoTime()));
            long sizeAfterSettle = cache.size();
            CacheStats after = cache.stats();
            return new Result(backend, latencies.count(),
                    after.synchronousReclaimPasses() - before.synchronousReclaimPasses(),
                    after.backgroundReclaimPasses() - before.backgroundReclaimPasses(),
                    after.entriesReclaimed() - before.entriesReclaimed(), sizeAtEnd, sizeAfterSettle, settleMs,
                    latencies.percentile(0.5), latencies.percentile(0.99), latencies.percentile(0.999),
                    belowBoundLatencies.all().percentile(0.99), measured.later().percentile(0.99),
                    belowBoundLatencies.later().percentile(0.99), config.maxEntries());
        } finally {
            executor.shutdownNow();
            belowExecutor.shutdownNow();
        }
    }

    private static ExecutorService singleThreadExecutor() {
        return Executors.newSingleThreadExecutor(task -> {
            Thread thread = new Thread(task, "bursty-background");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** The writer: bursts of new pairs (key and value the pair's number) at a fixed rate. */
    static final class Writer {
        private final DedupCache cache;
        private final Config config;
        private final boolean deleteOldest;
        private long next;
        private long oldest;

        Writer(DedupCache cache, Config config, boolean deleteOldest) {
            this.cache = cache;
            this.config = config;
            this.deleteOldest = deleteOldest;
        }

        /**
         * Every create's time, and those of the creates after each burst's first: the first one
         * after an idle gap runs on caches the gap left cold, at the bound and below it alike, and
         * with bursts of 128 it is 0.8 % of the creates, just under the p99.
         */
        record Latencies(Flood.Samples all, Flood.Samples later) {}

        /** Bursts for {@code ms}, one every period (at once after one that overran); every create timed. */
        Latencies bursts(long ms) {
            Flood.Samples samples = new Flood.Samples(1);
            Flood.Samples later = new Flood.Samples(1);
            long period = TimeUnit.MICROSECONDS.toNanos(config.periodMicros());
            long start = System.nanoTime();
            long deadline = start + TimeUnit.MILLISECONDS.toNanos(ms);
            for (long burstStart = start; burstStart < deadline; burstStart += period) {
                LockSupport.parkNanos(burstStart - System.nanoTime());
                for (int i = 0; i < config.burst(); i++, next++) {
                    long t0 = System.nanoTime();
                    cache.create((int) next, next, true);
                    long ns = System.nanoTime() - t0;
                    samples.add(ns);
                    if (i != 0) {
                        later.add(ns);
                    }
                }
                while (deleteOldest && next - oldest > config.maxEntries()) {
                    cache.deleteOrGet((int) oldest, oldest);
                    oldest++;
                }
            }
            return new Latencies(samples, later);
        }
    }
}
