package org.mbcache.stress;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The sequential specification of the {@link org.mbcache.DedupCache} operations the Lincheck tests run:
 * the contract (docs/contract.md) written as the simplest possible single-threaded model, with no
 * references, locks, buckets or reclaim. Lincheck checks that every concurrent history of the real cache
 * can be explained by some sequential order of these methods.
 *
 * <p>Its public methods mirror {@link DedupCacheLincheckTest}'s operations one for one (same names,
 * parameters and results), as Lincheck requires of a sequential specification.
 */
public final class DedupCacheSpecification {

    /** One cached pair and its reusable flag. */
    private static final class Pair {
        final int key;
        final long value;
        boolean reusable;

        Pair(int key, long value, boolean reusable) {
            this.key = key;
            this.value = value;
            this.reusable = reusable;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Pair p && p.key == key && p.value == value && p.reusable == reusable;
        }

        @Override
        public int hashCode() {
            return Objects.hash(key, value, reusable);
        }
    }

    /** Cached pairs, newest first (the order of a bucket chain, restricted to one key). */
    private final List<Pair> pairs = new ArrayList<>();

    /** An empty cache. */
    public DedupCacheSpecification() {
    }

    private Pair find(int key, long value) {
        for (Pair p : pairs) {
            if (p.key == key && p.value == value) {
                return p;
            }
        }
        return null;
    }

    /**
     * Inserts the pair unless it is cached.
     *
     * @return whether the pair was inserted
     */
    public boolean create(int key, long value, boolean reusable) {
        if (find(key, value) != null) {
            return false;
        }
        pairs.add(0, new Pair(key, value, reusable));
        return true;
    }

    /**
     * Looks up exactly this pair, reusable or not.
     *
     * @return whether the pair is cached
     */
    public boolean get(int key, long value) {
        return find(key, value) != null;
    }

    /**
     * The newest reusable pair with this key.
     *
     * @return its value, or -1 if there is none
     */
    public long findFirst(int key) {
        for (Pair p : pairs) {
            if (p.key == key && p.reusable) {
                return p.value;
            }
        }
        return -1;
    }

    /**
     * Sets the reusable flag of the pair if it is cached.
     *
     * @return whether the pair was cached
     */
    public boolean setReusable(int key, long value, boolean reusable) {
        Pair p = find(key, value);
        if (p != null) {
            p.reusable = reusable;
        }
        return p != null;
    }

    /** Removes the pair if it is cached (ext4's delete loop, which always ends with the pair gone). */
    public void delete(int key, long value) {
        pairs.remove(find(key, value));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DedupCacheSpecification s && s.pairs.equals(pairs);
    }

    @Override
    public int hashCode() {
        return pairs.hashCode();
    }
}
