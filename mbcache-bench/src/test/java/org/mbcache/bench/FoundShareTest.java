package org.mbcache.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FoundShareTest {
    /** Blocks with contents {@code ids[i]}; keys collide on purpose (id mod 3). */
    static List<FoundShare.Block> blocks(int... ids) {
        List<FoundShare.Block> out = new ArrayList<>();
        for (int id : ids) {
            out.add(new FoundShare.Block(id % 3, ByteBuffer.wrap(new byte[] {(byte) id, (byte) (id >> 8)})));
        }
        return out;
    }

    @Test
    void countsBlocksWhoseContentsCameBefore() {
        assertEquals(3, FoundShare.duplicates(blocks(1, 2, 1, 4, 2, 1)));
    }

    @Test
    void findsEveryDuplicateTheCacheStillHoldsThroughCollidingKeys() {
        for (String backend : List.of(Backends.MBCACHE, Backends.CAFFEINE)) {
            assertEquals(3, FoundShare.found(FoundShare.cache(backend, 0), blocks(1, 4, 7, 1, 7, 4)), backend);
        }
    }

    @Test
    void aRestartHalfwayFindsWhatARunWithoutOneFinds() throws Exception {
        List<FoundShare.Block> blocks = blocks(1, 4, 7, 1, 7, 4, 10, 1, 4, 10, 7);
        for (String backend : List.of(Backends.MBCACHE, Backends.CAFFEINE)) {
            assertEquals(FoundShare.found(FoundShare.cache(backend, 0), blocks),
                    FoundShare.foundWithRestart(backend, blocks, 5), backend);
        }
    }

    @Test
    void aResultLineReadsBackAsTheSameResult() {
        FoundShare.Result r = new FoundShare.Result("caffeine", "/x/src.zip", 100, 10, 9, 10);
        assertEquals(r, FoundShare.Result.parse(r.line()));
    }

    @Test
    void aFoundShareLineIsTheTagThenTheRecordAsJsonWithTheSourceWhole() {
        assertEquals("FOUNDSHARE {\"backend\":\"caffeine\",\"source\":\"/x/my src.zip\",\"blocks\":100,\"duplicates\":10,"
                        + "\"foundCapped\":9,\"foundUnbounded\":10}",
                new FoundShare.Result("caffeine", "/x/my src.zip", 100, 10, 9, 10).line());
    }

    @Test
    void aLineWithTooFewFieldsIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> FoundShare.Result.parse("FOUNDSHARE x"));
    }

    @Test
    void theShareIsWhatTheCapFindsOverWhatAnUnboundedIndexFinds() {
        assertEquals(0.9, new FoundShare.Result("caffeine", "/x/src.zip", 100, 10, 9, 10).share(), 1e-12);
    }

    @Test
    void theDefaultChainCapFindsNinetyNinePointNinePercentOfWhatAnUnboundedIndexFindsOnRealFiles() throws Exception {
        Path zip = FoundShare.jdkSources();
        assumeTrue(zip != null, "this JDK has no lib/src.zip");
        List<FoundShare.Block> blocks = FoundShare.blocks(zip, 1 << 15);
        for (String backend : List.of(Backends.MBCACHE, Backends.CAFFEINE)) {
            FoundShare.Result r = FoundShare.measure(backend, zip.toString(), blocks);
            assumeTrue(r.foundUnbounded() > 0, "no duplicates in the first blocks");
            assertTrue(r.share() >= 0.999, r.line());
        }
    }
}
