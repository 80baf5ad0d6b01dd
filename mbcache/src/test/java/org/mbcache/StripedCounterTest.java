package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.mbcache.contract.ConcurrentRounds;

/** The striped counter: an exact sum once quiet, and an estimate that trails it by less than its slack. */
class StripedCounterTest {

    @Test
    void theSumIsExactAfterConcurrentAdds() throws Exception {
        StripedCounter counter = new StripedCounter(16);
        ConcurrentRounds.together(
                () -> { for (int i = 0; i < 100_000; i++) counter.add(1); },
                () -> { for (int i = 0; i < 100_000; i++) counter.add(1); },
                () -> { for (int i = 0; i < 50_000; i++) counter.add(-1); });
        assertEquals(150_000, counter.sum());
    }

    @Test
    void theEstimateNeverExceedsTheSumAndTrailsItByLessThanTheSlack() throws Exception {
        StripedCounter counter = new StripedCounter(64);
        ConcurrentRounds.together(
                () -> { for (int i = 0; i < 10_007; i++) counter.add(1); },
                () -> { for (int i = 0; i < 3_001; i++) { counter.add(2); counter.add(-1); } });
        long sum = counter.sum();
        assertTrue(counter.estimate() <= sum, counter.estimate() + " > " + sum);
        assertTrue(sum - counter.estimate() <= counter.slack(), "trails by " + (sum - counter.estimate()));
    }

    @Test
    void withABatchOfOneTheEstimateIsExact() {
        StripedCounter counter = new StripedCounter(1);
        for (int i = 0; i < 37; i++) {
            counter.add(1);
        }
        counter.add(-5);
        assertEquals(32, counter.estimate());
        assertEquals(0, counter.slack());
    }

    @Test
    void theEstimateFollowsNegativeCells() {
        StripedCounter counter = new StripedCounter(8);
        counter.add(-20);
        assertTrue(counter.estimate() <= -20 && counter.estimate() > -20 - 8);
    }

    @Test
    void resetReturnsToZero() {
        StripedCounter counter = new StripedCounter(4);
        counter.add(100);
        counter.reset();
        assertEquals(0, counter.sum());
        assertEquals(0, counter.estimate());
    }

    @Test
    void aBatchThatIsNotAPowerOfTwoIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> new StripedCounter(3));
        assertThrows(IllegalArgumentException.class, () -> new StripedCounter(0));
    }
}
