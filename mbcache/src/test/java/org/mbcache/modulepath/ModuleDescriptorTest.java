package org.mbcache.modulepath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.module.ModuleDescriptor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mbcache.DedupCache;

/**
 * The module descriptor, checked where it matters: these tests run only in the build's module-path
 * execution, with the library loaded as the named module {@code org.mbcache}. The last one builds an
 * application module against the library's classes and runs it in a fresh JVM, as a user would.
 */
class ModuleDescriptorTest {

    private static final String MODULE = "org.mbcache";
    private static final String CAFFEINE = "com.github.benmanes.caffeine";
    private static final String MICROMETER = "micrometer.core";

    @TempDir
    Path dir;

    private static ModuleDescriptor descriptor() {
        return DedupCache.class.getModule().getDescriptor();
    }

    @Test
    void theLibraryRunsAsTheNamedModuleOrgMbcache() {
        assertEquals(MODULE, DedupCache.class.getModule().getName());
    }

    @Test
    void exportsTheThreeApiPackagesToEveryoneAndNothingElse() {
        Set<String> exported = descriptor().exports().stream()
                .peek(export -> assertTrue(!export.isQualified(), () -> export + " is qualified"))
                .map(ModuleDescriptor.Exports::source)
                .collect(Collectors.toSet());
        assertEquals(Set.of("org.mbcache", "org.mbcache.caffeine", "org.mbcache.micrometer"), exported);
    }

    @Test
    void needsCaffeineOnlyAtCompileTime() {
        assertEquals(Set.of(ModuleDescriptor.Requires.Modifier.STATIC), modifiersOfRequires(CAFFEINE));
    }

    @Test
    void needsMicrometerOnlyAtCompileTime() {
        assertEquals(Set.of(ModuleDescriptor.Requires.Modifier.STATIC), modifiersOfRequires(MICROMETER));
    }

    private static Set<ModuleDescriptor.Requires.Modifier> modifiersOfRequires(String module) {
        return descriptor().requires().stream()
                .filter(requires -> requires.name().equals(module))
                .findFirst()
                .orElseThrow()
                .modifiers();
    }

    @Test
    void anApplicationModuleBuildsAndRunsAgainstTheLibrary() throws Exception {
        String modulePath = System.getProperty("jdk.module.path");
        Path sources = dir.resolve("src");
        Path classes = dir.resolve("classes");
        write(sources.resolve("module-info.java"),
                "module app { requires org.mbcache; requires " + CAFFEINE + "; }");
        write(sources.resolve("app/Main.java"), String.join("\n",
                "package app;",
                "import org.mbcache.CacheEntry;",
                "import org.mbcache.CompactMbCache;",
                "import org.mbcache.DedupCache;",
                "import org.mbcache.MbCache;",
                "import org.mbcache.caffeine.CaffeineDedupCache;",
                "public final class Main {",
                "    public static void main(String[] args) {",
                "        for (DedupCache cache : new DedupCache[] {MbCache.create(4), CompactMbCache.create(4), CaffeineDedupCache.create(64)}) {",
                "            try (cache) {",
                "                if (!cache.create(7, 70, true)) throw new AssertionError(\"create\");",
                "                try (CacheEntry entry = cache.findFirst(7)) {",
                "                    if (entry.value() != 70) throw new AssertionError(\"findFirst\");",
                "                }",
                "                if (cache.deleteOrGet(7, 70) != null || cache.size() != 0) throw new AssertionError(\"delete\");",
                "            }",
                "        }",
                "        // The application requires no Micrometer, so none is resolved: the library runs without it.",
                "        if (ModuleLayer.boot().findModule(\"" + MICROMETER + "\").isPresent()) throw new AssertionError(\"micrometer\");",
                "        System.out.print(\"app ran on \" + MbCache.class.getModule().getName());",
                "    }",
                "}"));

        // java.util.spi.ToolProvider is in java.base: the library module needs to read nothing more.
        ToolProvider javac = ToolProvider.findFirst("javac").orElseThrow();
        int compiled = javac.run(System.out, System.err, "--module-path", modulePath, "-d", classes.toString(),
                sources.resolve("module-info.java").toString(), sources.resolve("app/Main.java").toString());
        assertEquals(0, compiled, "the application module compiles against the library's exports");

        Process app = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--module-path", modulePath + File.pathSeparator + classes, "--module", "app/app.Main")
                .redirectErrorStream(true)
                .start();
        app.getOutputStream().close();
        String output = new String(app.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(app.waitFor(2, TimeUnit.MINUTES), "the application JVM ends");
        assertEquals(0, app.exitValue(), output);
        assertEquals("app ran on " + MODULE, output);
    }

    private static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.write(file, List.of(text), StandardCharsets.UTF_8);
    }
}
