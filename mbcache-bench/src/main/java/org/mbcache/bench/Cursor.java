package org.mbcache.bench;

import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Per-thread position in the pre-generated index ({@code pos}) and a per-thread counter of
 * never-seen values ({@code next}): thread t owns values {@code (t+1) << 40 ...}, disjoint from
 * the populated pairs and from every other thread.
 */
@State(Scope.Thread)
public class Cursor {
    private static final AtomicInteger THREADS = new AtomicInteger();

    public int pos;
    public long next;

    @Setup(Level.Trial)
    public void setUp() {
        int t = THREADS.getAndIncrement();
        pos = t * (KeyIndex.LENGTH / 8 + 97);
        next = (t + 1L) << 40;
    }
}
