package org.mbcache.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Whether a cache serves calls, and every answer to a call that races {@code close()}: one home for
 * all three backends ({@code MbCache}, {@code CompactMbCache}, {@code CaffeineDedupCache}).
 *
 * <p><b>States.</b> {@link #OPEN}; closed, from the first {@link #beginClose()} on, and final; or
 * broken by an invariant breach that could not be thrown to a caller where it was seen (only the
 * Caffeine backend records one: Caffeine's eviction listener, whose exceptions Caffeine only logs),
 * which every later call but {@code close()} rethrows. Open to broken is a CAS (the first breach is
 * kept); open or broken to closed is a plain volatile write. Teardown is separate: {@code close()}
 * tears down on every call until one call has finished ({@link #beginClose()},
 * {@link #tornDown()}), so that a close that threw part-way (an {@link OutOfMemoryError} waking the
 * waiters) is finished by the next.
 *
 * <p><b>The answers.</b> A call that passed its {@link #ensureOpen()} just before a close can meet
 * what the close did: a chain emptied, an entry killed, a count zeroed, a group dropped. Then:
 * <ul>
 *   <li>a lookup that found nothing answers {@link #missUnlessClosed()}: a miss would say the pair
 *       is not cached, and from {@code deleteOrGet} that nobody holds it, for a pair held until the
 *       close;</li>
 *   <li>a release or {@code findNext} whose reference the count does not show is
 *       {@link #referenceNotHeld(String)}: "cache is closed" where the close took the reference,
 *       so that a call racing close() never blames the caller's references for it;</li>
 *   <li>a create that the close overtook is {@link #closedWhileCreating()}.</li>
 * </ul>
 *
 * <p><b>Memory order, once for every backend.</b> The state is read and written with volatile
 * (sequentially consistent) accesses. {@code close()} writes the closed state before it changes
 * anything a call can see: every chain it empties, entry it kills or count it zeroes is written
 * after, under the bucket's lock bit (whose unlock is a release store), by a volatile CAS of the
 * entry's state or slot word, or inside Caffeine's map (whose removals are volatile writes of its
 * nodes). A call that saw the chain without the pair, the entry dead or the count zero read what the
 * close wrote: by an acquire load of the version it validated, by the acquire CAS that took the
 * bucket's bit, by a CAS or volatile load of the entry's word, or by Caffeine's volatile reads. Each
 * of those reads happens after the close's write of the state, so the volatile read in the answer
 * sees it. A miss that read nothing of the close (the pair was never there) may see the cache open
 * or closed: both are right for a call that overlapped the close. Two readers need the volatile
 * read's store-load order, not just acquire, because they are halves of Dekker handshakes: a
 * Caffeine create inserts and then reads the state, while close() writes it and then empties the
 * map (either the create sees the close and removes its pair, or the close finds the pair); and a
 * waiter reads it after the wait queue's waiter count went up, while close() writes it before it
 * wakes every queue. {@link #ensureOpen()} alone would do with an acquire read, but gains nothing
 * from one: a volatile read is a plain load on x86, and on AArch64 an LDAR where LDAPR would be the
 * acquire.
 *
 * <p><b>Cost.</b> The state is one immutable object in one volatile field, so {@link #ensureOpen()}
 * on the path of every call is one volatile load and one comparison with a constant; the
 * exceptions are built off that path, in a method of their own, so that it stays small enough to inline.
 * Not part of the API.
 */
public final class Lifecycle {

    /** The message of every {@link IllegalStateException} a closed cache throws. */
    public static final String CLOSED_MESSAGE = "cache is closed";

    private static final State OPEN = new State(null);
    private static final State CLOSED = new State(null);

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Lifecycle.class, "state", State.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** One immutable state, so that one volatile field holds it all. */
    private static final class State {
        /** Why the cache is broken; {@code null} for {@link #OPEN} and {@link #CLOSED}. */
        final AssertionError breach;

        State(AssertionError breach) {
            this.breach = breach;
        }
    }

    /** Open, closed, or broken; see the class comment for the transitions and the memory order. */
    private volatile State state = OPEN;
    /** Whether a {@code close()} has finished tearing down. */
    private volatile boolean tornDown;

    /** An open lifecycle. */
    public Lifecycle() {}

    /**
     * Throws the contract's {@link IllegalStateException} once the cache is closed, or the recorded
     * breach once it is broken: one volatile load and one comparison.
     *
     * @throws IllegalStateException if the cache is closed
     * @throws AssertionError if the cache is broken
     */
    public void ensureOpen() {
        State now = state;
        if (now != OPEN) {
            refuse(now);
        }
    }

    private static void refuse(State now) {
        if (now == CLOSED) {
            throw new IllegalStateException(CLOSED_MESSAGE);
        }
        throw new AssertionError("cache invariant broken earlier: " + now.breach.getMessage(), now.breach);
    }

    /**
     * Whether the cache is open: neither closed nor broken. One volatile load; for a waiter's
     * condition, which must stop waiting at a close or a breach alike and then meet it in
     * {@link #ensureOpen()}.
     *
     * @return whether the cache is open
     */
    public boolean isOpen() {
        return state == OPEN;
    }

    /**
     * Whether {@link #beginClose()} has run: one volatile load.
     *
     * @return whether the cache is closed
     */
    public boolean isClosed() {
        return state == CLOSED;
    }

    /**
     * A lookup's miss, re-checked against a racing close (see the class comment): returns
     * normally if the cache is open, else throws as {@link #ensureOpen()} does.
     *
     * @throws IllegalStateException if the cache is closed
     */
    public void missUnlessClosed() {
        ensureOpen();
    }

    /**
     * The exception for a reference the caller does not hold: {@code misuse}, unless the cache is
     * closed, when the call is told so, as every call on a closed cache is.
     *
     * @param misuse the message naming the misuse
     * @return the exception to throw
     */
    public IllegalStateException referenceNotHeld(String misuse) {
        return new IllegalStateException(isClosed() ? CLOSED_MESSAGE : misuse);
    }

    /**
     * The contract's answer to a create that {@code close()} overtook.
     *
     * @return the exception to throw
     */
    public static IllegalStateException closedWhileCreating() {
        return new IllegalStateException(CLOSED_MESSAGE);
    }

    /**
     * Marks the cache closed (final) and answers whether the caller must tear it down: true until
     * a teardown has finished ({@link #tornDown()}). Every teardown step must be idempotent: a
     * racing or retried close may run it twice.
     *
     * @return whether a teardown is still needed
     */
    public boolean beginClose() {
        state = CLOSED;
        return !tornDown;
    }

    /** Records that a {@code close()} finished its teardown: later closes return at once. */
    public void tornDown() {
        tornDown = true;
    }

    /**
     * Records a breach, if the cache is open: the first breach wins, and a closed cache stays
     * closed. The volatile CAS publishes it to every later {@link #ensureOpen()}.
     *
     * @param breach what was found
     * @return whether this breach was recorded (the cache was open)
     */
    public boolean breakBy(AssertionError breach) {
        return STATE.compareAndSet(this, OPEN, new State(breach));
    }
}
