package org.mbcache.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Method;
import java.util.List;
import org.jetbrains.lincheck.datastructures.BooleanGen;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.Validate;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.junit.jupiter.api.Test;
import org.mbcache.CacheEntry;
import org.mbcache.DedupCache;
import org.mbcache.testing.MemoryPressureSignal;

/**
 * Lincheck linearizability checks of a {@link DedupCache} against {@link DedupCacheSpecification}, on a
 * key space small enough to collide all the time (keys 1..2, values 1..2, so at most four pairs, two
 * per key).
 *
 * <p>Every operation gives back the references it takes before it returns, so its result is a plain
 * value. Operations whose results depend on references held by operations still in flight are left
 * out on purpose, since no sequential order explains them: a bare {@code deleteOrGet} (it hands back an
 * entry another operation holds for an instant), {@code shrink} (it skips held entries) and a
 * {@code findNext} walk (not atomic by design). Instead {@link #delete} runs ext4's whole
 * {@code deleteOrGet}/{@code waitUnused}/{@code release} loop, which always ends with the pair gone,
 * and {@link #entryCountMatchesLiveEntries} checks {@code size()} once the threads are done.
 *
 * <p>Lincheck's model checker assumes sequential consistency, so it cannot see a missing
 * {@code volatile}; the JCStress tests in {@code src/main/java} cover memory ordering.
 */
@Param(name = "key", gen = IntGen.class, conf = "1:2")
@Param(name = "value", gen = LongGen.class, conf = "1:2")
@Param(name = "reusable", gen = BooleanGen.class)
public abstract class DedupCacheLincheckTest {

    static {
        // A pass on heap pressure would free unheld pairs under the scenarios and the size check.
        MemoryPressureSignal.silence();
    }

    /** Scenarios per check: small, so each test stays well under 30 s on 2 cores. */
    static final int ITERATIONS = 4;

    /** The cache under test; Lincheck builds a fresh test instance for every scenario. */
    private final DedupCache cache = open();

    /**
     * Builds the cache under test.
     *
     * @return a new, empty cache
     */
    protected abstract DedupCache open();

    /**
     * Inserts the pair unless it is cached. A create may also be refused because a twin create of the
     * same pair is still in progress (the contract allows it: the request list refuses without
     * waiting), and then a lookup right after it can miss the pair; no sequential order explains that
     * history. So a refused create is retried until a lookup finds the pair (the refusal is then
     * explained: the pair was cached) or a retry inserts it itself.
     *
     * @return whether this call inserted it
     */
    @Operation
    public boolean create(@Param(name = "key") int key, @Param(name = "value") long value,
            @Param(name = "reusable") boolean reusable) {
        while (!cache.create(key, value, reusable)) {
            CacheEntry cached = cache.get(key, value);
            if (cached != null) {
                cache.release(cached);
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }

    /**
     * Looks up exactly this pair and releases it again.
     *
     * @return whether it was cached
     */
    @Operation
    public boolean get(@Param(name = "key") int key, @Param(name = "value") long value) {
        CacheEntry entry = cache.get(key, value);
        if (entry == null) {
            return false;
        }
        cache.release(entry);
        return true;
    }

    /**
     * The newest reusable entry with this key, released again.
     *
     * @return its value, or -1 if there is none
     */
    @Operation
    public long findFirst(@Param(name = "key") int key) {
        CacheEntry entry = cache.findFirst(key);
        if (entry == null) {
            return -1;
        }
        long value = entry.value();
        cache.release(entry);
        return value;
    }

    /**
     * Sets or clears the reusable flag of the pair, if it is cached, holding a reference meanwhile.
     *
     * @return whether the pair was cached
     */
    @Operation
    public boolean setReusable(@Param(name = "key") int key, @Param(name = "value") long value,
            @Param(name = "reusable") boolean reusable) {
        CacheEntry entry = cache.get(key, value);
        if (entry == null) {
            return false;
        }
        entry.setReusable(reusable);
        cache.release(entry);
        return true;
    }

    /**
     * ext4's delete of a block's cache entry: {@code deleteOrGet}; while somebody holds the entry, wait
     * until it is unused, release it and try again.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    @Operation
    public void delete(@Param(name = "key") int key, @Param(name = "value") long value) throws InterruptedException {
        CacheEntry held;
        while ((held = cache.deleteOrGet(key, value)) != null) {
            cache.waitUnused(held);
            cache.release(held);
        }
    }

    /** Once all threads are done, {@code size()} counts exactly the pairs a lookup finds. */
    @Validate
    public void entryCountMatchesLiveEntries() {
        long live = 0;
        for (int key = 1; key <= 2; key++) {
            for (long value = 1; value <= 2; value++) {
                if (get(key, value)) {
                    live++;
                }
            }
        }
        assertEquals(live, cache.size(), "size() must equal the number of live entries");
    }

    /**
     * Interleavings the model checker tries per scenario: enough to find a two-thread race in these
     * short scenarios, few enough to keep each backend's test under 30 s on 2 cores.
     */
    private static final int MODEL_CHECKING_INVOCATIONS = 60;

    /** Explores interleavings systematically, switching threads at every shared-memory access. */
    @Test
    void modelChecking() {
        new ModelCheckingOptions()
                .iterations(ITERATIONS)
                .invocationsPerIteration(MODEL_CHECKING_INVOCATIONS)
                .threads(2)
                .actorsPerThread(2)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(DedupCacheSpecification.class)
                .addCustomScenario(createWhileDeleting())
                .addCustomScenario(lookupWhileDeleting())
                .addCustomScenario(twinCreates())
                .check(getClass());
    }

    /**
     * {@code create(1, 1) || delete(1, 1)}, then {@code get(1, 1)}: a delete that catches the entry while
     * the create still holds its initial reference must be woken by the create's final release (random
     * scenarios find this only now and then, so it is always run).
     */
    static ExecutionScenario createWhileDeleting() {
        return new ExecutionScenario(
                List.of(),
                List.of(List.of(actor("create", 1, 1L, true)), List.of(actor("delete", 1, 1L))),
                List.of(actor("get", 1, 1L)),
                null);
    }

    /** {@code create(1, 1)}, then {@code get(1, 1) || delete(1, 1)}, then {@code get(1, 1)}: a delete must wait out a lookup's reference. */
    static ExecutionScenario lookupWhileDeleting() {
        return new ExecutionScenario(
                List.of(actor("create", 1, 1L, true)),
                List.of(List.of(actor("get", 1, 1L)), List.of(actor("delete", 1, 1L))),
                List.of(actor("get", 1, 1L)),
                null);
    }

    /**
     * {@code create(1, 1) || [create(1, 1), get(1, 1)]}: one create wins, and the other's refusal is
     * explained by the pair being cached, so the lookup after it finds the pair ({@link #create}
     * waits out a twin still in progress).
     */
    static ExecutionScenario twinCreates() {
        return new ExecutionScenario(
                List.of(),
                List.of(List.of(actor("create", 1, 1L, true)),
                        List.of(actor("create", 1, 1L, true), actor("get", 1, 1L))),
                List.of(),
                null);
    }

    private static Actor actor(String operation, Object... arguments) {
        for (Method m : DedupCacheLincheckTest.class.getMethods()) {
            if (m.getName().equals(operation) && m.getParameterCount() == arguments.length) {
                return new Actor(m, List.of(arguments));
            }
        }
        throw new IllegalArgumentException("no operation " + operation + "/" + arguments.length);
    }

    /** Runs scenarios on real threads, for interleavings the model checker's switch points miss. */
    @Test
    void stress() {
        new StressOptions()
                .iterations(ITERATIONS)
                .invocationsPerIteration(200)
                .threads(2)
                .actorsPerThread(2)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(DedupCacheSpecification.class)
                .check(getClass());
    }
}
