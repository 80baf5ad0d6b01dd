package org.mbcache.stress.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.mbcache.testing.Backend;

/**
 * The soak run in the build: about 8.5 s per backend (34 s in all), each phase on its own, on 2
 * threads or one per processor. {@code SoakMain} runs the same for as long as asked.
 *
 * <p>Each test passes only if every invariant check of its phase held, and the checks it exists for
 * ran at least once (so a soak that silently did nothing cannot pass). The soak bounds every wait
 * itself and reports a stuck thread as a failure; the time-out is the last resort should the test
 * thread itself block.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SoakTest {

    private static final long SEED = Long.getLong("soak.seed", 20_261_201L);

    private static Tally soak(Backend backend, Soak.Phase phase, long millis) throws InterruptedException {
        int threads = SoakConfig.defaultThreads();
        Tally tally = Soak.run(backend, phase, millis, SoakConfig.of(threads, SEED));
        String report = String.join("\n", tally.report(backend + " " + phase + ": " + threads + " threads, "
                + millis + " ms, seed " + SEED));
        System.out.println(report);
        assertEquals(0, tally.failedCount(), report);
        assertTrue(tally.operationCount() > 0, "no operation ran\n" + report);
        return tally;
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void steadyLoadWithReclaimAndInterruptsLosesNothing(Backend backend) throws InterruptedException {
        Tally tally = soak(backend, Soak.Phase.STEADY, 4_000);
        assertTrue(tally.passedCount("size-equals-live") > 0);
        assertTrue(tally.passedCount("pair-deletable") > 0);
        assertTrue(tally.passedCount("held-entry-still-cached") > 0);
        assertEquals(1, tally.passedCount("empty-after-deleting-all"));
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void closeInTheMiddleOfTheLoadWakesEveryThreadAndFailsEveryLaterCall(Backend backend) throws InterruptedException {
        Tally tally = soak(backend, Soak.Phase.CLOSE_MID_LOAD, 1_500);
        assertTrue(tally.passedCount("close-completes") > 0);
        assertTrue(tally.passedCount("call-after-close-throws") > 0);
        assertTrue(tally.passedCount("close-wakes-waiters") > 0);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void executorThatDropsTasksLosesNothing(Backend backend) throws InterruptedException {
        Tally tally = soak(backend, Soak.Phase.DROPPING_EXECUTOR, 1_500);
        assertTrue(tally.faultCount("executor-drop") > 0);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void executorThatThrowsLosesNothing(Backend backend) throws InterruptedException {
        Tally tally = soak(backend, Soak.Phase.THROWING_EXECUTOR, 1_500);
        assertTrue(tally.faultCount("executor-throw") > 0);
    }
}
