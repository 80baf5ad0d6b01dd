package org.mbcache.stress.soak;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The figures of one soak phase: operations run, faults injected, invariant checks passed, and the
 * failures with their evidence. Safe for any number of threads.
 *
 * <p>Implementation notes: counters are {@link LongAdder}s in a concurrent map keyed by name, so a worker
 * counts an operation without contending with the other workers on one line; the figures are read only
 * once the workers have stopped or paused at a barrier, which orders their updates before the read.
 * Failures keep their first {@value #MAX_DETAILS} descriptions in full and only count the rest, so a
 * failure repeated millions of times neither floods the report nor runs the JVM out of memory.
 */
public final class Tally {

    /** How many failure descriptions are kept verbatim. */
    static final int MAX_DETAILS = 20;

    private final Map<String, LongAdder> operations = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> faults = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> checks = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> failures = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> figures = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<String> details = new ConcurrentLinkedQueue<>();
    private final AtomicLong detailCount = new AtomicLong();

    /** An empty tally. */
    public Tally() {
    }

    /** Counts one operation of the given kind ({@code create}, {@code walk}, ...). */
    void operation(String kind) {
        add(operations, kind);
    }

    /** Counts one injected fault of the given kind ({@code executor-throw}, {@code interrupt}, ...). */
    void fault(String kind) {
        add(faults, kind);
    }

    /** Counts one invariant check that held. */
    void passed(String check) {
        add(checks, check);
    }

    /**
     * Counts one invariant check that did not hold, and keeps its description if fewer than
     * {@value #MAX_DETAILS} are kept already.
     *
     * @param check the invariant's name
     * @param detail what was seen, for the report
     */
    void failed(String check, String detail) {
        add(failures, check);
        if (detailCount.getAndIncrement() < MAX_DETAILS) {
            details.add(check + ": " + detail);
        }
    }

    /** Raises a high-water figure ({@code max-size}, ...) to {@code value} if it is higher. */
    void max(String figure, long value) {
        figures.computeIfAbsent(figure, f -> new AtomicLong(Long.MIN_VALUE)).accumulateAndGet(value, Math::max);
    }

    /** Adds one to a figure ({@code ise-racing-close}, ...). */
    void count(String figure) {
        figures.computeIfAbsent(figure, f -> new AtomicLong()).incrementAndGet();
    }

    /** Sets a figure to {@code value}. */
    void set(String figure, long value) {
        figures.computeIfAbsent(figure, f -> new AtomicLong()).set(value);
    }

    /**
     * The number of invariant checks that held.
     *
     * @return the sum over every check
     */
    public long passedCount() {
        return sum(checks);
    }

    /**
     * The number of invariant checks that did not hold.
     *
     * @return the sum over every check
     */
    public long failedCount() {
        return sum(failures);
    }

    /**
     * The number of operations run.
     *
     * @return the sum over every kind
     */
    public long operationCount() {
        return sum(operations);
    }

    /**
     * The number of faults injected.
     *
     * @return the sum over every kind
     */
    public long faultCount() {
        return sum(faults);
    }

    /**
     * How often one invariant check held.
     *
     * @param check the check's name
     * @return its count, 0 if it never ran
     */
    public long passedCount(String check) {
        LongAdder a = checks.get(check);
        return a == null ? 0 : a.sum();
    }

    /**
     * How often one invariant check did not hold.
     *
     * @param check the check's name
     * @return its count, 0 if it never failed
     */
    public long failedCount(String check) {
        LongAdder a = failures.get(check);
        return a == null ? 0 : a.sum();
    }

    /**
     * How often one fault was injected.
     *
     * @param fault the fault's name
     * @return its count, 0 if never
     */
    public long faultCount(String fault) {
        LongAdder a = faults.get(fault);
        return a == null ? 0 : a.sum();
    }

    /**
     * The kept failure descriptions, oldest first.
     *
     * @return at most {@value #MAX_DETAILS} descriptions
     */
    public List<String> failureDetails() {
        return new ArrayList<>(details);
    }

    /**
     * The report: the {@code soak: N passed, M failed} line, then one line per kind of figure, then the
     * kept failure descriptions.
     *
     * @param title what ran (backend, phase, threads, seconds)
     * @return the lines to print
     */
    public List<String> report(String title) {
        List<String> lines = new ArrayList<>();
        lines.add("soak " + title);
        lines.add("soak: " + passedCount() + " passed, " + failedCount() + " failed");
        lines.add("  operations " + operationCount() + ": " + render(operations));
        lines.add("  faults injected " + faultCount() + ": " + render(faults));
        lines.add("  checks passed: " + render(checks));
        if (!failures.isEmpty()) {
            lines.add("  checks failed: " + render(failures));
        }
        if (!figures.isEmpty()) {
            Map<String, Long> sorted = new TreeMap<>();
            figures.forEach((k, v) -> sorted.put(k, v.get()));
            lines.add("  figures: " + sorted.toString().replace("{", "").replace("}", "").replace("=", " "));
        }
        long kept = Math.min(detailCount.get(), MAX_DETAILS);
        for (String d : details) {
            lines.add("  FAILED " + d);
        }
        if (detailCount.get() > kept) {
            lines.add("  ... and " + (detailCount.get() - kept) + " more failures");
        }
        return lines;
    }

    private static void add(Map<String, LongAdder> counters, String name) {
        counters.computeIfAbsent(name, n -> new LongAdder()).increment();
    }

    private static long sum(Map<String, LongAdder> counters) {
        long total = 0;
        for (LongAdder a : counters.values()) {
            total += a.sum();
        }
        return total;
    }

    private static String render(Map<String, LongAdder> counters) {
        if (counters.isEmpty()) {
            return "none";
        }
        StringBuilder sb = new StringBuilder();
        new TreeMap<>(counters).forEach((k, v) -> sb.append(sb.length() == 0 ? "" : ", ").append(k).append(' ').append(v.sum()));
        return sb.toString();
    }
}
