package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link LineReclaimBand}: entered at the bound, left an eighth below it. */
class LineReclaimBandTest {

    @Test
    void aCacheFillingUpIsOutsideTheBandUntilItsBound() {
        LineReclaimBand band = new LineReclaimBand(1_600);
        for (long count = 0; count < 1_600; count += 100) {
            assertFalse(band.allows(count));
        }
        assertTrue(band.allows(1_600));
    }

    @Test
    void onceEnteredTheBandHoldsDownToAnEighthBelowTheBound() {
        LineReclaimBand band = new LineReclaimBand(1_600);
        assertTrue(band.allows(1_700));
        assertTrue(band.allows(1_500));
        assertTrue(band.allows(1_400));
    }

    @Test
    void belowAnEighthUnderTheBoundTheBandIsLeftUntilTheBoundAgain() {
        LineReclaimBand band = new LineReclaimBand(1_600);
        assertTrue(band.allows(1_600));
        assertFalse(band.allows(1_399));
        assertFalse(band.allows(1_500), "left: back only at the bound");
        assertTrue(band.allows(1_600));
    }
}
