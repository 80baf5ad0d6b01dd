package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
import static org.mbcache.stress.Keys.VALUE;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * A miss the wide key filter answers vs the create of that key (misses answered without the
 * chain). The kernel port's bucket has two key filters: the head word's, which comes in one load with
 * the version, and a wide one in an array of its own, whose "no" counts only once the version it was
 * read under is validated. Here the chain holds the decoy key of {@link KeyFilterRace}, so a lookup
 * of {@code KEY} before its create passes the first filter and is turned away by the second.
 *
 * <p>Message passing through the cache: one actor creates P = ({@code KEY}, {@code VALUE}), then a
 * flag F = (the decoy key, {@code OTHER_VALUE}); the other looks F up by {@code get}, then {@code KEY}
 * by {@code findFirst}. A reader that saw F created must find P, created before it: a wide filter read
 * from before P's create under a version from after F's would miss it. One bucket
 * ({@code bucketBits} 0), a fixed hash seed (the decoy depends on it).
 *
 * <p>Kernel port only: the Caffeine backend has no key filters.
 *
 * <p>Result: {@code r1} = the reader found F (1) or not (0); {@code r2} = it found P (1) or not (0);
 * {@code r3} = the arbiter's {@code findFirst} of {@code KEY} found P (1) or not (0).
 */
@Outcome(id = "0, 0, 1", expect = ACCEPTABLE, desc = "The reader ran before both creates.")
@Outcome(id = "0, 1, 1", expect = ACCEPTABLE, desc = "The reader looked for F before its create and found P.")
@Outcome(id = "1, 1, 1", expect = ACCEPTABLE, desc = "The reader ran after both creates.")
@Outcome(id = "1, 0, 1", expect = FORBIDDEN, desc = "The reader saw F but missed P, created before it.")
@Outcome(expect = FORBIDDEN, desc = "P lost: the filters lack a key the chain holds.")
public final class FilteredMissVsCreate {

    private FilteredMissVsCreate() {
    }

    /** The race on the kernel port, the decoy cached and nobody holding anything. */
    @JCStressTest
    @JCStressMeta(FilteredMissVsCreate.class)
    @State
    public static class KernelPort extends KeyFilterRace {
        /** A one-bucket cache holding (the decoy, {@code VALUE}). */
        public KernelPort() {
            cache.create(DECOY, VALUE, true);
        }

        /** Creates P, then F. */
        @Actor
        public void creator() {
            cache.create(KEY, VALUE, true);
            cache.create(DECOY, OTHER_VALUE, true);
        }

        /** Looks F up, then P. */
        @Actor
        public void reader(III_Result r) {
            r.r1 = isCached(DECOY, OTHER_VALUE);
            r.r2 = isKeyCached(KEY);
        }

        /** P must be findable once both actors are done; closes the cache. */
        @Arbiter
        public void check(III_Result r) {
            r.r3 = isKeyCached(KEY);
            cache.close();
        }
    }
}
