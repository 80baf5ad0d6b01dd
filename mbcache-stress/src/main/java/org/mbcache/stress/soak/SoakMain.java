package org.mbcache.stress.soak;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.mbcache.testing.Backend;

/**
 * Runs the soak from the command line, for as long as asked, and exits with status 1 if any check
 * failed (status 2 for bad arguments).
 *
 * <pre>
 * java -cp mbcache-stress/target/jcstress.jar org.mbcache.stress.soak.SoakMain --seconds 600 --threads 8
 * </pre>
 *
 * <p>Options: {@code --seconds N} (total wall time, shared evenly by the backends and phases run;
 * default 60), {@code --threads N} (default {@link SoakConfig#defaultThreads()}), {@code --seed N},
 * {@code --backend NAME} and {@code --phase NAME} (repeatable; default all, see {@link Backend} and
 * {@link Soak.Phase}). Prints each phase's report as it ends, then one {@code soak total:} line.
 */
public final class SoakMain {

    private SoakMain() {
    }

    /** A backend by its label, as the bench names it ({@code mbcache-allocfirst}), or by its enum name. */
    private static Backend backendNamed(String name) {
        for (Backend backend : Backend.values()) {
            if (backend.name().equalsIgnoreCase(name)) {
                return backend;
            }
        }
        return Backend.byLabel(name);
    }

    /**
     * Parses the options, runs the soak and exits.
     *
     * @param args the options above
     * @throws InterruptedException if the main thread is interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        long seconds = 60;
        int threads = SoakConfig.defaultThreads();
        long seed = System.nanoTime();
        Set<Backend> backends = EnumSet.noneOf(Backend.class);
        Set<Soak.Phase> phases = EnumSet.noneOf(Soak.Phase.class);
        try {
            for (int i = 0; i < args.length; i++) {
                String option = args[i];
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(option + " needs a value");
                }
                String value = args[++i];
                switch (option) {
                    case "--seconds" -> seconds = Long.parseLong(value);
                    case "--threads" -> threads = Integer.parseInt(value);
                    case "--seed" -> seed = Long.parseLong(value);
                    case "--backend" -> backends.add(backendNamed(value));
                    case "--phase" -> phases.add(Soak.Phase.valueOf(value.toUpperCase(Locale.ROOT)));
                    default -> throw new IllegalArgumentException("unknown option " + option);
                }
            }
            if (seconds < 1) {
                throw new IllegalArgumentException("--seconds must be at least 1");
            }
        } catch (IllegalArgumentException bad) {
            System.err.println("soak: " + bad.getMessage());
            System.err.println("usage: SoakMain [--seconds N] [--threads N] [--seed N] [--backend "
                    + List.of(Backend.values()) + "]... [--phase " + List.of(Soak.Phase.values()) + "]...");
            System.exit(2);
            return;
        }
        if (backends.isEmpty()) {
            backends = EnumSet.allOf(Backend.class);
        }
        if (phases.isEmpty()) {
            phases = EnumSet.allOf(Soak.Phase.class);
        }
        SoakConfig config = SoakConfig.of(threads, seed);
        long millis = Math.max(100, seconds * 1000 / ((long) backends.size() * phases.size()));
        long passed = 0;
        long failed = 0;
        List<String> failing = new ArrayList<>();
        for (Backend backend : backends) {
            for (Soak.Phase phase : phases) {
                Tally tally = Soak.run(backend, phase, millis, config);
                tally.report(backend + " " + phase + ": " + threads + " threads, " + millis + " ms, seed " + seed)
                        .forEach(System.out::println);
                passed += tally.passedCount();
                failed += tally.failedCount();
                if (tally.failedCount() > 0) {
                    failing.add(backend + " " + phase);
                }
            }
        }
        System.out.println("soak total: " + passed + " passed, " + failed + " failed"
                + (failing.isEmpty() ? "" : " (in " + String.join(", ", failing) + ")"));
        System.exit(failed == 0 ? 0 : 1);
    }
}
