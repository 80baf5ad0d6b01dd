package org.mbcache.stress;

import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
import static org.mbcache.stress.Keys.VALUE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.mbcache.CacheEntry;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.I_Result;
import org.mbcache.testing.Backend;

/**
 * {@code findFirst} vs {@code close()}: the key has two reusable entries, the older O held by the
 * test, the newer N held by nobody; one actor looks the key up while the other closes the cache. A
 * lookup that overlaps {@code close()} answers as it would have before it (N, the newest) or says
 * the cache is closed; it never skips N for O, which no delete or reclaim made the newest (the
 * Caffeine backend did: the close dropped the key's group, the pin of the unheld N failed on the
 * missing group, and the walk went on to O, whose lock-free reference needed no group). The same
 * walk serves {@code findNext}.
 *
 * <p>Result: {@code r1} = the lookup found N (1), found O (2), found nothing (0), or was told the
 * cache is closed (-1).
 */
@Outcome(id = "1", expect = ACCEPTABLE, desc = "The lookup ran before the close, or found N before the close dropped it.")
@Outcome(id = "-1", expect = ACCEPTABLE, desc = "The lookup was told the cache is closed.")
@Outcome(id = "2", expect = FORBIDDEN, desc = "The lookup skipped the newest entry, which nobody removed, for the older one.")
@Outcome(expect = FORBIDDEN, desc = "Any other answer (a miss of a key that was cached until the close).")
public final class LookupVsClose {

    private LookupVsClose() {
    }

    /** The steps of the race: O (older, held by the test) and N (newer, unheld) under one key. */
    abstract static class Race extends CacheRace {
        Race(Backend backend) {
            super(backend);
            cache.create(KEY, OTHER_VALUE, true);
            if (cache.get(KEY, OTHER_VALUE) == null) { // O stays held: the close drops it, nobody releases it
                throw new IllegalStateException("setup: the older entry is not cached");
            }
            cache.create(KEY, VALUE, true);
        }

        void lookUp(I_Result r) {
            try {
                CacheEntry found = cache.findFirst(KEY);
                r.r1 = found == null ? 0 : found.value() == VALUE ? 1 : found.value() == OTHER_VALUE ? 2 : 3;
            } catch (IllegalStateException closed) {
                r.r1 = -1;
            }
        }

        void close() {
            cache.close();
        }
    }

    /** The race on the kernel port with the in-progress request list. */
    @JCStressTest
    @JCStressMeta(LookupVsClose.class)
    @State
    public static class RequestList extends Race {
        /** A fresh cache holding O (held) and N (unheld) under one key. */
        public RequestList() {
            super(Backend.MBCACHE_REQUEST_LIST);
        }

        /** Looks the key up (what it found stays held: the close drops it). */
        @Actor
        public void reader(I_Result r) {
            lookUp(r);
        }

        /** Closes the cache. */
        @Actor
        public void closer() {
            close();
        }
    }

    /** The race on the kernel port with mainline's allocate-first create. */
    @JCStressTest
    @JCStressMeta(LookupVsClose.class)
    @State
    public static class AllocateFirst extends Race {
        /** A fresh cache holding O (held) and N (unheld) under one key. */
        public AllocateFirst() {
            super(Backend.MBCACHE_ALLOCATE_FIRST);
        }

        /** Looks the key up (what it found stays held: the close drops it). */
        @Actor
        public void reader(I_Result r) {
            lookUp(r);
        }

        /** Closes the cache. */
        @Actor
        public void closer() {
            close();
        }
    }

    /** The race on the kernel port in the compact layout. */
    @JCStressTest
    @JCStressMeta(LookupVsClose.class)
    @State
    public static class Compact extends Race {
        /** A fresh cache holding O (held) and N (unheld) under one key. */
        public Compact() {
            super(Backend.COMPACT);
        }

        /** Looks the key up (what it found stays held: the close drops it). */
        @Actor
        public void reader(I_Result r) {
            lookUp(r);
        }

        /** Closes the cache. */
        @Actor
        public void closer() {
            close();
        }
    }

    /** The race on the Caffeine backend. */
    @JCStressTest
    @JCStressMeta(LookupVsClose.class)
    @State
    public static class Caffeine extends Race {
        /** A fresh cache holding O (held) and N (unheld) under one key. */
        public Caffeine() {
            super(Backend.CAFFEINE);
        }

        /** Looks the key up (what it found stays held: the close drops it). */
        @Actor
        public void reader(I_Result r) {
            lookUp(r);
        }

        /** Closes the cache. */
        @Actor
        public void closer() {
            close();
        }
    }
}
