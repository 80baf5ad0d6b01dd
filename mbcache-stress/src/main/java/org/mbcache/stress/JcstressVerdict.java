package org.mbcache.stress;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Decides whether a JCStress run passed, from its captured console output, for the build.
 *
 * <p>JCStress 0.16's exit status is not enough: it exits 0 when no test matched ("FATAL: No matching
 * tests.") or when no test could be scheduled on the machine ("No scheduling is possible, these tests
 * would not run.", for example a 3-actor test on 2 CPUs). So the verdict reads the "RUN RESULTS:"
 * summary JCStress prints at the end, which looks like this:
 *
 * <pre>
 * RUN RESULTS:
 *   Interesting tests: 1 matching test results.
 * .......... [OK] org.mbcache.stress.SomeTest
 * ...
 *   Failed tests: No matches.
 *
 *   Error tests: No matches.
 *
 *   All remaining tests: 12 matching test results. Use -v to print them.
 * </pre>
 *
 * and passes only when the summary is there, no test failed or erred, nothing says a test was
 * skipped, and the tests reported add up to every test in the module's {@code META-INF/TestList}.
 * On failure it prints why, with the failing tests' blocks from the summary, and exits with status 1.
 */
public final class JcstressVerdict {

    /** Phrases JCStress prints when tests were skipped or nothing ran, although it may exit 0. */
    private static final List<String> SKIP_MARKERS = List.of(
            "No matching tests",
            "No scheduling is possible",
            "would not run",
            "FATAL:");

    /** A category line of the summary: "  Failed tests: No matches." or "  Error tests: 3 matching test results." */
    private static final Pattern CATEGORY = Pattern.compile(
            "^ {2}([A-Za-z][A-Za-z ]*?) tests: (?:No matches\\.|(\\d+) matching test results?\\.).*$");

    /** A per-test status line: ".......... [OK] org.mbcache.stress.SomeTest". */
    private static final Pattern TEST_STATUS = Pattern.compile("^\\.*\\s*\\[([A-Z][A-Z _-]*)\\]\\s+(\\S+)\\s*$");

    /** How many lines of failing tests' blocks the verdict echoes (stack traces can be long). */
    private static final int MAX_EVIDENCE_LINES = 200;

    /** The categories JCStress uses for tests that passed. */
    private static final List<String> PASSING_CATEGORIES = List.of("interesting", "all remaining");

    private JcstressVerdict() {
    }

    /**
     * Checks a captured JCStress run against the test list and exits 0 if it passed, 1 if not.
     *
     * @param args the captured output file, and the {@code META-INF/TestList} the run's jar was built with
     * @throws IOException if either file cannot be read
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: JcstressVerdict <jcstress-output.txt> <META-INF/TestList>");
            System.exit(2);
        }
        Path output = Path.of(args[0]);
        Path testList = Path.of(args[1]);
        List<String> expectedTests = readTestList(testList);
        List<String> lines = Files.exists(output)
                ? Files.readAllLines(output, StandardCharsets.UTF_8)
                : List.of();
        Verdict verdict = judge(lines, expectedTests);
        if (verdict.passed()) {
            System.out.println("[jcstress] PASSED: " + verdict.summary() + " (full output: " + output + ")");
            return;
        }
        System.err.println("[jcstress] FAILED: " + verdict.summary());
        for (String problem : verdict.problems()) {
            System.err.println("[jcstress]   - " + problem);
        }
        for (String line : verdict.evidence()) {
            System.err.println("[jcstress] | " + line);
        }
        System.err.println("[jcstress] full output: " + output + "; rerun one test with: java -jar "
                + "mbcache-stress/target/jcstress.jar -m quick -t <TestName>");
        System.exit(1);
    }

    /**
     * The outcome of {@link #judge}: whether the run passed, a one-line summary, the reasons it did not,
     * and the lines of output that show them.
     *
     * @param passed whether every listed test ran and passed
     * @param summary a one-line account of the categories seen
     * @param problems why the run did not pass (empty when it passed)
     * @param evidence output lines describing the failing tests
     */
    public record Verdict(boolean passed, String summary, List<String> problems, List<String> evidence) {
    }

    /**
     * Judges a captured run.
     *
     * @param lines the run's console output, line by line
     * @param expectedTests the names of the tests in the jar's test list
     * @return the verdict
     */
    public static Verdict judge(List<String> lines, List<String> expectedTests) {
        List<String> problems = new ArrayList<>();
        List<String> evidence = new ArrayList<>();

        for (String line : lines) {
            for (String marker : SKIP_MARKERS) {
                if (line.contains(marker)) {
                    problems.add("JCStress reported \"" + line.strip() + "\"");
                    break;
                }
            }
        }

        int summaryStart = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("RUN RESULTS:")) {
                summaryStart = i;
            }
        }
        if (summaryStart < 0) {
            problems.add("no \"RUN RESULTS:\" summary in the output: the run did not finish (crash, kill, or time-out)");
            return new Verdict(false, "no summary", problems, tail(lines, 40));
        }

        Map<String, Integer> categories = new LinkedHashMap<>();
        String category = null;
        for (String line : lines.subList(summaryStart + 1, lines.size())) {
            Matcher c = CATEGORY.matcher(line);
            if (c.matches()) {
                category = c.group(1).toLowerCase(Locale.ROOT);
                categories.put(category, c.group(2) == null ? 0 : Integer.parseInt(c.group(2)));
                continue;
            }
            Matcher t = TEST_STATUS.matcher(line);
            if (t.matches() && !t.group(1).equals("OK")) {
                problems.add(t.group(2) + " is " + t.group(1));
            }
            if (category != null && !PASSING_CATEGORIES.contains(category) && !line.isBlank()) {
                evidence.add(line);
            }
        }

        for (String required : List.of("failed", "error", "all remaining")) {
            if (!categories.containsKey(required)) {
                problems.add("the summary has no \"" + required + " tests\" line: unknown JCStress output format");
            }
        }
        int reported = 0;
        for (Map.Entry<String, Integer> e : categories.entrySet()) {
            reported += e.getValue();
            if (!PASSING_CATEGORIES.contains(e.getKey()) && e.getValue() > 0) {
                problems.add(e.getValue() + " test(s) in category \"" + e.getKey() + "\"");
            }
        }
        if (expectedTests.isEmpty()) {
            problems.add("the test list is empty: the annotation processor generated no tests");
        } else if (reported != expectedTests.size()) {
            problems.add(reported + " test(s) reported, but the test list holds " + expectedTests.size()
                    + ": some did not run " + expectedTests);
        }

        String summary = reported + " of " + expectedTests.size() + " listed tests reported " + categories;
        return new Verdict(problems.isEmpty(), summary, problems, head(evidence, MAX_EVIDENCE_LINES));
    }

    /**
     * Reads the test names from a JCStress {@code META-INF/TestList}: one test per line, each line
     * {@code JCTEST} followed by length-prefixed fields ({@code <length>S<text>}), the first of which is
     * the test's name.
     *
     * @param testList the file the annotation processor wrote
     * @return the test names, in file order
     * @throws IOException if the file cannot be read
     */
    public static List<String> readTestList(Path testList) throws IOException {
        List<String> names = new ArrayList<>();
        if (!Files.exists(testList)) {
            return names;
        }
        Pattern first = Pattern.compile("^JCTEST(\\d+)S");
        for (String line : Files.readAllLines(testList, StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            Matcher m = first.matcher(line);
            if (m.find()) {
                int length = Integer.parseInt(m.group(1));
                names.add(line.substring(m.end(), Math.min(line.length(), m.end() + length)));
            } else {
                names.add(line.strip());
            }
        }
        return names;
    }

    private static List<String> head(List<String> lines, int n) {
        return lines.size() <= n ? lines : lines.subList(0, n);
    }

    private static List<String> tail(List<String> lines, int n) {
        return lines.subList(Math.max(0, lines.size() - n), lines.size());
    }
}
