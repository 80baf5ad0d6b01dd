package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link HotCellTable} alone: cells are found by their owner (object, tag and place together) from
 * any first place, an owner has at most one set, the places are the budget of
 * {@value HotReferences#MAX_HOT_ENTRIES}, and retiring drops exactly the holder of the cells given.
 */
class HotCellTableTest {

    private final HotCellTable table = new HotCellTable();
    private final Object owner = new Object();

    @Test
    void publishedCellsAreFoundByTheirOwnerFromAnyFirstPlace() {
        long[] cells = new long[4];

        assertTrue(table.publish(3, owner, 7, 2, cells));

        assertSame(cells, table.cells(3, owner, 7, 2));
        assertSame(cells, table.cells(11, owner, 7, 2), "another first place scans on to it");
        assertEquals(1, table.size());
    }

    @Test
    void cellsAreNotFoundUnderAnotherObjectTagOrPlace() {
        table.publish(3, owner, 7, 2, new long[4]);

        assertNull(table.cells(3, new Object(), 7, 2));
        assertNull(table.cells(3, owner, 8, 2));
        assertNull(table.cells(3, owner, 7, 3));
    }

    @Test
    void anyIntIsAFirstPlaceNegativeOnesIncluded() {
        long[] cells = new long[4];

        assertTrue(table.publish(-1, owner, 0, 0, cells));
        assertTrue(table.publish(Integer.MIN_VALUE, new Object(), 0, 0, new long[4]));

        assertSame(cells, table.cells(-1, owner, 0, 0));
        assertEquals(2, table.size());
    }

    @Test
    void aSecondPublicationForTheSameOwnerIsRefusedAndChangesNothing() {
        long[] first = new long[4];
        table.publish(3, owner, 7, 2, first);

        assertFalse(table.publish(5, owner, 7, 2, new long[4]));

        assertSame(first, table.cells(5, owner, 7, 2));
        assertEquals(1, table.size());
    }

    @Test
    void anOwnerWhoseFirstPlaceIsTakenSitsAtAnotherAndBothAreFound() {
        long[] a = new long[4];
        long[] b = new long[4];
        Object other = new Object();

        assertTrue(table.publish(3, owner, 0, 0, a));
        assertTrue(table.publish(3, other, 0, 0, b));

        assertSame(a, table.cells(3, owner, 0, 0));
        assertSame(b, table.cells(3, other, 0, 0));
    }

    @Test
    void aFullTableRefusesAndARetireGivesAPlaceBack() {
        long[][] cells = new long[HotReferences.MAX_HOT_ENTRIES][];
        for (int i = 0; i < cells.length; i++) {
            cells[i] = new long[4];
            assertTrue(table.publish(0, owner, i, 0, cells[i]));
        }
        long[] over = new long[4];

        assertFalse(table.publish(0, owner, -1, 0, over));
        assertNull(table.cells(0, owner, -1, 0));

        table.retire(cells[5]);
        assertNull(table.cells(0, owner, 5, 0));
        assertTrue(table.publish(0, owner, -1, 0, over));
        assertEquals(HotReferences.MAX_HOT_ENTRIES, table.size());
    }

    @Test
    void retireDropsOnlyTheHolderOfTheseVeryCellsAndTwiceIsANoOp() {
        long[] mine = new long[4];
        long[] equalButOthers = new long[4];
        table.publish(0, owner, 1, 0, mine);
        table.publish(0, owner, 2, 0, equalButOthers);

        table.retire(mine);
        table.retire(mine);
        table.retire(new long[4]);

        assertNull(table.cells(0, owner, 1, 0));
        assertSame(equalButOthers, table.cells(0, owner, 2, 0));
        assertEquals(1, table.size());
    }
}
