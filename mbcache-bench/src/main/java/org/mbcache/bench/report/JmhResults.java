package org.mbcache.bench.report;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads JMH's JSON result files ({@code -rf json}) into {@link Row}s, one per result line, through Jackson. */
public final class JmhResults {
    private static final ObjectMapper JSON = new ObjectMapper();

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

    /**
     * The rows of a JMH JSON result file's text, read by Jackson.
     *
     * @throws IllegalArgumentException if the text is not JSON or not an array
     */
    public static List<Row> parse(String json) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage(), e);
        }
        if (root == null || !root.isArray()) {
            throw new IllegalArgumentException("JMH JSON must be an array");
        }
        List<Row> rows = new ArrayList<>();
        for (JsonNode r : root) {
            String name = shortName(r.path("benchmark").asText());
            int threads = (int) num(r.get("threads"), 1);
            int forks = (int) num(r.get("forks"), 0);
            Map<String, String> params = new LinkedHashMap<>();
            r.path("params").fields().forEachRemaining(e -> params.put(e.getKey(), e.getValue().asText()));
            JsonNode primary = r.path("primaryMetric");
            JsonNode secondary = r.path("secondaryMetrics");
            double bytes = num(secondary.path(ALLOC_NORM).get("score"), 0);
            rows.add(row(name, threads, forks, params, primary, Double.isNaN(bytes) ? 0 : bytes));
            // a @Group benchmark: one more row per role (secondary metrics in the score's unit)
            String unit = primary.path("scoreUnit").asText(null);
            secondary.fields().forEachRemaining(e -> {
                JsonNode m = e.getValue();
                // profiler metrics (gc.*) have dotted names: not roles
                if (!e.getKey().contains(".") && m.isObject() && unit != null && unit.equals(m.path("scoreUnit").asText(null))) {
                    rows.add(row(name + ":" + e.getKey(), threads, forks, params, m, Double.NaN));
                }
            });
        }
        return rows;
    }

    private static Row row(String name, int threads, int forks, Map<String, String> params, JsonNode metric, double bytes) {
        String unit = metric.path("scoreUnit").asText(null);
        double score = num(metric.get("score"), Double.NaN);
        double error = num(metric.get("scoreError"), Double.NaN);
        return new Row(name, threads, forks, params, toNs(score, unit), toNsError(score, error, unit), bytes);
    }

    /** {@code org.mbcache.bench.Micro.findFirstHit} becomes {@code Micro.findFirstHit}. */
    static String shortName(String full) {
        String[] parts = full.split("\\.");
        return parts.length < 2 ? full : parts[parts.length - 2] + "." + parts[parts.length - 1];
    }

    /** A JSON number, or JMH's "NaN"/"+INF"/"-INF" strings; {@code dflt} when absent or neither. */
    static double num(JsonNode node, double dflt) {
        if (node == null || node.isMissingNode() || node.isNull()) {
            return dflt;
        }
        if (node.isNumber()) {
            return node.doubleValue();
        }
        return num(node.asText(), dflt);
    }

    /** JMH's text for a number: "NaN", "+INF", "-INF" or digits; {@code dflt} for anything else. */
    static double num(String text, double dflt) {
        switch (text) {
            case "NaN": return Double.NaN;
            case "+INF": case "Infinity": return Double.POSITIVE_INFINITY;
            case "-INF": case "-Infinity": return Double.NEGATIVE_INFINITY;
            default:
                try {
                    return Double.parseDouble(text);
                } catch (NumberFormatException e) {
                    return dflt;
                }
        }
    }

    /** Converts a JMH score to ns/op: time-per-op units scale, ops-per-time units invert. */
    public static double toNs(double score, String unit) {
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
