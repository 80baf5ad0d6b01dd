package org.mbcache.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.mbcache.bench.Flood;
import org.mbcache.bench.FoundShare;

class FloodTableTest {
    /** A flood with every figure measured. */
    private static final Flood.Result MEASURED = new Flood.Result("mbcache", 65_536, Flood.ONE_KEY, 400, 200, 150, 240,
            900, 950, 1000, 1200, 131_072, 131_072, 130_000, 120, 132, 410, 210, 160, 250, 20_000, 3, 1_234);
    /** A flood cut short: no means, zero figures under ratios, one unmeasured percentile. */
    private static final Flood.Result CUT_SHORT = new Flood.Result("caffeine", 1_048_576, Flood.ONE_BUCKET, 12.5, 0,
            1.25, 3_456.7, 9.99, Double.NaN, 0, 15, 1_500_000, 2_097_152, 0, 0, 2, Double.NaN, Double.NaN, Double.NaN,
            Double.NaN, 0, 0, 0);

    @Test
    void theFloodTableIsOneRowAFloodUnderItsHeadersThenTheMethod() {
        assertEquals("""
                | flood | maxEntries | backend | attacker create ns | honest new create ns | attacker ÷ honest | \
                victim ns before | victim ns during | victims during ÷ before | honest ns before | honest ns during \
                | honest during ÷ before | honest p99.9 ns before | honest p99.9 ns during | p99.9 during ÷ before | \
                victim p99.9 ns before | victim p99.9 ns during | attacker creates (of planned) | chain-cap reclaims \
                | single-op samples | rounds dropped (GC / preempted) |
                | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | \
                ---: | ---: | ---: | ---: | ---: | ---: | ---: |
                | one-key | 65,536 | mbcache | 400 (410) | 200 (210) | 2.00 | 150 (160) | 240 (250) | 1.60 | 120 | \
                132 | 1.10 | 1000 | 1200 | 1.20 | 900 | 950 | 131,072 (of 131,072) | 130,000 | 20,000 | 3 / 1,234 |
                | one-bucket | 1,048,576 | caffeine | 12.5 | 0.00 | — | 1.25 | 3457 | 2765.36 | 0.00 | 2.00 | — | \
                0.00 | 15.0 | — | 9.99 | NaN | 1,500,000 (of 2,097,152) | 0 | 0 | 0 / 0 |

                One thread. Medians (means in parentheses) of batches of 16 operations timed together with \
                System.nanoTime, per operation; p99.9 of single operations timed alone (one nanoTime pair included). \
                Every kind of flood ran completely on a throwaway cache first (JIT warm-up); each phase starts after \
                System.gc() and a pause, and rounds during which a collection ran are dropped: GC pauses are \
                excluded; so are rounds in which the measuring thread waited for a CPU (Linux's run_delay: another \
                process's or this JVM's background threads'). Half-full cache of honest pairs; before: rounds of a \
                batch of honest new creates, of victim and of honest operations, then one victim and one honest \
                operation alone; flood: 2 × maxEntries attacker creates (fewer when the phase ran out of time) in \
                batches, every 4th followed by a batch of honest new creates; during: the before phase's rounds, \
                each behind a batch of attacker creates. victim: get + release of an honest pair in the attacked \
                bucket (one-key: of the attacked key), then create + deleteOrGet of a new pair with its key; honest: \
                the same on a uniformly drawn honest pair; honest new create: a never-seen pair, at the same fill as \
                the attacker's (flood and during phases). mbcache bucketBits: 12 at 65,536, 16 at 1,048,576, fixed \
                hashSeed.
                """, FloodTable.markdown(List.of(MEASURED, CUT_SHORT)));
    }

    @Test
    void theFoundShareTableIsOneRowABackendWithADashForAShareOfNothing() {
        assertEquals("""
                | backend | blocks | duplicates | found, default cap | found, unbounded | share |
                | --- | ---: | ---: | ---: | ---: | ---: |
                | mbcache | 65,536 | 12,345 | 12,340 | 12,345 | 99.96% |
                | caffeine | 172 | 0 | 0 | 0 | — |

                4 KiB blocks of /x/lib/src.zip (each file from a block boundary, zero-padded), CRC32C keys, ext4's \
                find-compare-share-or-create, 16,384 entries (mbcache bucketBits 10), reclaim on the calling thread.
                """, FloodTable.foundShareMarkdown(List.of(
                        new FoundShare.Result("mbcache", "/x/lib/src.zip", 65_536, 12_345, 12_340, 12_345),
                        new FoundShare.Result("caffeine", "/x/lib/src.zip", 172, 0, 0, 0))));
    }
}
