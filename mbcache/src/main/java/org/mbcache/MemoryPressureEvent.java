package org.mbcache;

import java.lang.management.MemoryNotificationInfo;
import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event: the process-wide memory-pressure registry received a heap-pressure signal and asked its
 * caches to shrink (the contract, section 4). The event spans the handling of the signal; the
 * passes it started are {@link ReclaimPassEvent}s of kind "memory pressure" inside that span.
 *
 * <p>Implementation notes. {@link MemoryPressureRegistry} calls {@link #beginIfEnabled()} before it
 * asks the caches and {@link #commitIfEnabled} after. Off (no recording enables it), the first is one
 * read of the event class's static enabled state through a shared probe instance and returns
 * {@code null}; nothing is allocated.
 */
@Name(MemoryPressureEvent.NAME)
@Label("Memory Pressure")
@Category({"mbcache"})
@Description("A heap-pressure signal made the registry ask every registered mbcache to shrink")
@StackTrace(false)
final class MemoryPressureEvent extends Event {

    /** The event's name in a recording. */
    static final String NAME = "org.mbcache.MemoryPressure";

    /** The {@code pool} field when the handler was called without a JVM notification. */
    static final String NO_POOL = "(direct call)";

    /** Shared, never committed: asks whether the event type is enabled without allocating. */
    private static final MemoryPressureEvent PROBE = new MemoryPressureEvent();

    @Label("Memory Pool")
    @Description("The heap pool whose collection-usage threshold was exceeded")
    String pool;

    @Label("Pool Used")
    @Description("Bytes in use in the pool after the collection that raised the signal")
    @DataAmount
    long poolUsed;

    @Label("Pool Maximum")
    @Description("The pool's maximum size in bytes, or -1 if undefined")
    @DataAmount
    long poolMax;

    @Label("Threshold Count")
    @Description("How many times the pool has exceeded its threshold so far")
    long thresholdCount;

    @Label("Caches")
    @Description("Registered caches asked to shrink")
    int caches;

    private MemoryPressureEvent() {}

    /**
     * Starts timing the handling of a signal if a recording enables this event.
     *
     * @return the begun event, or {@code null} when the event is off (nothing allocated)
     */
    static MemoryPressureEvent beginIfEnabled() {
        if (!PROBE.isEnabled()) {
            return null;
        }
        MemoryPressureEvent event = new MemoryPressureEvent();
        event.begin();
        return event;
    }

    /**
     * Ends and commits an event begun by {@link #beginIfEnabled()}; does nothing for {@code null}.
     *
     * @param event what {@link #beginIfEnabled()} returned
     * @param signal the JVM's notification, or {@code null} when the handler was called directly
     * @param caches the registered caches asked to shrink
     */
    static void commitIfEnabled(MemoryPressureEvent event, MemoryNotificationInfo signal, int caches) {
        if (event == null) {
            return;
        }
        event.end();
        if (event.shouldCommit()) {
            if (signal == null) {
                event.pool = NO_POOL;
                event.poolMax = -1;
            } else {
                event.pool = signal.getPoolName();
                event.poolUsed = signal.getUsage().getUsed();
                event.poolMax = signal.getUsage().getMax();
                event.thresholdCount = signal.getCount();
            }
            event.caches = caches;
            event.commit();
        }
    }
}
