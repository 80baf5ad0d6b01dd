package org.mbcache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Where a cache keeps the cells of its hot entries ({@link HotReferences}): at most
 * {@value HotReferences#MAX_HOT_ENTRIES} at once, each found by its owner. Both kernel-port layouts
 * use it, so that no entry pays for hot mode while it is cold: {@link ListEntry} names itself as
 * the owner (its identity), a {@link CompactTable} slot its occupant (the meta word's identity bits
 * and the slot; the owner object is {@code null}). An entry object has no field for cells, and stays
 * 40 bytes.
 *
 * <h2>Layout</h2>
 *
 * Sixteen places, each {@code null} or an immutable {@link Holder} (owner, two tags, cells), so a
 * reader that found a holder reads a consistent owner and cells (final fields, and the holder is
 * published by a release CAS and read by an acquire load). An owner's holder sits at the place its
 * caller names ({@code first}: the slot or the key, masked) unless that is taken, then at the next
 * free one, so a lookup usually reads one place and scans all sixteen only for an owner without
 * cells.
 *
 * <h2>Protocol</h2>
 *
 * Publishing is serialized by a lock (rare: a switch to hot mode), so an owner has at most one
 * holder, and the budget is the places themselves: a full table refuses. Retiring is a CAS of the
 * holder to {@code null}, by the cells' identity (a cells array is allocated for one switch and
 * never published twice). A lookup that read a holder retired after the read adds to cells nobody
 * counts any more; why that is harmless is {@link HotReferences}' "Retiring, and slot reuse".
 * Nothing here allocates except {@link #publish}, which allocates its holder before it changes
 * anything and answers {@code false} if that fails.
 */
final class HotCellTable {

    private static final VarHandle PLACES = MethodHandles.arrayElementVarHandle(Holder[].class);
    private static final int PLACE_MASK = HotReferences.MAX_HOT_ENTRIES - 1;

    /** One hot owner's cells, with what names the owner. Immutable. */
    private static final class Holder {
        final Object owner;
        final long tag;
        final long at;
        final long[] cells;

        Holder(Object owner, long tag, long at, long[] cells) {
            this.owner = owner;
            this.tag = tag;
            this.at = at;
            this.cells = cells;
        }

        boolean ownedBy(Object owner, long tag, long at) {
            return this.owner == owner && this.tag == tag && this.at == at;
        }
    }

    private final Holder[] places = new Holder[HotReferences.MAX_HOT_ENTRIES];
    private final Object publishLock = new Object();

    /**
     * The cells of the owner named by {@code owner}, {@code tag} and {@code at}, or {@code null}
     * (none published, or retired). Acquire loads; allocates nothing.
     *
     * @param first where the owner's holder usually sits (any int; masked)
     */
    long[] cells(int first, Object owner, long tag, long at) {
        for (int n = 0; n < HotReferences.MAX_HOT_ENTRIES; n++) {
            Holder holder = (Holder) PLACES.getAcquire(places, (first + n) & PLACE_MASK);
            if (holder != null && holder.ownedBy(owner, tag, at)) {
                return holder.cells;
            }
        }
        return null;
    }

    /**
     * Publishes {@code cells} for the owner, taking a place: {@code false}, with nothing changed, if
     * the owner has cells already, every place is taken, or the holder's allocation failed.
     */
    boolean publish(int first, Object owner, long tag, long at, long[] cells) {
        Holder holder;
        try {
            holder = new Holder(owner, tag, at, cells);
        } catch (Throwable allocationFailure) {
            return false; // the entry stays cold: correct, only slower
        }
        synchronized (publishLock) {
            if (cells(first, owner, tag, at) != null) {
                return false;
            }
            for (int n = 0; n < HotReferences.MAX_HOT_ENTRIES; n++) {
                if (PLACES.compareAndSet(places, (first + n) & PLACE_MASK, (Holder) null, holder)) {
                    return true;
                }
            }
            return false;
        }
    }

    /** Drops the holder of {@code cells}, giving its place back (no-op if already dropped). */
    void retire(long[] cells) {
        for (int i = 0; i < HotReferences.MAX_HOT_ENTRIES; i++) {
            Holder holder = (Holder) PLACES.getAcquire(places, i);
            if (holder != null && holder.cells == cells && PLACES.compareAndSet(places, i, holder, (Holder) null)) {
                return;
            }
        }
    }

    /** Whether every place is taken now (acquire loads; a hint, as any read of a changing table). */
    boolean full() {
        for (int i = 0; i < HotReferences.MAX_HOT_ENTRIES; i++) {
            if (PLACES.getAcquire(places, i) == null) {
                return false;
            }
        }
        return true;
    }

    /** Owners with cells now (hot ones, and switches in progress). */
    int size() {
        int n = 0;
        for (int i = 0; i < HotReferences.MAX_HOT_ENTRIES; i++) {
            if (PLACES.getAcquire(places, i) != null) {
                n++;
            }
        }
        return n;
    }
}
