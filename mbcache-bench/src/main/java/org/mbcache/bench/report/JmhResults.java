package org.mbcache.bench.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads JMH's JSON result files ({@code -rf json}) into {@link Row}s, one per result line. */
public final class JmhResults {
    public static final String ALLOC_NORM = "gc.alloc.rate.norm";

    /**
     * One measured result.
     *
     * @param benchmark short name, {@code Class.method} (a group role is {@code Class.group:role})
     * @param params JMH params, in file order, {@code backend} included
     * @param nsPerOp the score converted to ns/op ({@code NaN} if unknown)
     * @param errorNs the 99.9% error converted to ns/op ({@code NaN} if unknown)
     * @param bytesPerOp {@code gc.alloc.rate.norm}; 0 when JMH left it out (allocation-free code)
     */
    public record Row(String benchmark, int threads, int forks, Map<String, String> params,
                      double nsPerOp, double errorNs, double bytesPerOp) {
        public String backend() {
            return params.getOrDefault("backend", "");
        }

        /** Params other than the backend: with benchmark and threads they make the row group. */
        public String otherParams() {
            StringBuilder b = new StringBuilder();
            params.forEach((k, v) -> {
                if (!k.equals("backend")) {
                    b.append(b.length() == 0 ? "" : " ").append(k).append('=').append(v);
                }
            });
            return b.toString();
        }

        public String groupKey() {
            return benchmark + "|" + threads + "|" + otherParams();
        }
    }

    private JmhResults() {}

    public static List<Row> read(Path file) throws IOException {
        return parse(Files.readString(file));
    }

    @SuppressWarnings("unchecked")
    public static List<Row> parse(String json) {
        Object root = Json.parse(json);
        if (!(root instanceof List)) {
            throw new IllegalArgumentException("JMH JSON must be an array");
        }
        List<Row> rows = new ArrayList<>();
        for (Object o : (List<Object>) root) {
            Map<String, Object> r = (Map<String, Object>) o;
            String name = shortName((String) r.get("benchmark"));
            int threads = (int) num(r.get("threads"), 1);
            int forks = (int) num(r.get("forks"), 0);
            Map<String, String> params = new LinkedHashMap<>();
            Object p = r.get("params");
            if (p instanceof Map) {
                ((Map<String, Object>) p).forEach((k, v) -> params.put(k, String.valueOf(v)));
            }
            Map<String, Object> primary = (Map<String, Object>) r.get("primaryMetric");
            Map<String, Object> secondary = r.get("secondaryMetrics") instanceof Map
                    ? (Map<String, Object>) r.get("secondaryMetrics") : Map.of();
            double bytes = 0;
            Object norm = secondary.get(ALLOC_NORM);
            if (norm instanceof Map) {
                double b = num(((Map<String, Object>) norm).get("score"), 0);
                bytes = Double.isNaN(b) ? 0 : b;
            }
            rows.add(row(name, threads, forks, params, primary, bytes));
            // a @Group benchmark: one more row per role (secondary metrics in the score's unit)
            String unit = (String) primary.get("scoreUnit");
            for (Map.Entry<String, Object> e : secondary.entrySet()) {
                if (e.getKey().contains(".") || !(e.getValue() instanceof Map)) {
                    continue; // profiler metrics (gc.*), not roles
                }
                Map<String, Object> m = (Map<String, Object>) e.getValue();
                if (unit != null && unit.equals(m.get("scoreUnit"))) {
                    rows.add(row(name + ":" + e.getKey(), threads, forks, params, m, Double.NaN));
                }
            }
        }
        return rows;
    }

    private static Row row(String name, int threads, int forks, Map<String, String> params,
                           Map<String, Object> metric, double bytes) {
        String unit = (String) metric.get("scoreUnit");
        double score = num(metric.get("score"), Double.NaN);
        double error = num(metric.get("scoreError"), Double.NaN);
        return new Row(name, threads, forks, params, toNs(score, unit), toNsError(score, error, unit), bytes);
    }

    /** {@code org.mbcache.bench.Micro.findFirstHit} becomes {@code Micro.findFirstHit}. */
    static String shortName(String full) {
        String[] parts = full.split("\\.");
        return parts.length < 2 ? full : parts[parts.length - 2] + "." + parts[parts.length - 1];
    }

    /** A JSON number, or JMH's "NaN"/"+INF"/"-INF" strings. */
    static double num(Object o, double dflt) {
        if (o instanceof Double) {
            return (Double) o;
        }
        if (o instanceof String) {
            switch ((String) o) {
                case "NaN": return Double.NaN;
                case "+INF": case "Infinity": return Double.POSITIVE_INFINITY;
                case "-INF": case "-Infinity": return Double.NEGATIVE_INFINITY;
                default:
                    try {
                        return Double.parseDouble((String) o);
                    } catch (NumberFormatException e) {
                        return dflt;
                    }
            }
        }
        return dflt;
    }

    /** Converts a JMH score to ns/op: time-per-op units scale, ops-per-time units invert. */
    static double toNs(double score, String unit) {
        if (unit == null) {
            return Double.NaN;
        }
        switch (unit) {
            case "ns/op": return score;
            case "us/op": return score * 1e3;
            case "ms/op": return score * 1e6;
            case "s/op": return score * 1e9;
            case "ops/ns": return 1 / score;
            case "ops/us": return 1e3 / score;
            case "ops/ms": return 1e6 / score;
            case "ops/s": return 1e9 / score;
            default: return Double.NaN;
        }
    }

    static double toNsError(double score, double error, String unit) {
        if (unit != null && unit.startsWith("ops/")) {
            // error of 1/x, to first order
            return toNs(score, unit) * (error / score);
        }
        return toNs(error, unit);
    }

}
