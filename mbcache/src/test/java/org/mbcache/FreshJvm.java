package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A driver's {@code main} run in a fresh JVM on this JVM's class path, for what happens once per
 * process (class initialization, the pressure registry's thresholds) and so cannot be watched in
 * the JVM the tests share. Skipped where the tests run on the module path.
 */
final class FreshJvm {
    private FreshJvm() {
    }

    /**
     * Runs {@code driver} with {@code jvmOptions} and {@code args} and answers what it printed
     * (standard output and error together), once it has ended with status 0 within two minutes.
     */
    static String run(List<String> jvmOptions, Class<?> driver, String... args) throws IOException, InterruptedException {
        assumeFalse(FreshJvm.class.getModule().isNamed(), "the driver runs on the class path of this JVM");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), driver.getName()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getOutputStream().close();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(2, TimeUnit.MINUTES), "the driver JVM ends");
        assertEquals(0, process.exitValue(), output);
        return output;
    }
}
