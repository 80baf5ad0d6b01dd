package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.MemoryNotificationInfo;
import java.lang.management.MemoryUsage;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The flight-recorder events, recorded with {@link Recording} and read back with {@link RecordingFile}:
 * each test enables one event, acts, and checks the fields of what was recorded.
 */
class JfrEventsTest {

    @TempDir
    Path dir;

    /** Runs {@code action} inside a recording that enables only {@code eventName}; its events of that name. */
    private List<RecordedEvent> record(String eventName, Runnable action) throws IOException {
        Path file = dir.resolve(eventName + ".jfr");
        try (Recording recording = new Recording()) {
            recording.enable(eventName);
            recording.start();
            action.run();
            recording.stop();
            recording.dump(file);
        }
        return RecordingFile.readAllEvents(file).stream()
                .filter(event -> event.getEventType().getName().equals(eventName))
                .collect(Collectors.toList());
    }

    private static RecordedEvent only(List<RecordedEvent> events) {
        assertEquals(1, events.size(), () -> "events: " + events);
        return events.get(0);
    }

    @Test
    void aPressureSignalRecordsThePoolItCameFromAndTheCachesAsked() throws IOException {
        MemoryNotificationInfo signal = new MemoryNotificationInfo(
                "Test Old Gen", new MemoryUsage(0, 900, 1_000, 1_000), 3);
        try (MbCache cache = MbCache.create(2)) {
            RecordedEvent event = only(record(MemoryPressureEvent.NAME,
                    () -> MemoryPressureRegistry.INSTANCE.onMemoryPressure(signal)));

            assertEquals("Test Old Gen", event.getString("pool"));
            assertEquals(900, event.getLong("poolUsed"));
            assertEquals(1_000, event.getLong("poolMax"));
            assertEquals(3, event.getLong("thresholdCount"));
            assertTrue(event.getInt("caches") >= 1, "the open cache was asked to shrink");
        }
    }

    @Test
    void aPressureCallWithoutASignalRecordsNoPool() throws IOException {
        RecordedEvent event = only(record(MemoryPressureEvent.NAME,
                () -> MemoryPressureRegistry.INSTANCE.onMemoryPressure()));

        assertEquals(MemoryPressureEvent.NO_POOL, event.getString("pool"));
        assertEquals(-1, event.getLong("poolMax"));
    }

    @Test
    void withoutARecordingTheEventsAreOffAndAllocateNothing() {
        assertNull(MemoryPressureEvent.beginIfEnabled());
        assertNull(ReclaimPassEvent.beginIfEnabled(ReclaimPassEvent.Kind.BACKGROUND));
    }

    @Test
    void whileNoRecordingEnablesThemTheEventsAllocateNothing() {
        int calls = 20_000;
        Object cache = new Object();
        Runnable emitAll = () -> {
            for (int i = 0; i < calls; i++) {
                ReclaimPassEvent pass = ReclaimPassEvent.beginIfEnabled(ReclaimPassEvent.Kind.BACKGROUND);
                ReclaimPassEvent.commitIfEnabled(pass, cache, i, i, i);
                ChainCapEvent.commitIfEnabled(cache, i, i, i, i);
                MemoryPressureEvent.commitIfEnabled(MemoryPressureEvent.beginIfEnabled(), null, i);
            }
        };
        emitAll.run(); // warm up, so the measured loop runs compiled code
        long before = AllocatedBytes.byCurrentThread();
        emitAll.run();
        long bytes = AllocatedBytes.byCurrentThread() - before;
        // Under a byte per call: one event object is 24 bytes or more, so any per-call allocation
        // fails this by far; what remains is the reflective counter call's own few hundred bytes.
        assertTrue(bytes < calls, bytes + " bytes for " + calls + " rounds of disabled events");
    }

    @Test
    void aRecordingThatDisablesTheEventRecordsNothing() throws IOException {
        Path file = dir.resolve("disabled.jfr");
        try (Recording recording = new Recording()) {
            recording.disable(MemoryPressureEvent.NAME);
            recording.start();
            MemoryPressureRegistry.INSTANCE.onMemoryPressure();
            recording.stop();
            recording.dump(file);
        }
        assertTrue(RecordingFile.readAllEvents(file).stream()
                .noneMatch(event -> event.getEventType().getName().equals(MemoryPressureEvent.NAME)));
    }

    @Test
    void aReclaimPassEventCarriesItsKindAndCounts() throws IOException {
        Object cache = new Object();
        RecordedEvent event = only(record(ReclaimPassEvent.NAME, () -> {
            ReclaimPassEvent pass = ReclaimPassEvent.beginIfEnabled(ReclaimPassEvent.Kind.MEMORY_PRESSURE);
            ReclaimPassEvent.commitIfEnabled(pass, cache, 7, 5, 2);
        }));

        assertReclaimPass(event, "memory pressure", cache, 7, 5, 2);
    }

    private static void assertReclaimPass(RecordedEvent event, String kind, Object cache, long scanned,
            long freed, long secondChances) {
        assertEquals(kind, event.getString("kind"));
        assertEquals(ReclaimPassEvent.cacheName(cache), event.getString("cache"));
        assertEquals(scanned, event.getLong("scanned"));
        assertEquals(freed, event.getLong("freed"));
        assertEquals(secondChances, event.getLong("secondChances"));
    }

    @Test
    void aChainCapEventCarriesTheChainAndWhatWasReclaimed() throws IOException {
        Object cache = new Object();
        RecordedEvent event = only(record(ChainCapEvent.NAME,
                () -> ChainCapEvent.commitIfEnabled(cache, 42, 8, 8, 1)));

        assertEquals(ReclaimPassEvent.cacheName(cache), event.getString("cache"));
        assertEquals(42, event.getInt("key"));
        assertEquals(8, event.getInt("chainLength"));
        assertEquals(8, event.getInt("chainCap"));
        assertEquals(1, event.getInt("reclaimed"));
    }

    @Test
    void shrinkRecordsARequestedPassWithWhatItScannedFreedAndSpared() throws IOException {
        try (MbCache cache = MbCache.create(4)) {
            for (int i = 1; i <= 4; i++) {
                cache.create(i, i, true);
            }
            CacheEntry touched = cache.get(1, 1);
            cache.touch(touched);
            cache.release(touched);

            RecordedEvent event = only(record(ReclaimPassEvent.NAME, () -> cache.shrink(4)));

            assertReclaimPass(event, "requested", cache, 4, 3, 1);
        }
    }

    @Test
    void aCreateIntoAFullChainRecordsTheCapReclaim() throws IOException {
        try (MbCache cache = MbCache.builder().bucketBits(0).chainCap(4).build()) {
            for (int i = 1; i <= 4; i++) {
                cache.create(i, i, true);
            }

            RecordedEvent event = only(record(ChainCapEvent.NAME, () -> cache.create(5, 5, true)));

            assertEquals(5, event.getInt("key"));
            assertEquals(4, event.getInt("chainLength"));
            assertEquals(4, event.getInt("chainCap"));
            assertEquals(1, event.getInt("reclaimed"));
        }
    }
}
