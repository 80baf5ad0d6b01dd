package org.mbcache.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The TSC frequency, for reporting TSC cycles (= ns/op x GHz). There are no hardware counters
 * here, so these are TSC (reference) cycles, not core cycles: like the kernel's {@code get_cycles()}
 * in the 2019 thread. Sources, best first: {@code -Dmbcache.tsc.ghz}, the kernel's TSC calibration
 * in {@code dmesg} ("tsc: Refined TSC clocksource calibration" or "tsc: Detected ... MHz"), then
 * {@code /proc/cpuinfo}'s "cpu MHz" (the current clock, which equals the TSC only on a
 * constant-TSC machine that does not scale its clock).
 */
public record Tsc(double ghz, String source) {
    private static final Pattern REFINED = Pattern.compile("Refined TSC clocksource calibration: ([0-9.]+) MHz");
    private static final Pattern DETECTED = Pattern.compile("tsc: Detected ([0-9.]+) MHz");
    private static final Pattern CPU_MHZ = Pattern.compile("(?m)^cpu MHz\\s*:\\s*([0-9.]+)");
    private static final Pattern MODEL = Pattern.compile("(?m)^model name\\s*:\\s*(.+)$");

    public double cycles(double nsPerOp) {
        return nsPerOp * ghz;
    }

    /** The line every report prints under its cycles column. */
    public String label() {
        return String.format("TSC cycles, not core cycles: ns/op × %.3f GHz TSC (from %s)", ghz, source);
    }

    public static Tsc detect() {
        String override = System.getProperty("mbcache.tsc.ghz");
        if (override != null) {
            return new Tsc(Double.parseDouble(override), "-Dmbcache.tsc.ghz");
        }
        Tsc t = fromDmesg(run("dmesg"));
        if (t != null) {
            return t;
        }
        t = fromCpuinfo(read("/proc/cpuinfo"));
        if (t != null) {
            return t;
        }
        return new Tsc(1.0, "nothing found: assumed 1 GHz, so cycles = ns");
    }

    static Tsc fromDmesg(String dmesg) {
        if (dmesg == null) {
            return null;
        }
        Matcher m = REFINED.matcher(dmesg);
        if (m.find()) {
            return new Tsc(Double.parseDouble(m.group(1)) / 1000, "dmesg 'Refined TSC clocksource calibration'");
        }
        m = DETECTED.matcher(dmesg);
        if (m.find()) {
            return new Tsc(Double.parseDouble(m.group(1)) / 1000, "dmesg 'tsc: Detected'");
        }
        return null;
    }

    static Tsc fromCpuinfo(String cpuinfo) {
        if (cpuinfo == null) {
            return null;
        }
        Matcher m = CPU_MHZ.matcher(cpuinfo);
        if (m.find()) {
            return new Tsc(Double.parseDouble(m.group(1)) / 1000, "/proc/cpuinfo 'cpu MHz' (no TSC calibration found)");
        }
        return null;
    }

    /** The CPU model from /proc/cpuinfo, or the OS arch. */
    public static String cpuModel() {
        String info = read("/proc/cpuinfo");
        if (info != null) {
            Matcher m = MODEL.matcher(info);
            if (m.find()) {
                return m.group(1).trim();
            }
        }
        return System.getProperty("os.arch");
    }

    static String read(String file) {
        try {
            return Files.readString(Path.of(file), StandardCharsets.ISO_8859_1);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Runs a command, its output or null (missing, not permitted, timed out). */
    static String run(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroy();
                return null;
            }
            return new String(out, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /**
     * Whether hardware counters work: {@code perf stat -e instructions true} must print a count,
     * not "&lt;not supported&gt;". Only then is JMH's perfnorm profiler worth adding.
     */
    public static boolean perfCountersWork() {
        return perfOutputCounts(run("perf", "stat", "-e", "instructions", "true"));
    }

    static boolean perfOutputCounts(String out) {
        if (out == null) {
            return false;
        }
        return Pattern.compile("(?m)^\\s*[0-9][0-9,.]*\\s+instructions").matcher(out).find();
    }
}
