package org.mbcache.bench.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Whether two runs of the main job agree: for each operation in both, the ratio of their speed-ups,
 * and whether it lies within {@value #LOW}-{@value #HIGH}x. Reads the runs' {@code main-job.json}
 * through Jackson.
 */
public final class RunAgreement {
    /** The lower end of agreement: the second run's speed-up is at least this fraction of the first's. */
    public static final double LOW = 0.8;
    /** The upper end of agreement: the second run's speed-up is at most this multiple of the first's. */
    public static final double HIGH = 1.25;

    private static final ObjectMapper JSON = new ObjectMapper();

    private RunAgreement() {}

    /**
     * One operation in both runs.
     *
     * @param operation the operation, in words
     * @param first the first run's speed-up
     * @param second the second run's speed-up
     */
    public record Pair(String operation, double first, double second) {
        /** The second run's speed-up over the first's. */
        public double ratio() {
            return second / first;
        }

        /** Whether the two speed-ups are within {@value #LOW}-{@value #HIGH}x of each other. */
        public boolean agrees() {
            double r = ratio();
            return r >= LOW && r <= HIGH;
        }
    }

    /** The speed-up of every operation in a {@code main-job.json}, in its order. */
    public static Map<String, Double> speedups(Path mainJobJson) throws IOException {
        JsonNode root = JSON.readTree(mainJobJson.toFile());
        Map<String, Double> speedups = new LinkedHashMap<>();
        for (JsonNode row : root.path("rows")) {
            speedups.put(row.path("operation").asText(), JmhResults.num(row.get("speedup"), Double.NaN));
        }
        return speedups;
    }

    /** The operations of {@code first} that {@code second} also has, paired. */
    public static List<Pair> pairs(Map<String, Double> first, Map<String, Double> second) {
        List<Pair> pairs = new ArrayList<>();
        first.forEach((operation, speedup) -> {
            Double other = second.get(operation);
            if (other != null) {
                pairs.add(new Pair(operation, speedup, other));
            }
        });
        return pairs;
    }

    /** A table of the pairs and the count of those that agree. */
    public static String markdown(List<Pair> pairs) {
        StringBuilder b = new StringBuilder("| operation | first run | second run | second ÷ first | agrees |\n"
                + "| --- | ---: | ---: | ---: | --- |\n");
        int agree = 0;
        for (Pair p : pairs) {
            agree += p.agrees() ? 1 : 0;
            b.append(String.format(Locale.ROOT, "| %s | %.2fx | %.2fx | %.2f | %s |%n", p.operation(), p.first(), p.second(),
                    p.ratio(), p.agrees() ? "yes" : "no"));
        }
        b.append(String.format(Locale.ROOT, "%n%d of %d speed-ups agree within %.2f-%.2fx.%n", agree, pairs.size(), LOW, HIGH));
        return b.toString();
    }
}
