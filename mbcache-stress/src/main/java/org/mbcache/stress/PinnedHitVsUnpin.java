package org.mbcache.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;
import static org.mbcache.stress.Keys.KEY;
import static org.mbcache.stress.Keys.OTHER_KEY;
import static org.mbcache.stress.Keys.OTHER_VALUE;
import static org.mbcache.stress.Keys.VALUE;
import static org.mbcache.stress.Keys.filler;

import org.mbcache.CacheEntry;
import org.mbcache.caffeine.CaffeineDedupCache;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * The Caffeine backend's lock-free hit vs its lazy unpin. Caffeine evicts by its own policy, so
 * {@link CaffeineDedupCache} keeps a held entry out of its reach by pinning it: a pinned entry's key
 * group weighs 0, and Caffeine never evicts a group of weight 0. The invariant is "held implies
 * pinned": a lookup takes its reference without a lock only from a pinned entry (one CAS of the word
 * that holds the count and the PINNED bit, from (c, PINNED) to (c + 1, PINNED)); a release leaves the
 * entry pinned and queues it on the lazy-unpin stack; a drain of that stack unpins it inside a compute
 * on its key by a CAS of the same word from exactly (1, PINNED) to (1), after which Caffeine weighs the
 * group by its entries again and may evict it. Either the lookup's CAS or the unpin's wins; the lookup
 * that loses pins the entry again under the key's lock. Each test here makes the unpin certain to be
 * followed by an eviction of the entry's group (the group alone weighs more than the bound), so a
 * broken protocol shows as a held entry evicted, not as a matter of Caffeine's choice of victim.
 *
 * <p>A = ({@code KEY}, {@code VALUE}), with unheld siblings of the same key. The holder looks A up with
 * {@code get} and keeps it; the other actor starts the drain that unpins A:
 * <ul>
 *   <li>{@link ByRelease}: bound 2; A, held by the test, and two siblings (the group weighs 0, three
 *       entries). The other actor gives back the test's reference: a release to the cache's own
 *       reference queues A, and with the cache over its bound the drain runs at once, on the
 *       releasing thread (the executor is {@code Runnable::run}). The holder's CAS meets A at count 2
 *       (before the release) or 1 (between the release and the unpin).</li>
 *   <li>{@link ByCreate}: bound 1; A was looked up and released once, so it is pinned, queued, and
 *       held by nobody: the holder's lookup is the lock-free CAS from (1, PINNED). The other actor
 *       creates a sibling of A, which takes the cache over its bound: that create drains the stack
 *       (unpinning A) and then, at twice the bound, runs the synchronous pass, which frees the
 *       sibling if A is held by then, and A itself if the holder has pinned it again under the lock
 *       but not yet taken its reference.</li>
 * </ul>
 * The arbiter checks A while it is still held, gives it back, and then creates a pair of another key,
 * which drains the stack and lets Caffeine evict down to the bound.
 *
 * <p>Result: {@code r1} = the holder found A (1) or not (0); {@code r2} = with A held, {@code get} of
 * A's pair answers an entry equal to it (1), another or none (0), nothing held (-1); {@code r3} =
 * {@code size()} once A is given back, or -99 if the cache refused that release; {@code r4} =
 * {@code size()} after the arbiter's create of another key. {@code r2}, {@code r3} and {@code r4} are
 * all -98 if a call of the arbiter threw the cache's {@link AssertionError}: its eviction listener saw
 * Caffeine evict an entry somebody held, and the cache rethrows that breach from every later call.
 *
 * <p>The forbidden outcomes, and the bugs that produce them (each bug named here was put into the
 * library on purpose, and a sanity run of these tests at 1 s per iteration reported the outcome
 * named):
 * <ul>
 *   <li>{@code r2 = r3 = r4 = -98}: Caffeine evicted A while the holder held it. Produced by an unpin
 *       that clears PINNED without checking that only the cache holds the entry (both tests, in most
 *       trials), and by a lock-free acquire that checks PINNED and then increments the count by a
 *       separate step instead of one CAS of the whole word, so that an unpin can come in between
 *       (both tests, a few trials in a thousand). An acquire that ignores PINNED altogether is caught
 *       here too ({@link ByCreate}); in {@link ByRelease} it already breaks the constructor's own
 *       lookup, an error of the test.</li>
 *   <li>{@code r1 = 1, r2 = 0}: the holder holds A, but the cache no longer answers A for its pair.
 *       Produced, with {@code r3 = -99}, by that split acquire when its increment lands on an entry
 *       the synchronous pass has just unpinned and freed ({@link ByCreate}).</li>
 *   <li>{@code r3 = -99}: the cache refused the holder's release: A's count had been dropped to 0
 *       (freed or evicted) while it was held; seen with the split acquire above.</li>
 *   <li>{@link ByCreate}, {@code r4 = 2}, and {@link ByRelease}, {@code r3 = 3}: after every reference
 *       was given back, A stayed pinned for good, so its group weighs 0 and the cache stays above its
 *       bound. Produced by a drain that does not clear an entry's queued flag when it takes the entry
 *       off the stack: when the drain passes over A because the holder holds it, A's last release
 *       finds the flag still set and never queues A again.</li>
 * </ul>
 * Only the Caffeine backend pins; the same steps on the kernel port are a lookup against a reclaim
 * pass, which {@link ReclaimVsUser} and {@link HitVsReclaim} cover.
 */
public final class PinnedHitVsUnpin {

    /** What the arbiter writes when the cache rethrows a recorded breach (a held entry evicted). */
    static final int BREACH = -98;

    private PinnedHitVsUnpin() {
    }

    /** The steps of the race on a cache of the given bound; the subclass fills it. */
    abstract static class Race extends CacheRace {
        CacheEntry held;

        Race(long maxEntries) {
            super(CaffeineDedupCache.builder().maxEntries(maxEntries).executor(Runnable::run).build());
        }

        void hold(IIII_Result r) {
            held = cache.get(KEY, VALUE);
            r.r1 = found(held);
        }

        void settle(IIII_Result r) {
            try {
                r.r2 = stillCached(held);
                r.r3 = sizeAfterReleasing(held);
                cache.create(OTHER_KEY, VALUE, true);
                r.r4 = size();
            } catch (AssertionError breach) {
                r.r2 = BREACH;
                r.r3 = BREACH;
                r.r4 = BREACH;
            }
            cache.close();
        }
    }

    /** The unpin comes from the release of A's last other holder, on a cache over its bound. */
    @JCStressTest
    @Outcome(id = "1, 1, 0, 1", expect = ACCEPTABLE,
            desc = "The holder's CAS first (at count 2, or at 1 before the unpin; or it pinned A again under the lock): A stays pinned and cached; its last release unpins it and Caffeine evicts its group.")
    @Outcome(id = "0, -1, 0, 1", expect = ACCEPTABLE,
            desc = "The unpin first: Caffeine evicts A's group, and the lookup misses A.")
    @Outcome(id = "[-0-9]+, -98, -98, -98", expect = FORBIDDEN,
            desc = "Caffeine evicted A while it was held: the unpin or the lock-free acquire broke 'held implies pinned'.")
    @Outcome(id = "1, 0, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "A, held, is no longer cached.")
    @Outcome(id = "[-0-9]+, [-0-9]+, -99, [-0-9]+", expect = FORBIDDEN, desc = "A was freed under its holder: the release was refused.")
    @Outcome(id = "[-0-9]+, [-0-9]+, [1-9], [-0-9]+", expect = FORBIDDEN,
            desc = "A's group, over the bound, survived the last release: A was left pinned.")
    @Outcome(expect = FORBIDDEN, desc = "Any other combination breaks reference counting or the entry count.")
    @State
    public static class ByRelease extends Race {
        private final CacheEntry testsReference;

        /** Bound 2; A held by the test, then two siblings: three entries in a group that weighs 0. */
        public ByRelease() {
            super(2);
            cache.create(KEY, VALUE, true);
            testsReference = cache.get(KEY, VALUE);
            cache.create(KEY, OTHER_VALUE, true);
            cache.create(KEY, filler(0), true);
        }

        /** Looks A up and keeps holding it. */
        @Actor
        public void holder(IIII_Result r) {
            hold(r);
        }

        /** Gives back the test's reference: A goes on the unpin stack, which is drained at once. */
        @Actor
        public void releaser() {
            cache.release(testsReference);
        }

        /** Checks A while held, gives it back, creates a pair of another key, and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }

    /** The unpin comes from a create that takes the cache over its bound. */
    @JCStressTest
    @Outcome(id = "1, 1, 1, 1", expect = ACCEPTABLE,
            desc = "The holder's CAS first (or it pinned A again under the lock): A stays cached, the synchronous pass frees the new sibling, and A's last release lets it be evicted.")
    @Outcome(id = "0, -1, 0, 1", expect = ACCEPTABLE,
            desc = "The unpin first: Caffeine evicts A's group, the new sibling with it, and the lookup misses A.")
    @Outcome(id = "0, -1, 1, 1", expect = ACCEPTABLE,
            desc = "The holder pinned A again under the lock, but before its CAS the synchronous pass freed A, pinned yet unheld, as the oldest sibling: the lookup misses A, the new sibling stays.")
    @Outcome(id = "[-0-9]+, -98, -98, -98", expect = FORBIDDEN,
            desc = "Caffeine evicted A while it was held: the unpin or the lock-free acquire broke 'held implies pinned'.")
    @Outcome(id = "1, 0, [-0-9]+, [-0-9]+", expect = FORBIDDEN, desc = "A, held, is no longer cached.")
    @Outcome(id = "[-0-9]+, [-0-9]+, -99, [-0-9]+", expect = FORBIDDEN, desc = "A was freed under its holder: the release was refused.")
    @Outcome(id = "[-0-9]+, [-0-9]+, [-0-9]+, [2-9]", expect = FORBIDDEN,
            desc = "Over the bound of 1 after everything was released and another create: A was left pinned.")
    @Outcome(expect = FORBIDDEN, desc = "Any other combination breaks reference counting or the entry count.")
    @State
    public static class ByCreate extends Race {
        /** Bound 1; A looked up and released: pinned, queued, held by nobody. */
        public ByCreate() {
            super(1);
            cache.create(KEY, VALUE, true);
            cache.release(cache.get(KEY, VALUE));
        }

        /** Looks A up (the lock-free CAS, unless the unpin came first) and keeps holding it. */
        @Actor
        public void holder(IIII_Result r) {
            hold(r);
        }

        /** Creates a sibling of A: over the bound, so the unpin stack is drained. */
        @Actor
        public void creator() {
            cache.create(KEY, OTHER_VALUE, true);
        }

        /** Checks A while held, gives it back, creates a pair of another key, and closes the cache. */
        @Arbiter
        public void check(IIII_Result r) {
            settle(r);
        }
    }
}
