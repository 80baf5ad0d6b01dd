package org.mbcache;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event: one reclaim pass of a cache (the contract, section 4), with what started it, how many
 * entries it looked at, freed and gave a second chance, and how long it took.
 *
 * <p>Implementation notes. The event is recorded only while a recording enables it (every recording
 * does, unless its settings say {@code org.mbcache.ReclaimPass#enabled=false}). The caller's side is
 * two static calls around the pass:
 *
 * <pre>{@code
 * ReclaimPassEvent event = ReclaimPassEvent.beginIfEnabled(ReclaimPassEvent.Kind.BACKGROUND);
 * ... the pass ...
 * ReclaimPassEvent.commitIfEnabled(event, this, scanned, freed, secondChances);
 * }</pre>
 *
 * <p>When no recording enables the event, {@link #beginIfEnabled} is one read of the event class's
 * static enabled state, through a shared probe instance ({@link Event#isEnabled()} reads no instance
 * field), and returns {@code null}: nothing is allocated and {@link #commitIfEnabled} returns at
 * once. Only an enabled pass allocates its event, and only then is the cache's name built.
 */
@Name(ReclaimPassEvent.NAME)
@Label("Reclaim Pass")
@Category({"mbcache"})
@Description("One reclaim pass of an mbcache: what started it, entries scanned, freed and given a second chance")
@StackTrace(false)
final class ReclaimPassEvent extends Event {

    /** The event's name in a recording. */
    static final String NAME = "org.mbcache.ReclaimPass";

    /** What started a pass; its label is the event's {@code kind} field. */
    enum Kind {
        /** Scheduled on the cache's executor because a create found {@code size() >= maxEntries}. */
        BACKGROUND("background"),
        /** Run by a creating thread because {@code size() >= 2 * maxEntries}. */
        SYNCHRONOUS("synchronous"),
        /** Asked for through {@code shrink}. */
        REQUESTED("requested"),
        /** Run by the memory-pressure registry on a heap-pressure signal. */
        MEMORY_PRESSURE("memory pressure");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    /** Shared, never committed: asks whether the event type is enabled without allocating. */
    private static final ReclaimPassEvent PROBE = new ReclaimPassEvent();

    @Label("Cache")
    @Description("The cache's class and identity hash")
    String cache;

    @Label("Kind")
    @Description("What started the pass: background, synchronous, requested or memory pressure")
    String kind;

    @Label("Entries Scanned")
    @Description("Entries the pass looked at")
    long scanned;

    @Label("Entries Freed")
    @Description("Unused entries the pass removed")
    long freed;

    @Label("Second Chances")
    @Description("Referenced entries whose flag the pass cleared and moved to the LRU tail")
    long secondChances;

    private ReclaimPassEvent() {}

    /**
     * Starts timing a pass if a recording enables this event.
     *
     * @param kind what started the pass
     * @return the begun event, or {@code null} when the event is off (nothing allocated)
     */
    static ReclaimPassEvent beginIfEnabled(Kind kind) {
        if (!PROBE.isEnabled()) {
            return null;
        }
        ReclaimPassEvent event = new ReclaimPassEvent();
        event.kind = kind.label;
        event.begin();
        return event;
    }

    /**
     * Ends and commits a pass begun by {@link #beginIfEnabled}; does nothing for {@code null}.
     *
     * @param event what {@link #beginIfEnabled} returned
     * @param cache the cache that ran the pass
     * @param scanned entries looked at
     * @param freed entries removed
     * @param secondChances referenced entries given a second chance
     */
    static void commitIfEnabled(ReclaimPassEvent event, Object cache, long scanned, long freed, long secondChances) {
        if (event == null) {
            return;
        }
        event.end();
        if (event.shouldCommit()) {
            event.cache = cacheName(cache);
            event.scanned = scanned;
            event.freed = freed;
            event.secondChances = secondChances;
            event.commit();
        }
    }

    /** How the events name a cache: its class and identity hash, as {@link Object#toString()} would. */
    static String cacheName(Object cache) {
        return cache.getClass().getSimpleName() + '@' + Integer.toHexString(System.identityHashCode(cache));
    }
}
