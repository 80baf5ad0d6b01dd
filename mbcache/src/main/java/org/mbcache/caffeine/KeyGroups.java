package org.mbcache.caffeine;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.RemovalListener;
import com.github.benmanes.caffeine.cache.Weigher;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The key groups of a {@link CaffeineDedupCache}: the Caffeine cache that maps each key to its
 * values, every compute function that changes a group, and the exact count of entries. A class of
 * its own so that everything that runs under a key's lock (inside a Caffeine compute) is in one
 * place, apart from the façade's contract and statistics.
 */
final class KeyGroups {

    /*
     * Layout. The Caffeine cache maps each 32-bit key (boxed) to that key's group: an immutable
     * array of its entries, newest first, the kernel's hash chain restricted to one key. A pair
     * therefore needs no composite key object: the int key finds the group, and the value is a
     * scan of a group that almost always holds one entry (and never more than chainCap unheld
     * ones). Groups are copy-on-write; every change to a group (insert, remove, pin, unpin) is an
     * asMap() atomic compute on its key, so all changes of one key are serialized by Caffeine's
     * per-key lock, while lookups read the current group without any lock through
     * Policy.getIfPresentQuietly. How a held entry is kept out of Caffeine's eviction is
     * PinnedEntry's argument.
     *
     * One held entry pins only itself. Caffeine's unit is the group, so while one entry of a key is
     * pinned the whole group weighs 0 and its unheld siblings are out of Caffeine's reach. They are
     * reclaimed here instead, one by one and oldest first: by the chain cap on every create of the
     * key (withoutOldestUnheld), and by the synchronous pass, which frees unheld siblings of pinned
     * groups (TrimSiblings; SiblingTracker picks the groups). Once its last entry is unpinned a
     * group is evicted whole by Caffeine, at most chainCap unheld entries at a time. A group holds
     * at most chainCap unheld entries plus the held ones, so the copy-on-write costs
     * O(chainCap + held) per create, not O(values the key has had).
     */

    /**
     * A group's weight: 0 while any of its entries is pinned (held by a caller now, or lately and not
     * yet unpinned), so that Caffeine's size eviction never takes it; its entry count otherwise.
     * Called by Caffeine inside the compute that produced the group, with the key's lock held; the
     * PINNED bits change only under that lock, so what it reads is what the compute left.
     */
    private static final Weigher<Integer, PinnedEntry[]> PINNED_GROUPS_WEIGH_NOTHING =
            (key, group) -> anyPinned(group) ? 0 : group.length;

    /**
     * Unpins, with the key's lock held, every entry of the group that only the cache holds, and
     * returns the group unchanged so that Caffeine re-weighs it: by its entry count if no entry is
     * pinned any more, else 0.
     */
    private static final BiFunction<Integer, PinnedEntry[], PinnedEntry[]> UNPIN_UNHELD = (key, group) -> {
        for (PinnedEntry entry : group) {
            entry.unpinIfUnheld();
        }
        return group;
    };

    private final Cache<Integer, PinnedEntry[]> cache;
    private final ConcurrentMap<Integer, PinnedEntry[]> map;
    private final Policy<Integer, PinnedEntry[]> policy;
    private final Policy.Eviction<Integer, PinnedEntry[]> eviction;
    /** The most values of one key that nobody holds. */
    private final int chainCap;
    /** Entries in the cache: incremented before an entry is visible, decremented when it leaves. */
    private final AtomicLong entryCount = new AtomicLong();
    /** Which groups can have siblings: counted by every insert that leaves a key two values. */
    private final SiblingTracker siblings;

    /**
     * @param maxEntries Caffeine's maximum weight: how many unheld entries the cache keeps
     * @param chainCap the most values of one key that nobody holds
     * @param maintenance runs Caffeine's maintenance
     * @param onEvicted Caffeine's eviction listener, called inside the removing compute
     */
    KeyGroups(long maxEntries, int chainCap, Executor maintenance,
            RemovalListener<Integer, PinnedEntry[]> onEvicted) {
        this.chainCap = chainCap;
        this.cache = Caffeine.newBuilder()
                .maximumWeight(maxEntries)
                .weigher(PINNED_GROUPS_WEIGH_NOTHING)
                .executor(maintenance)
                .evictionListener(onEvicted)
                .build();
        this.map = cache.asMap();
        this.policy = cache.policy();
        this.eviction = policy.eviction().orElseThrow();
        this.siblings = new SiblingTracker(this);
    }

    /** The sibling tracking of these groups, for the synchronous pass. */
    SiblingTracker siblings() {
        return siblings;
    }

    /** The exact number of entries in the cache. */
    long size() {
        return entryCount.get();
    }

    /** Uncounts entries that left the map outside a compute of ours (Caffeine's eviction). */
    void uncount(int entries) {
        entryCount.addAndGet(-entries);
    }

    /** The key's current group, read without a lock and without touching Caffeine's policy. */
    PinnedEntry[] current(Integer boxedKey) {
        return policy.getIfPresentQuietly(boxedKey);
    }

    /** Every current group, read from the map without Caffeine's eviction lock (weakly consistent). */
    Iterable<PinnedEntry[]> all() {
        return map.values();
    }

    /**
     * Reads Caffeine's eviction order, coldest group first, under Caffeine's eviction lock: the
     * function must only copy what it needs.
     */
    <T> T coldest(Function<Stream<Policy.CacheEntry<Integer, PinnedEntry[]>>, T> mappingFunction) {
        return eviction.coldest(mappingFunction);
    }

    /** Records an access of the key with Caffeine: its frequency and its place in the eviction order. */
    void recordAccess(Integer boxedKey) {
        cache.getIfPresent(boxedKey);
    }

    /** Runs Caffeine's pending maintenance (eviction) on this thread. */
    void cleanUp() {
        cache.cleanUp();
    }

    /** Drops the key's whole group (a create that {@code close()} overtook). */
    void remove(Integer boxedKey) {
        map.remove(boxedKey);
    }

    /** Drops every group and zeroes the count (close): idempotent. */
    void clear() {
        cache.invalidateAll();
        cache.cleanUp();
        entryCount.set(0);
    }

    // ---------------------------------------------------------------------------------------------
    // Group helpers (groups are immutable arrays, newest entry first)
    // ---------------------------------------------------------------------------------------------

    static int indexOfValue(PinnedEntry[] group, long value) {
        for (int i = 0; i < group.length; i++) {
            if (group[i].value == value) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Whether a group read without the key's lock holds a live entry of {@code value}. A lock-free
     * read may find an entry that a compute on the key has killed (count 0) and not yet taken out of
     * the group: a lookup already misses it, so the create that refuses a pair on this read must
     * not count it either (it goes on to its compute, which sees the group without it).
     */
    static boolean holdsLive(PinnedEntry[] group, long value) {
        int index = indexOfValue(group, value);
        return index >= 0 && group[index].count() > 0;
    }

    static int indexOf(PinnedEntry[] group, PinnedEntry entry) {
        for (int i = 0; i < group.length; i++) {
            if (group[i] == entry) {
                return i;
            }
        }
        return -1;
    }

    private static PinnedEntry[] prepend(PinnedEntry entry, PinnedEntry[] group) {
        if (group == null) {
            return new PinnedEntry[] {entry};
        }
        PinnedEntry[] grown = new PinnedEntry[group.length + 1];
        grown[0] = entry;
        System.arraycopy(group, 0, grown, 1, group.length);
        return grown;
    }

    /** The group without the entry at {@code index}, or {@code null} (the key leaves the map) if none remain. */
    private static PinnedEntry[] without(PinnedEntry[] group, int index) {
        if (group.length == 1) {
            return null;
        }
        PinnedEntry[] shrunk = new PinnedEntry[group.length - 1];
        System.arraycopy(group, 0, shrunk, 0, index);
        System.arraycopy(group, index + 1, shrunk, index, group.length - index - 1);
        return shrunk;
    }

    /** Whether the group weighs 0 in Caffeine (held implies pinned). */
    static boolean anyPinned(PinnedEntry[] group) {
        for (PinnedEntry entry : group) {
            if (entry.isPinned()) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------------------------------------
    // Pinning and unpinning
    // ---------------------------------------------------------------------------------------------

    /**
     * Takes a reference for a caller (kernel {@code atomic_inc_not_zero}): a lock-free CAS when the
     * entry is pinned (held now, or held recently and not yet unpinned), else a pin under the key's
     * lock, which Caffeine follows by re-weighing the group to 0 before the lock is released.
     *
     * @return {@code false} if the entry is dead (its count reached 0): it is invisible
     */
    boolean acquire(PinnedEntry entry) {
        for (;;) {
            int fast = entry.tryAcquirePinned();
            if (fast != 0) {
                return fast > 0;
            }
            // Unpinned (count 1): pin it under the key's lock (the entry is its own remapping
            // function: nothing allocated here), then take the reference by the lock-free CAS. An
            // unpin drain may get in between: then the CAS sees it unpinned again and this repeats.
            PinnedEntry[] group = map.computeIfPresent(entry.boxedKey, entry);
            if (group == null || indexOf(group, entry) < 0) {
                return false; // no longer cached (removed, or the cache closed)
            }
        }
    }

    /**
     * One compute on the key ({@link #UNPIN_UNHELD}) that unpins every entry of its group only the
     * cache holds, after which Caffeine weighs the group again by its entry count (unless another
     * entry still pins it), so its eviction can take it.
     */
    void unpinUnheld(Integer boxedKey) {
        map.computeIfPresent(boxedKey, UNPIN_UNHELD);
    }

    // ---------------------------------------------------------------------------------------------
    // Inserting (and the chain cap)
    // ---------------------------------------------------------------------------------------------

    /**
     * The common create: the key had no group, so the entry becomes a group of its own by one
     * {@code putIfAbsent}, Caffeine's plain insert (no compute: none of the capture arrays and the
     * lambda of its {@code remap}). The group weighs 1: nobody can have pinned an entry that was
     * not visible yet. Counted before it is visible (size never undercounts), uncounted if another
     * group got there first; then the caller falls back to {@link #insert}.
     */
    boolean insertFirst(Integer boxedKey, PinnedEntry entry) {
        PinnedEntry[] group = {entry}; // allocated before the count: a Throwable here counts nothing
        entryCount.incrementAndGet();
        if (map.putIfAbsent(boxedKey, group) == null) {
            return true;
        }
        entryCount.decrementAndGet();
        return false;
    }

    /**
     * Inserts the entry into its key's group by a compute ({@link Insert}), and counts a group it
     * left with siblings in {@link SiblingTracker} once the compute has returned, even one Caffeine
     * failed after the insert.
     *
     * @param reclaimForCap false for a restore's create: at the cap it leaves the group as it is
     * @return the compute's outcome
     */
    Insert insert(Integer boxedKey, PinnedEntry entry, boolean reclaimForCap) {
        Insert insert = new Insert(entry, reclaimForCap);
        try {
            map.compute(boxedKey, insert);
        } finally {
            if (insert.leftSiblings) {
                siblings.groupGotSiblings();
            }
        }
        return insert;
    }

    /**
     * The remapping function of a create: prepends the entry unless the pair is already there,
     * freeing first the key's oldest unheld entries beyond {@code chainCap - 1} (the chain cap).
     */
    final class Insert implements BiFunction<Integer, PinnedEntry[], PinnedEntry[]> {
        private final PinnedEntry entry;
        /** False for a restore's create: at the cap it leaves the group as it is instead. */
        private final boolean reclaimForCap;
        /** Whether the entry went into the group. */
        boolean inserted;
        /** Whether it left the group as it was because the cap was reached and it may not reclaim. */
        boolean chainFull;
        /** How many unheld values of the key it reclaimed for the chain cap. */
        int capReclaimed;
        /** Whether the group it returned has more than one entry (counted in SiblingTracker). */
        boolean leftSiblings;

        Insert(PinnedEntry entry, boolean reclaimForCap) {
            this.entry = entry;
            this.reclaimForCap = reclaimForCap;
        }

        @Override
        public PinnedEntry[] apply(Integer key, PinnedEntry[] group) {
            if (group == null) {
                PinnedEntry[] single = {entry}; // allocated before the count: a Throwable here counts nothing
                entryCount.incrementAndGet(); // before Caffeine publishes it: size() never undercounts
                inserted = true;
                return single;
            }
            if (indexOfValue(group, entry.value) >= 0) {
                return group;
            }
            int unheld = 0;
            for (PinnedEntry sibling : group) {
                if (sibling.count() == 1) {
                    unheld++;
                }
            }
            if (!reclaimForCap && unheld >= chainCap) {
                chainFull = true;
                return group;
            }
            PinnedEntry[] result = withoutOldestUnheld(group, unheld + 1 - chainCap, entry);
            capReclaimed = group.length + 1 - result.length;
            entryCount.incrementAndGet();
            inserted = true;
            leftSiblings = result.length > 1;
            return result;
        }
    }

    /**
     * With the key's lock held: the group without {@code wanted} of its oldest entries that nobody
     * holds (fewer if it has fewer), with {@code newest} prepended unless null; the entries left
     * out are dead and uncounted on return. The kernel port's chain cap, second chance included
     * ({@code ListTable.reclaimForRoom}): a first walk, oldest first, passes over referenced entries
     * and clears the flag of those nobody holds; only if it finds too few victims does a second
     * walk take the oldest unheld entries whatever their flag. The synchronous pass's trim of
     * siblings picks the same way. Allocates before it kills, so a Throwable of the allocation
     * leaves the group as it was (but for flags cleared).
     *
     * <p>Victims are unpinned first (a CAS that fails only for an entry a lookup holds now: it is
     * passed over). An unpinned entry at count 1 can gain a reference only through a compute on the
     * key, which the caller's lock excludes, so once the array is allocated the kills (count 1 to 0)
     * cannot fail. An entry left unpinned by a victim search that then allocates nothing is only
     * evictable a little early, as after an unpin drain.
     */
    private PinnedEntry[] withoutOldestUnheld(PinnedEntry[] group, long wanted, PinnedEntry newest) {
        int extra = newest == null ? 0 : 1;
        if (wanted <= 0) {
            return extra == 0 ? group : prepend(newest, group);
        }
        boolean[] victim = new boolean[group.length];
        int victims = 0;
        for (int walk = 0; walk < 2 && victims < wanted; walk++) {
            for (int i = group.length - 1; i >= 0 && victims < wanted; i--) { // oldest first
                PinnedEntry entry = group[i];
                if (victim[i]) {
                    continue;
                }
                if (walk == 0 && entry.isReferenced()) {
                    if (entry.count() == 1) {
                        entry.clearReferenced(); // its second chance: passed over this once
                    }
                } else if (entry.unpinIfUnheld()) {
                    victim[i] = true;
                    victims++;
                }
            }
        }
        if (victims == 0) {
            return extra == 0 ? group : prepend(newest, group);
        }
        PinnedEntry[] result = new PinnedEntry[group.length - victims + extra];
        int next = 0;
        if (newest != null) {
            result[next++] = newest;
        }
        for (int i = 0; i < group.length; i++) {
            PinnedEntry entry = group[i];
            if (victim[i]) {
                if (!entry.killIfUnpinnedUnheld()) { // unpinned at count 1 under our lock
                    throw new AssertionError("a chain-cap victim gained a reference under its key's lock: "
                            + entry);
                }
                continue;
            }
            result[next++] = entry;
        }
        entryCount.addAndGet(-victims);
        return result;
    }

    // ---------------------------------------------------------------------------------------------
    // Removing
    // ---------------------------------------------------------------------------------------------

    /**
     * One compute on the key that frees the pair if only the cache holds it, else takes a
     * reference for the caller.
     *
     * @return the compute's outcome
     */
    DeleteOrGet deleteOrGet(Integer boxedKey, long value) {
        DeleteOrGet deleteOrGet = new DeleteOrGet(value);
        map.computeIfPresent(boxedKey, deleteOrGet);
        return deleteOrGet;
    }

    /** The remapping function of {@link #deleteOrGet}. */
    final class DeleteOrGet implements BiFunction<Integer, PinnedEntry[], PinnedEntry[]> {
        private final long value;
        /** Whether the pair was freed (only the cache held it). */
        boolean deleted;
        /** The pair, with a reference taken for the caller, if somebody else holds it. */
        PinnedEntry held;

        DeleteOrGet(long value) {
            this.value = value;
        }

        @Override
        public PinnedEntry[] apply(Integer key, PinnedEntry[] group) {
            int index = indexOfValue(group, value);
            if (index < 0) {
                return group;
            }
            PinnedEntry entry = group[index];
            if (entry.count() == 1) {
                // Allocated before the kill: a Throwable here leaves the pair cached and alive. (A
                // pinned entry can still gain a lock-free reference until the kill; then the array
                // is dropped and the holder gets the pair below.)
                PinnedEntry[] rest = without(group, index);
                if (entry.killIfUnheld()) {
                    deleted = true;
                    entryCount.decrementAndGet();
                    return rest;
                }
            }
            // Count >= 2 (dead entries are never in a group): somebody holds it, so it is pinned and
            // its group weighs 0 already; hand it to the caller too.
            if (entry.acquireAndPinUnderKeyLock()) {
                held = entry;
            }
            return group;
        }
    }

    /**
     * One compute on the key that takes a reference, for the caller, to its first reusable entry
     * after {@code after} (from the newest where {@code after} is null or not in the group): the
     * walk of a lookup that the lock-free one could not finish (its group kept changing), exact
     * because no entry comes or goes while the key's lock is held.
     *
     * @return the entry, referenced and pinned, or {@code null}
     */
    PinnedEntry firstReusableUnderKeyLock(Integer boxedKey, PinnedEntry after) {
        FirstReusable walk = new FirstReusable(after);
        map.computeIfPresent(boxedKey, walk);
        return walk.found;
    }

    /** The remapping function of {@link #firstReusableUnderKeyLock}: the group is returned as it was, re-weighed. */
    private static final class FirstReusable implements BiFunction<Integer, PinnedEntry[], PinnedEntry[]> {
        private final PinnedEntry after;
        PinnedEntry found;

        FirstReusable(PinnedEntry after) {
            this.after = after;
        }

        @Override
        public PinnedEntry[] apply(Integer key, PinnedEntry[] group) {
            for (int i = after == null ? 0 : indexOf(group, after) + 1; i < group.length; i++) {
                PinnedEntry candidate = group[i];
                if (candidate.reusable() && candidate.acquireAndPinUnderKeyLock()) {
                    found = candidate;
                    break;
                }
            }
            return group;
        }
    }

    /** Frees up to {@code wanted} of the key's oldest unheld entries if one of its entries is held. */
    int freeUnheldSiblings(Integer boxedKey, long wanted) {
        TrimSiblings trim = new TrimSiblings((int) Math.min(wanted, Integer.MAX_VALUE));
        map.computeIfPresent(boxedKey, trim);
        return trim.freed;
    }

    /** The remapping function of {@link #freeUnheldSiblings}. */
    private final class TrimSiblings implements BiFunction<Integer, PinnedEntry[], PinnedEntry[]> {
        private final int wanted;
        int freed;

        TrimSiblings(int wanted) {
            this.wanted = wanted;
        }

        @Override
        public PinnedEntry[] apply(Integer key, PinnedEntry[] group) {
            if (!anyPinned(group)) {
                return group; // Caffeine weighs it by its entries and can evict it itself
            }
            PinnedEntry[] trimmed = withoutOldestUnheld(group, wanted, null);
            freed = group.length - trimmed.length;
            return trimmed.length == 0 ? null : trimmed;
        }
    }

    /**
     * Frees, under the key's lock, the entries a shrink pass examined and found unreferenced and
     * unheld ({@code freeable[0, freeableCount)}), if they are still in the group, still
     * unreferenced and held by nobody.
     *
     * @return how many it freed
     */
    int reclaim(Integer boxedKey, PinnedEntry[] freeable, int freeableCount) {
        Reclaim reclaim = new Reclaim(freeable, freeableCount);
        map.computeIfPresent(boxedKey, reclaim);
        return reclaim.freed;
    }

    /**
     * The remapping function of {@link #reclaim}: frees the entries the pass found free to go by a
     * CAS of their count from 1 to 0. Only those: an entry of the group that the pass did not
     * examine (beyond its scan limit) or spared (a second chance, or held) stays.
     */
    private final class Reclaim implements BiFunction<Integer, PinnedEntry[], PinnedEntry[]> {
        /** What the pass found free to go, in {@code freeable[0, freeableCount)}. */
        private final PinnedEntry[] freeable;
        private final int freeableCount;
        int freed;

        Reclaim(PinnedEntry[] freeable, int freeableCount) {
            this.freeable = freeable;
            this.freeableCount = freeableCount;
        }

        private boolean foundFreeable(PinnedEntry entry) {
            for (int i = 0; i < freeableCount; i++) {
                if (freeable[i] == entry) {
                    return true;
                }
            }
            return false;
        }

        /**
         * Picks the victims and unpins them (a CAS that fails only for an entry a lookup holds now:
         * it stays), allocates the survivors' group, and only then kills the victims: unpinned at
         * count 1 under the key's lock, nobody can take a reference, so no kill can fail, and a
         * Throwable of either allocation leaves every entry alive in its group (some unpinned
         * while Caffeine still weighs the group as before, until the next compute on the key).
         */
        @Override
        public PinnedEntry[] apply(Integer key, PinnedEntry[] group) {
            PinnedEntry[] sorted = new PinnedEntry[group.length]; // survivors first, victims from the end
            int kept = 0;
            int victimsFrom = group.length;
            for (PinnedEntry entry : group) {
                if (foundFreeable(entry) && !entry.isReferenced() && entry.unpinIfUnheld()) {
                    sorted[--victimsFrom] = entry;
                } else {
                    sorted[kept++] = entry;
                }
            }
            if (kept == group.length) {
                return group;
            }
            PinnedEntry[] result = kept == 0 ? null : Arrays.copyOf(sorted, kept);
            for (int i = victimsFrom; i < group.length; i++) {
                if (!sorted[i].killIfUnpinnedUnheld()) {
                    throw new AssertionError("a reclaim victim gained a reference under its key's lock: " + sorted[i]);
                }
            }
            freed = group.length - kept;
            entryCount.addAndGet(-freed);
            return result;
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Caffeine's eviction order
    // ---------------------------------------------------------------------------------------------

    /** Collects groups from Caffeine's coldest-first stream until they hold {@code budget} entries. */
    static List<Policy.CacheEntry<Integer, PinnedEntry[]>> takeEntries(
            Iterator<Policy.CacheEntry<Integer, PinnedEntry[]>> coldestFirst, long budget) {
        List<Policy.CacheEntry<Integer, PinnedEntry[]>> taken = new ArrayList<>();
        long entries = 0;
        while (entries < budget && coldestFirst.hasNext()) {
            Policy.CacheEntry<Integer, PinnedEntry[]> next = coldestFirst.next();
            taken.add(next);
            entries += next.getValue().length;
        }
        return taken;
    }

    /** The groups of Caffeine's coldest-first stream, references only. Runs under its eviction lock. */
    static List<PinnedEntry[]> groupsInOrder(Stream<Policy.CacheEntry<Integer, PinnedEntry[]>> coldest) {
        List<PinnedEntry[]> order = new ArrayList<>();
        for (Iterator<Policy.CacheEntry<Integer, PinnedEntry[]>> it = coldest.iterator(); it.hasNext(); ) {
            order.add(it.next().getValue());
        }
        return order;
    }
}
