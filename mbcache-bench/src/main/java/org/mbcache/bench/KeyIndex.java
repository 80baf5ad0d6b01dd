package org.mbcache.bench;

import java.util.SplittableRandom;

/**
 * Pre-generated index sequences, made in {@code @Setup} so the measured path draws no random
 * numbers: a benchmark reads {@code index[cursor++ & MASK]}. Length is a power of two.
 */
public final class KeyIndex {
    /** Length of every index sequence: 2^20 ints (4 MiB), far longer than the populated set. */
    public static final int LENGTH = 1 << 20;
    public static final int MASK = LENGTH - 1;

    public static final String UNIFORM = "uniform";
    public static final String ZIPF = "zipf";

    private KeyIndex() {}

    /** {@code LENGTH} draws from {@code [0, n)} by the named distribution. */
    public static int[] generate(String distribution, int n, long seed) {
        switch (distribution) {
            case UNIFORM: return uniform(n, LENGTH, seed);
            case ZIPF: return scrambledZipfian(n, LENGTH, seed);
            default: throw new IllegalArgumentException("unknown key distribution: " + distribution
                    + " (expected uniform or zipf)");
        }
    }

    public static int[] uniform(int n, int length, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int[] out = new int[length];
        for (int i = 0; i < length; i++) {
            out[i] = rnd.nextInt(n);
        }
        return out;
    }

    /**
     * YCSB's scrambled Zipfian (theta 0.99): Zipf-ranked draws, each rank hashed to an item so the
     * popular items are spread over the key space instead of clustered at the low indices.
     */
    public static int[] scrambledZipfian(int n, int length, long seed) {
        final double theta = 0.99;
        double zetan = 0;
        for (int i = 1; i <= n; i++) {
            zetan += 1.0 / Math.pow(i, theta);
        }
        double zeta2 = 1.0 + 1.0 / Math.pow(2, theta);
        double alpha = 1.0 / (1.0 - theta);
        double eta = (1 - Math.pow(2.0 / n, 1 - theta)) / (1 - zeta2 / zetan);
        SplittableRandom rnd = new SplittableRandom(seed);
        int[] out = new int[length];
        for (int i = 0; i < length; i++) {
            double u = rnd.nextDouble();
            double uz = u * zetan;
            long rank;
            if (uz < 1.0) {
                rank = 0;
            } else if (uz < zeta2) {
                rank = 1;
            } else {
                rank = (long) (n * Math.pow(eta * u - eta + 1, alpha));
            }
            out[i] = (int) Long.remainderUnsigned(fnv64(Math.min(rank, n - 1)), n);
        }
        return out;
    }

    static long fnv64(long v) {
        long h = 0xCBF29CE484222325L;
        for (int i = 0; i < 8; i++) {
            h ^= v & 0xff;
            h *= 0x100000001B3L;
            v >>>= 8;
        }
        return h;
    }

    /** The 32-bit key of a pair with this value: a stand-in for ext4's content hash. */
    public static int keyOf(long value) {
        long z = value * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 32)) * 0xD6E8FEB86659FD93L;
        return (int) (z ^ (z >>> 32));
    }
}
