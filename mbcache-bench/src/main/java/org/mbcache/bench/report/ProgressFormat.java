package org.mbcache.bench.report;

import java.io.PrintStream;
import java.util.Collection;
import java.util.Locale;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.format.OutputFormat;

/**
 * A quiet JMH OutputFormat: one progress line per benchmark run ({@code [k/N] name params ...
 * score}), JMH's own chatter dropped except warnings and failures, which go to stderr.
 */
public final class ProgressFormat implements OutputFormat {
    private final PrintStream out;
    private final Tsc tsc;
    private final int total;
    private final long startNanos;
    private int done;
    private long benchStart;

    /**
     * @param out where the progress lines go
     * @param tsc converts ns/op to TSC cycles in each line
     * @param total JMH runs planned, for the {@code [k/N]} counter
     * @param startNanos {@link System#nanoTime()} at the start of the whole job
     */
    public ProgressFormat(PrintStream out, Tsc tsc, int total, long startNanos) {
        this.out = out;
        this.tsc = tsc;
        this.total = total;
        this.startNanos = startNanos;
    }

    int done() {
        return done;
    }

    @Override
    public void startBenchmark(BenchmarkParams p) {
        benchStart = System.nanoTime();
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "[%2d/%d %4.0fs] %-26s t=%d", done + 1, total,
                (benchStart - startNanos) / 1e9, JmhResults.shortName(p.getBenchmark()), p.getThreads()));
        for (String k : p.getParamsKeys()) {
            b.append(' ').append(k).append('=').append(p.getParam(k));
        }
        out.print(b);
        out.flush();
    }

    @Override
    public void endBenchmark(BenchmarkResult r) {
        done++;
        if (r == null) {
            out.println("  FAILED");
            return;
        }
        Result primary = r.getPrimaryResult();
        double ns = JmhResults.toNs(primary.getScore(), primary.getScoreUnit());
        Result norm = r.getSecondaryResults().get(JmhResults.ALLOC_NORM);
        double bytes = norm == null || Double.isNaN(norm.getScore()) ? 0 : norm.getScore();
        out.println(String.format(Locale.ROOT, "  -> %s ns/op, %s TSC cycles, %s B/op (%.1fs)",
                ResultTable.fmt(ns), ResultTable.fmt(tsc.cycles(ns)), ResultTable.bytes(bytes),
                (System.nanoTime() - benchStart) / 1e9));
    }

    private void maybeForward(String s) {
        if (s == null) {
            return;
        }
        String t = s.trim();
        if (t.startsWith("<failure") || t.contains("Exception") || t.contains("Error")
                || t.startsWith("WARNING") || t.startsWith("at ")) {
            System.err.println("  | " + t);
        }
    }

    @Override public void iteration(BenchmarkParams b, IterationParams p, int i) { }
    @Override public void iterationResult(BenchmarkParams b, IterationParams p, int i, IterationResult r) { }
    @Override public void startRun() { }
    @Override public void endRun(Collection<RunResult> results) { }
    @Override public void print(String s) { maybeForward(s); }
    @Override public void println(String s) { maybeForward(s); }
    @Override public void verbosePrintln(String s) { }
    @Override public void flush() { out.flush(); }
    @Override public void close() { }
    @Override public void write(int b) { }
    @Override public void write(byte[] b) { }
}
