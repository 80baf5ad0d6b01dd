package org.mbcache.internal;

/** Arithmetic that stops at {@link Long#MAX_VALUE} instead of wrapping: bounds built from user input. */
public final class Saturating {
    private Saturating() {
    }

    /**
     * Twice a count, or {@link Long#MAX_VALUE} if that overflows: {@code 2 * maxEntries}, where
     * creates start reclaiming synchronously, or twice the entries present, a reclaim pass's budget.
     *
     * @param count not negative
     * @return {@code 2 * count}, saturated
     */
    public static long twice(long count) {
        return count > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : 2 * count;
    }
}
