package org.mbcache;

/**
 * The vote that switches a contended entry to hot mode ({@link HotReferences}), for both layouts of
 * the kernel port: a layout notes each failed CAS on an entry's reference word here, and switches
 * the entry once the vote says it has been contended often enough.
 *
 * <p>A majority vote (Boyer-Moore) per slot, the slot picked by the key ({@link #slotOf}): a failure
 * on the slot's favoured candidate adds a vote, one on another candidate takes one away, and a
 * candidate takes over a slot with no votes left. An entry that most failures hit gets to
 * {@link HotReferences#HOT_SWITCH_VOTES} quickly; entries that meet by chance (uniform keys) cancel
 * each other out.
 *
 * <p>The candidates themselves are the layout's (an entry object, or a slot's handle), kept in an
 * array of {@link #SLOTS} beside this vote: {@link #tally} says whether the failure was on the
 * favoured one and answers what to do. Plain fields, racy on purpose: a lost or torn vote only moves
 * a switch, which is correct whenever it happens; failures are rare except on a contended entry,
 * which stops failing once hot.
 */
final class ContentionVote {
    /** Slots of the vote, a power of two. */
    static final int SLOTS = 4;

    /** {@link #tally}: nothing to do. */
    static final int NOTHING = 0;
    /** {@link #tally}: the failing candidate takes the slot over (the caller stores it there). */
    static final int TAKE_OVER = 1;
    /** {@link #tally}: the favoured candidate has enough votes; switch it to hot mode. */
    static final int SWITCH = 2;

    /** Per slot, the favoured candidate's net votes. */
    private final int[] votes = new int[SLOTS];

    /** The slot of a key: a multiplicative hash, its top bits. */
    static int slotOf(int key) {
        return (key * 0x9E3779B9) >>> (32 - Integer.numberOfTrailingZeros(SLOTS));
    }

    /**
     * Counts one failed CAS in {@code slot}.
     *
     * @param slot the key's {@link #slotOf}
     * @param favoured whether the failure was on the slot's favoured candidate
     * @return {@link #SWITCH}, {@link #TAKE_OVER} or {@link #NOTHING}
     */
    int tally(int slot, boolean favoured) {
        int now = votes[slot];
        if (favoured) {
            votes[slot] = now + 1;
            return now + 1 >= HotReferences.HOT_SWITCH_VOTES ? SWITCH : NOTHING;
        }
        if (now > 0) {
            votes[slot] = now - 1;
            return NOTHING;
        }
        votes[slot] = 1;
        return TAKE_OVER;
    }
}
