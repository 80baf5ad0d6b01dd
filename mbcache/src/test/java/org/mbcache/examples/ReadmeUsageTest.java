package org.mbcache.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mbcache.MbCache;

/**
 * The README's usage snippet, as a newcomer would paste it: read from README.md between its markers,
 * compiled against the library with javac, and run. The README is the only copy, so it cannot drift.
 */
class ReadmeUsageTest {

    private static final String BEGIN = "<!-- usage-snippet:begin -->";
    private static final String END = "<!-- usage-snippet:end -->";

    @TempDir
    Path dir;

    /** The README at the root of the project, found from the module's working directory. */
    private static Path readme() {
        for (Path at = Path.of("").toAbsolutePath(); at != null; at = at.getParent()) {
            if (Files.isRegularFile(at.resolve("README.md")) && Files.isDirectory(at.resolve("mbcache"))) {
                return at.resolve("README.md");
            }
        }
        throw new AssertionError("README.md not found above " + Path.of("").toAbsolutePath());
    }

    /** The Java code between the markers, without the Markdown fence. */
    static String snippet(String readme) {
        int begin = readme.indexOf(BEGIN);
        int end = readme.indexOf(END);
        assertTrue(begin >= 0 && end > begin, "README.md has the usage-snippet markers, in order");
        String fenced = readme.substring(begin + BEGIN.length(), end).strip();
        assertTrue(fenced.startsWith("```java\n") && fenced.endsWith("\n```"), "the snippet is one java block");
        return fenced.substring("```java\n".length(), fenced.length() - "\n```".length());
    }

    @Test
    void theReadmeUsageSnippetCompilesAndRunsAsPrinted() throws Exception {
        String code = snippet(Files.readString(readme(), StandardCharsets.UTF_8));
        Path source = dir.resolve("QuickStart.java");
        Files.writeString(source, code, StandardCharsets.UTF_8);
        Path classes = Files.createDirectories(dir.resolve("classes"));

        // The library's own classes are all the snippet may use: no test class, no other dependency.
        Path library = Path.of(MbCache.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        ToolProvider javac = ToolProvider.findFirst("javac").orElseThrow();
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        PrintStream report = new PrintStream(diagnostics, true, StandardCharsets.UTF_8);
        int status = javac.run(report, report, "-Xlint:all", "-Werror",
                "-classpath", library.toString(), "-d", classes.toString(), source.toString());
        assertEquals(0, status, () -> diagnostics.toString(StandardCharsets.UTF_8));

        assertEquals(List.of("shared block 7", "entries left 0"), runMain(classes, "QuickStart").lines().toList());
    }

    /** Runs {@code className}'s main with the library on its class loader's parent; what it printed. */
    private static String runMain(Path classes, String className) throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream stdout = System.out;
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
                ReadmeUsageTest.class.getClassLoader())) {
            Method main = loader.loadClass(className).getMethod("main", String[].class);
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            main.invoke(null, (Object) new String[0]);
        } finally {
            System.setOut(stdout);
        }
        return printed.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theSnippetIsFoundBetweenItsMarkers() throws IOException {
        String readme = "text\n" + BEGIN + "\n```java\nclass A {}\n```\n" + END + "\nmore";
        assertEquals("class A {}", snippet(readme));
    }
}
