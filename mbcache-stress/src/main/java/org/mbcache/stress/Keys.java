package org.mbcache.stress;

/** The keys and values the stress tests use: distinctive bit patterns, so a torn or default read shows. */
final class Keys {

    /** The key of the pair under test (nonzero in both halves, so a default 0 never matches). */
    static final int KEY = 0x6A09_E667;

    /** The value of the pair under test. */
    static final long VALUE = 0x1234_5678_9ABC_DEF0L;

    /** A second value under {@link #KEY}: a hash collision, as ext4 sees when two blocks hash alike. */
    static final long OTHER_VALUE = 0x0FED_CBA9_8765_4321L;

    private Keys() {
    }
}
