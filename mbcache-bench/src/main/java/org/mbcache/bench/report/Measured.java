package org.mbcache.bench.report;

import java.util.List;
import org.mbcache.bench.Flood;
import org.mbcache.bench.FoundShare;
import org.mbcache.bench.RetainedMemory;
import org.mbcache.bench.XattrBench;

/**
 * What the plain harnesses measured beside JMH, for the report and the targets; any list may be
 * empty (not run).
 *
 * @param memory retained bytes per entry, per backend
 * @param xattr xattr-bench, per backend, threads and values
 * @param flood the flood benchmark, per backend, size and kind of flood
 * @param foundShare the real-file found-share, per backend
 */
public record Measured(List<RetainedMemory.Result> memory, List<XattrBench.Result> xattr, List<Flood.Result> flood,
                       List<FoundShare.Result> foundShare) {
    /** Copies the lists. */
    public Measured {
        memory = List.copyOf(memory);
        xattr = List.copyOf(xattr);
        flood = List.copyOf(flood);
        foundShare = List.copyOf(foundShare);
    }

    /** Nothing but JMH results (the {@code table} command). */
    public static Measured none() {
        return new Measured(List.of(), List.of(), List.of(), List.of());
    }
}
