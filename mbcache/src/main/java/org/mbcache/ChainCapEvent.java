package org.mbcache;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event: a create found its chain at the cache's chain cap and reclaimed that chain's oldest
 * unheld entries first (the contract, section 4).
 *
 * <p>Implementation notes. An instant event, committed by one static call after the chain was cut:
 * {@code ChainCapEvent.commitIfEnabled(this, key, chainLength, chainCap, reclaimed)}. When no
 * recording enables it, the call is one read of the event class's static enabled state through a
 * shared probe instance and allocates nothing. Under a flood of colliding keys it fires on every
 * create; a recording that cannot afford that turns it off with
 * {@code org.mbcache.ChainCapReached#enabled=false}, and {@link CacheStats#chainCapReclaims()} still
 * counts.
 */
@Name(ChainCapEvent.NAME)
@Label("Chain Cap Reached")
@Category({"mbcache"})
@Description("A create found its chain at the cache's chain cap and reclaimed the chain's oldest unheld entries")
@StackTrace(false)
final class ChainCapEvent extends Event {

    /** The event's name in a recording. */
    static final String NAME = "org.mbcache.ChainCapReached";

    /** Shared, never committed: asks whether the event type is enabled without allocating. */
    private static final ChainCapEvent PROBE = new ChainCapEvent();

    @Label("Cache")
    @Description("The cache's class and identity hash")
    String cache;

    @Label("Key")
    @Description("The key of the create that found the chain full")
    int key;

    @Label("Chain Length")
    @Description("Entries in the chain when the create found it")
    int chainLength;

    @Label("Chain Cap")
    @Description("The cache's chain cap")
    int chainCap;

    @Label("Entries Reclaimed")
    @Description("Oldest unheld entries of the chain removed to make room")
    int reclaimed;

    private ChainCapEvent() {}

    /**
     * Records that a create found its chain at the cap, if a recording enables this event.
     *
     * @param cache the cache
     * @param key the key of the create
     * @param chainLength the chain's length when the create found it
     * @param chainCap the cache's chain cap
     * @param reclaimed the entries removed from the chain to make room
     */
    static void commitIfEnabled(Object cache, int key, int chainLength, int chainCap, int reclaimed) {
        if (!PROBE.isEnabled()) {
            return;
        }
        ChainCapEvent event = new ChainCapEvent();
        if (event.shouldCommit()) {
            event.cache = ReclaimPassEvent.cacheName(cache);
            event.key = key;
            event.chainLength = chainLength;
            event.chainCap = chainCap;
            event.reclaimed = reclaimed;
            event.commit();
        }
    }
}
