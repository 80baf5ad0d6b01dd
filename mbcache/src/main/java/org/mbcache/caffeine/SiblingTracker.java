package org.mbcache.caffeine;

import com.github.benmanes.caffeine.cache.Policy;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Which keys of a {@link CaffeineDedupCache} can have more than one value, and the synchronous
 * pass's freeing of unheld siblings of held entries (which Caffeine cannot evict: their group
 * weighs 0). A class of its own because knowing that no group has siblings, without looking, is
 * what lets a pass skip its walk, and that knowledge has its own race argument.
 */
final class SiblingTracker {

    /*
     * Skipping the sibling walk. When callers hold about maxEntries entries, every create finds the
     * cache at the threshold, and the walk of the coldest groups for siblings would run on every
     * one, at O(2 * maxEntries), even when no key has a second value and there is nothing to free.
     * The walk only frees siblings, so it can be skipped whenever no group has any, which the cache
     * knows without looking: only an insert into an existing group can give a key a second value
     * (chain cap, reclaim, deleteOrGet and Caffeine's eviction only shrink groups or remove them),
     * and every such insert counts itself in siblingGroupsCreated once its compute has returned
     * (KeyGroups.insert). A pass whose walk found no group with siblings confirms it by one scan of
     * the whole map and records the count it read before the walk in noSiblingGroupsAsOf; while the
     * count is still that, later passes skip the walk.
     *
     * Why the 2 * maxEntries + held bound survives: a group that had siblings when the count was
     * read was published before (the count is bumped after the compute), so the scan, which starts
     * after that read, sees it unless it lost them meanwhile; and a group that gets siblings later
     * bumps the count, so the next pass walks again (the create that made it runs a pass of its
     * own, which frees its own key's siblings first). The scan reads the map (ConcurrentHashMap's
     * weakly consistent iteration sees every mapping present throughout it), not Caffeine's
     * eviction order, which lags a concurrent create until its add task is drained.
     *
     * Cost: one scan per pass that walked in vain since the count last moved. At worst, when every
     * pass follows a new sibling group that is gone by the time it walks, each pass scans as much
     * as it walked, twice the work of a pass that could not skip. In the case that motivated the
     * skip (callers holding maxEntries single-value keys): at most one walk and one scan, then none
     * until a key gets a second value; none at all in a cache where no key ever had two (a new
     * cache knows it has no siblings).
     *
     * Not covered: the same case with one key whose values are all held. Its group has siblings, so
     * every pass walks, finds nothing it may free, and walks again at the next create, each create
     * then costing a walk of the coldest groups. Skipping those walks too would need to know when a
     * held sibling becomes free (a release drained, a lookup pinning a group with an unheld sibling,
     * an insert), three more windows to argue and race-test; the contract bounds no create's cost,
     * and holding twice maxEntries at once is far from what ext4 does, so it is left as it is.
     */

    private final KeyGroups groups;
    /**
     * Inserts that left their key with more than one value, each counted after its compute
     * returned (so the group it made is in the map before the count says so): the only way a group
     * gets siblings. Volatile increments and reads, so that a pass that reads the count and then
     * scans the map sees every group counted before its read.
     */
    private final AtomicLong siblingGroupsCreated = new AtomicLong();
    /**
     * A value of {@link #siblingGroupsCreated} at which a scan found no group with siblings: while
     * the count still has this value, none has any, and the synchronous pass skips its walk.
     * Starts at 0 with the count: an empty cache has none. Written by passes, each with a count it
     * read before a scan that found none; when two race, either value is one that was true, and
     * an older one only makes the next pass walk.
     */
    private volatile long noSiblingGroupsAsOf;

    /** @param groups the groups whose siblings this tracks */
    SiblingTracker(KeyGroups groups) {
        this.groups = groups;
    }

    /** Counts an insert that left its key with more than one value, after its compute returned. */
    void groupGotSiblings() {
        siblingGroupsCreated.incrementAndGet();
    }

    /**
     * Whether no group can have siblings: no insert has given a key a second value since a scan
     * found none. Then the synchronous pass has no sibling to free and skips its walk.
     */
    boolean knowsNoGroupHasSiblings() {
        return siblingGroupsCreated.get() == noSiblingGroupsAsOf;
    }

    /**
     * The synchronous pass's last resort: frees up to {@code excess} unheld siblings of held
     * entries, the creating key's first, then the coldest groups', oldest first within a group.
     *
     * @param creatingKey the key of the create that runs the pass
     * @param excess how many entries the pass wants freed, positive
     * @return how many it freed
     */
    long freeUnheld(Integer creatingKey, long excess) {
        PinnedEntry[] own = groups.current(creatingKey);
        long freed = own != null && own.length > 1 ? groups.freeUnheldSiblings(creatingKey, excess) : 0;
        if (freed < excess && !knowsNoGroupHasSiblings()) {
            long siblingGroupsBeforeTheWalk = siblingGroupsCreated.get();
            long budget = groups.size(); // the groups present now: a bounded walk
            long spareWanted = excess - freed;
            List<Policy.CacheEntry<Integer, PinnedEntry[]>> coldest =
                    groups.coldest(stream -> takeSiblingGroups(stream.iterator(), budget, spareWanted));
            if (coldest.isEmpty() && !anyGroupHasSiblings()) {
                noSiblingGroupsAsOf = siblingGroupsBeforeTheWalk; // later passes skip the walk
            }
            for (Policy.CacheEntry<Integer, PinnedEntry[]> snapshot : coldest) {
                if (freed >= excess) {
                    break;
                }
                freed += groups.freeUnheldSiblings(snapshot.getKey(), excess - freed);
            }
        }
        return freed;
    }

    /** A scan of the whole map, without Caffeine's eviction lock: does some key have two values? */
    private boolean anyGroupHasSiblings() {
        for (PinnedEntry[] group : groups.all()) {
            if (group.length > 1) {
                return true;
            }
        }
        return false;
    }

    /**
     * Collects, from Caffeine's coldest-first stream, the groups of more than one entry (only those
     * can have an unheld sibling of a held entry), until they have {@code spareWanted} entries beyond
     * their first or the groups looked at hold {@code budget} entries. Runs under Caffeine's eviction
     * lock, so it keeps no group it will not use.
     */
    private static List<Policy.CacheEntry<Integer, PinnedEntry[]>> takeSiblingGroups(
            Iterator<Policy.CacheEntry<Integer, PinnedEntry[]>> coldestFirst, long budget, long spareWanted) {
        List<Policy.CacheEntry<Integer, PinnedEntry[]>> taken = new ArrayList<>();
        long entries = 0;
        long spare = 0;
        while (entries < budget && spare < spareWanted && coldestFirst.hasNext()) {
            Policy.CacheEntry<Integer, PinnedEntry[]> next = coldestFirst.next();
            int length = next.getValue().length;
            entries += length;
            if (length > 1) {
                taken.add(next);
                spare += length - 1;
            }
        }
        return taken;
    }
}
