package org.mbcache;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The format of {@link CompactMbCache}'s primitive handles, and the tag that tells one cache's
 * handles from another's. A handle is three fields in a {@code long}:
 *
 * <pre>    bits 48-63: the cache's tag    bits 31-47: the slot's generation    bits 0-30: the slot</pre>
 *
 * The generation is the one in the slot's meta word ({@link CompactSlots#GENERATION_MASK}) when the
 * handle was handed out ({@link CompactSlots#slotOf} and {@link CompactSlots#generationOf} take
 * them apart); the slot is below {@link CompactTable}'s slot limit (under {@code 1.7 x 2^30}), so
 * bits 0-30 are never all set, nor all set but the lowest two, and no handle equals
 * {@link CompactMbCache#NO_ENTRY} (-1), nor the negative answers of {@link CompactWalk}, whatever
 * the tag. The walks inside the cache pass untagged handles (tag 0) among themselves
 * ({@link CompactSlots#handleOf}, the contention vote's keys); every handle a public method returns
 * carries the cache's tag ({@link CompactTable#handleTag}, ORed in where the handle leaves the
 * cache: {@code countLookup}, {@code deleteOrGetHandle}), and every public method that takes one refuses a handle
 * of another tag, or of a slot outside the slots handed out, before it reads the slot
 * ({@code CompactMbCache.pageOf}: one compare of the tag bits with a final field).
 *
 * <p>The tag: the number of compact tables (one a cache) made in the JVM up to this one, times an
 * odd constant, modulo {@code 2^16}. Multiplying by an odd number is a bijection modulo a power of two,
 * so the first 65,536 caches of a JVM get 65,536 distinct tags, and caches made one after another get
 * tags far apart. A handle of another cache is refused unless that cache was made a multiple of
 * 65,536 caches before or after this one; a forged {@code long} is refused unless its top 16 bits
 * happen to be the tag and its low 31 a slot handed out (then, with the wrong generation, it reads
 * stale, {@link CompactSlots#isStale}).
 */
final class CompactHandles {

    private CompactHandles() {}

    /** Where a handle's tag starts. */
    static final int TAG_SHIFT = 48;
    /** The tag bits of a handle. */
    static final long TAG_MASK = 0xFFFFL << TAG_SHIFT;
    /** Odd, so that {@code i * TAG_MULTIPLIER mod 2^16} takes 65,536 distinct values over 65,536 {@code i}. */
    private static final int TAG_MULTIPLIER = 0x9E37;
    /** Compact caches made so far in this JVM (tags drawn). */
    private static final AtomicInteger TAGS_DRAWN = new AtomicInteger();

    /** A new cache's tag, in place in the handle's top 16 bits. */
    static long newTag() {
        int drawn = TAGS_DRAWN.incrementAndGet();
        return (long) ((drawn * TAG_MULTIPLIER) & 0xFFFF) << TAG_SHIFT;
    }

    /** The exception for a handle of another cache, a forged one, or one of a slot never handed out. */
    static IllegalArgumentException notOurs(long handle) {
        return new IllegalArgumentException("not a handle of this cache: " + Long.toHexString(handle));
    }
}
