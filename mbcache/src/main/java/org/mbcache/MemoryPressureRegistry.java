package org.mbcache;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryNotificationInfo;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;

/**
 * The process-wide memory-pressure shrinker: the JVM's stand-in for the kernel's
 * {@code register_shrinker}, through which memory reclaim asks every mbcache to count and scan its
 * entries.
 *
 * <p>On first registration the registry sets a collection-usage threshold of
 * {@value #THRESHOLD_PERCENT}% of the maximum on the old-generation heap pools (pools whose name
 * says "Old" or "Tenured"; every heap pool that supports one on single-generation collectors), unless
 * the application set one already, and listens for the JVM's
 * {@link MemoryNotificationInfo#MEMORY_COLLECTION_THRESHOLD_EXCEEDED} notifications: "after a
 * collection, the old generation is still this full". Each notification calls every registered
 * {@link Shrinker}, and records a {@link MemoryPressureEvent} when a JFR recording enables it.
 *
 * <p>The registry holds shrinkers only through weak references: a cache that leaves (on
 * {@code close()}) is forgotten at once, and one that is dropped without closing stays collectable
 * (with its shrinker, which only the cache holds) and is purged from the set when the collector
 * clears the reference.
 */
final class MemoryPressureRegistry {

    static final MemoryPressureRegistry INSTANCE = new MemoryPressureRegistry();

    /** Old-generation occupancy after a collection that counts as pressure. */
    static final int THRESHOLD_PERCENT = 80;

    /**
     * What a cache registers (kernel {@code struct shrinker}): the callback the registry calls on
     * heap pressure. Each kernel-port cache registers its {@link ReclaimBooks}; the cache holds it,
     * and nothing else needs to.
     */
    interface Shrinker {
        /** Answers heap pressure: frees what the cache can spare; nothing once it is closed. */
        void onMemoryPressure();
    }

    /** A cache's membership; weak, so the registry never keeps a cache's shrinker (or the cache) reachable. */
    static final class Registration extends WeakReference<Shrinker> {
        Registration(Shrinker shrinker, ReferenceQueue<Shrinker> queue) {
            super(shrinker, queue);
        }
    }

    private final Set<Registration> registrations = ConcurrentHashMap.newKeySet();
    private final ReferenceQueue<Shrinker> collected = new ReferenceQueue<>();
    private volatile boolean listening;

    private MemoryPressureRegistry() {}

    /** Adds a cache (kernel {@code register_shrinker}); called when the cache is built. */
    Registration register(Shrinker shrinker) {
        expungeCollected();
        listenOnce();
        Registration registration = new Registration(shrinker, collected);
        registrations.add(registration);
        return registration;
    }

    /** Removes a cache (kernel {@code unregister_shrinker}); called when it is closed. */
    void unregister(Registration registration) {
        registrations.remove(registration);
        registration.clear();
    }

    /** Whether the shrinker is registered (for tests: closing its cache must remove it). */
    boolean isRegistered(Shrinker shrinker) {
        for (Registration registration : registrations) {
            if (registration.get() == shrinker) {
                return true;
            }
        }
        return false;
    }

    /** The number of registrations not yet removed, collected ones included until expunged. */
    int registrationCount() {
        expungeCollected();
        return registrations.size();
    }

    /**
     * The pressure handler without a JVM notification: tests call it to drive the path without
     * exhausting the heap.
     */
    void onMemoryPressure() {
        onMemoryPressure(null);
    }

    /**
     * The pressure handler: asks every registered cache to shrink, inside a {@link MemoryPressureEvent}
     * when a recording enables it. Runs on the JVM's notification thread. A cache whose pass throws
     * does not spare the caches after it: every cache is asked, then the first failure is rethrown.
     * Later ones are dropped, not attached as suppressed: under memory pressure they are often the
     * JVM's one preallocated OutOfMemoryError, which cannot suppress itself, and attaching allocates.
     *
     * @param signal the JVM's notification, or {@code null} when called directly
     */
    void onMemoryPressure(MemoryNotificationInfo signal) {
        MemoryPressureEvent event = MemoryPressureEvent.beginIfEnabled();
        expungeCollected();
        int asked = 0;
        Throwable firstFailure = null; // later ones are dropped: attaching them could allocate
        for (Registration registration : registrations) {
            Shrinker shrinker = registration.get();
            if (shrinker != null) {
                asked++;
                try {
                    shrinker.onMemoryPressure();
                } catch (RuntimeException | Error failure) { // one cache's failure must not spare the others
                    if (firstFailure == null) {
                        firstFailure = failure;
                    }
                }
            }
        }
        MemoryPressureEvent.commitIfEnabled(event, signal, asked);
        if (firstFailure instanceof Error) {
            throw (Error) firstFailure;
        }
        if (firstFailure != null) {
            throw (RuntimeException) firstFailure;
        }
    }

    private void expungeCollected() {
        java.lang.ref.Reference<? extends Shrinker> cleared;
        while ((cleared = collected.poll()) != null) {
            registrations.remove(cleared);
        }
    }

    /** Installs the heap-pool thresholds and the notification listener, once per process. */
    private void listenOnce() {
        if (listening) {
            return;
        }
        synchronized (this) {
            if (listening) {
                return;
            }
            listening = true;
            List<MemoryPoolMXBean> pools = pressurePools();
            for (MemoryPoolMXBean pool : pools) {
                long max = pool.getUsage().getMax();
                if (max > 0 && pool.getCollectionUsageThreshold() == 0) {
                    pool.setCollectionUsageThreshold(max / 100 * THRESHOLD_PERCENT);
                }
            }
            if (!pools.isEmpty() && ManagementFactory.getMemoryMXBean() instanceof NotificationEmitter) {
                NotificationEmitter emitter = (NotificationEmitter) ManagementFactory.getMemoryMXBean();
                emitter.addNotificationListener(
                        (notification, handback) -> onMemoryPressure(
                                MemoryNotificationInfo.from((CompositeData) notification.getUserData())),
                        notification -> MemoryNotificationInfo.MEMORY_COLLECTION_THRESHOLD_EXCEEDED
                                .equals(notification.getType()),
                        null);
            }
        }
    }

    /** The heap pools to watch: the old generation, or every heap pool on one-generation collectors. */
    private static List<MemoryPoolMXBean> pressurePools() {
        List<MemoryPoolMXBean> oldGeneration = new ArrayList<>();
        List<MemoryPoolMXBean> heap = new ArrayList<>();
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() != MemoryType.HEAP || !pool.isCollectionUsageThresholdSupported()) {
                continue;
            }
            heap.add(pool);
            String name = pool.getName();
            if (name.contains("Old") || name.contains("Tenured")) {
                oldGeneration.add(pool);
            }
        }
        return oldGeneration.isEmpty() ? heap : oldGeneration;
    }
}
