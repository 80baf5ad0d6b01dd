package org.mbcache.stress;

/** The keys and values the stress tests use: distinctive bit patterns, so a torn or default read shows. */
final class Keys {

    /** The key of the pair under test (nonzero in both halves, so a default 0 never matches). */
    static final int KEY = 0x6A09_E667;

    /** The value of the pair under test. */
    static final long VALUE = 0x1234_5678_9ABC_DEF0L;

    /** A second value under {@link #KEY}: a hash collision, as ext4 sees when two blocks hash alike. */
    static final long OTHER_VALUE = 0x0FED_CBA9_8765_4321L;

    /**
     * Another key, to share a bucket with {@link #KEY} in a one-bucket cache ({@code bucketBits} 0): a
     * lookup of {@link #KEY} then scans past entries of a different key.
     */
    static final int OTHER_KEY = 0xBB67_AE85;

    /**
     * The {@code i}-th filler value: entries the races create around the pair under test, distinct from
     * {@link #VALUE}, {@link #OTHER_VALUE} and each other.
     */
    static long filler(int i) {
        return 0x3C6E_F372_0000_0000L + i;
    }

    private Keys() {
    }
}
