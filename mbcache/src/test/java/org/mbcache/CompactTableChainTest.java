package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CompactTable}'s chains, driven directly on a quiet one-bucket table: chain positions keep
 * their order (0 the oldest) through adds and through removals at every position, in chains that
 * grow past the record's {@value CompactTable#INLINE} inline references and shrink back; the record
 * holds the newest of them and the overflow array the older ones; and {@code clear} leaves an empty
 * record.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CompactTableChainTest {

    private static final int INLINE = CompactTable.INLINE;

    private static CompactTable table() {
        return new CompactTable(1, 16, 10, KeyedIndex.seed(7L));
    }

    /**
     * A live slot of a fresh key (count 1, so that a rebuild of the filters can read its key), hashed
     * as the newest of bucket 0's chain; its reference, which the caller appends to its model.
     */
    private static int addNewest(CompactTable table) {
        int slot = table.allocate();
        int key = slot * 0x9E37_79B9;
        long[] page = table.slotPage(slot);
        int at = table.valueIndex(slot);
        CompactSlots.soMeta(page, at, (long) key << 32 | 1);
        int ref = table.fingerprintOf(key) | slot;
        table.lock(0);
        try {
            table.ensureRoom(0);
            table.addNewest(0, ref, table.filterMix(key));
        } finally {
            table.unlock(0);
        }
        return ref;
    }

    /** Removes chain position {@code pos} of bucket 0 and frees its slot; the model follows. */
    private static void removeAt(CompactTable table, List<Integer> chain, int pos) {
        table.lock(0);
        try {
            table.removeAt(0, pos);
        } finally {
            table.unlock(0);
        }
        int ref = chain.remove(pos);
        long[] page = table.slotPage(table.slotOfRef(ref));
        CompactSlots.soMeta(page, table.valueIndex(table.slotOfRef(ref)), 0);
        table.free(table.slotOfRef(ref));
    }

    /** The chain through {@code refAt}, oldest first, and its length, are the model's. */
    private static void checkOrder(CompactTable table, List<Integer> chain, Supplier<String> where) {
        assertEquals(chain.size(), table.length(0), () -> where.get() + ": the length");
        for (int pos = 0; pos < chain.size(); pos++) {
            int p = pos;
            assertEquals(chain.get(pos), table.refAt(0, pos), () -> where.get() + ": position " + p);
        }
    }

    @Test
    void removalsAtEveryPositionKeepTheOrderOfChainsUpToPastTheRecord() {
        int cases = 0;
        for (int length = 1; length <= 2 * INLINE + 10; length++) {
            for (int removed = 0; removed < length; removed++) {
                CompactTable table = table();
                List<Integer> chain = new ArrayList<>();
                for (int i = 0; i < length; i++) {
                    chain.add(addNewest(table));
                }
                String at = "length " + length + ", removing position " + removed;
                checkOrder(table, chain, () -> at + ", before");
                removeAt(table, chain, removed);
                checkOrder(table, chain, () -> at + ", after the removal");
                chain.add(addNewest(table));
                checkOrder(table, chain, () -> at + ", after an add that follows it");
                cases++;
            }
        }
        assertEquals(40 * 41 / 2, cases);
    }

    @Test
    void aRandomWalkAcrossTheRecordsEdgeKeepsTheOrder() {
        Random random = new Random(15);
        CompactTable table = table();
        List<Integer> chain = new ArrayList<>();
        int crossings = 0;
        for (int step = 0; step < 20_000; step++) {
            boolean wasInline = chain.size() <= INLINE;
            // lengths wander between 0 and about 3 * INLINE, up past the record and back down
            boolean adding = chain.isEmpty() || chain.size() < 3 * INLINE && random.nextInt(100) < (step / 500 % 2 == 0 ? 60 : 40);
            if (adding) {
                chain.add(addNewest(table));
            } else {
                int pos = switch (random.nextInt(4)) {
                    case 0 -> 0;
                    case 1 -> chain.size() - 1;
                    case 2 -> Math.max(0, chain.size() - INLINE - random.nextInt(2)); // at the edge
                    default -> random.nextInt(chain.size());
                };
                removeAt(table, chain, pos);
            }
            if (wasInline != (chain.size() <= INLINE)) {
                crossings++;
            }
            int s = step;
            checkOrder(table, chain, () -> "step " + s);
        }
        assertTrue(crossings >= 100, "the chain crossed the record's edge " + crossings + " times");
    }

    @Test
    void theRecordHoldsTheNewestFifteenNewestFirstAndTheOverflowArrayTheOlderOnes() {
        Random random = new Random(42);
        CompactTable table = table();
        List<Integer> chain = new ArrayList<>();
        for (int step = 0; step < 4_000; step++) {
            if (chain.isEmpty() || chain.size() < 40 && random.nextInt(100) < (step / 400 % 2 == 0 ? 65 : 35)) {
                chain.add(addNewest(table));
            } else {
                removeAt(table, chain, random.nextInt(chain.size()));
            }
            int length = chain.size();
            int first = Math.max(0, length - INLINE);
            assertEquals(first, CompactTable.firstInline(length));
            for (int i = 0; i < INLINE; i++) {
                int expected = i < length ? chain.get(length - 1 - i) : 0;
                int index = i;
                assertEquals(expected, table.inlineRef(0, i),
                        () -> "length " + length + ": inline reference " + index + " (zero past the chain)");
            }
            int[] spill = table.lpOverflow(0);
            for (int pos = 0; pos < first; pos++) {
                assertEquals(chain.get(pos), spill[pos], "length " + length + ": overflow position " + pos);
            }
        }
    }

    @Test
    void clearLeavesAnEmptyRecordWhateverTheLength() {
        for (int length : new int[] {1, INLINE - 1, INLINE, INLINE + 1, 2 * INLINE + 3}) {
            CompactTable table = table();
            for (int i = 0; i < length; i++) {
                addNewest(table);
            }
            table.lock(0);
            try {
                table.clear(0);
            } finally {
                table.unlock(0);
            }
            assertEquals(0, table.length(0), "length " + length);
            for (int i = 0; i < INLINE; i++) {
                assertEquals(0, table.inlineRef(0, i), "length " + length + ": inline reference " + i);
            }
            assertNull(table.lpOverflow(0), "length " + length + ": the overflow array");
        }
    }
}
