package org.mbcache.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TscTest {
    @Test
    void prefersRefinedCalibrationThenDetected() {
        String dmesg = "[    0.000024] tsc: Detected 2445.406 MHz processor\n"
                + "[    1.2] tsc: Refined TSC clocksource calibration: 2445.500 MHz\n";
        assertEquals(2.4455, Tsc.fromDmesg(dmesg).ghz(), 1e-9);
        assertEquals(2.445406, Tsc.fromDmesg("[ 0.0] tsc: Detected 2445.406 MHz processor").ghz(), 1e-9);
        assertNull(Tsc.fromDmesg("nothing here"));
        assertNull(Tsc.fromDmesg(null));
    }

    @Test
    void fallsBackToCpuMhz() {
        Tsc t = Tsc.fromCpuinfo("processor\t: 0\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2445.406\n");
        assertEquals(2.445406, t.ghz(), 1e-9);
        assertTrue(t.source().contains("cpu MHz"));
        assertEquals(24.45406, t.cycles(10), 1e-9);
        assertTrue(t.label().startsWith("TSC cycles, not core cycles: ns/op × 2.445 GHz TSC"));
    }

    @Test
    void perfCountsOnlyWithANumber() {
        assertFalse(Tsc.perfOutputCounts(" Performance counter stats for 'true':\n\n   <not supported>      instructions\n"));
        assertTrue(Tsc.perfOutputCounts(" Performance counter stats for 'true':\n\n       1,234,567      instructions   # 0.5 insn per cycle\n"));
        assertFalse(Tsc.perfOutputCounts(null));
    }
}
