package org.mbcache;

import java.security.SecureRandom;

/**
 * The keyed index of both tables of the kernel port: which bucket a key goes to, chosen with a
 * per-cache secret, so that whoever chooses keys cannot aim them at one bucket.
 *
 * <p>The kernel picks a bucket with {@code hash_32} ({@link #hash32}), a fixed function: whoever
 * chooses keys (and content hashes are chosen by whoever writes content) can aim any number of
 * distinct keys at one bucket. Here the bucket of a key is {@code (a * p + b) mod 2^64}, its top
 * bits, with {@code a} (odd) and {@code b} drawn per cache from {@link SecureRandom}:
 * Dietzfelbinger's multiply-add-shift, a 2-independent family for 32-bit keys, so two distinct keys
 * chosen without knowledge of the seed share a bucket with probability {@code 1 / buckets}. Equal
 * keys cannot be spread by any hash: the tables bound the chain instead (the chain cap).
 *
 * <p>The key goes in premixed ({@link #keyedHash}): {@code p} is the key XORed with a secret word
 * of the seed and passed through a fixed bijection of 32 bits (xorshift 16, an odd multiply,
 * xorshift 15: the first round of a well-avalanching 32-bit integer hash). A bijection keeps
 * distinct keys distinct, so the family's bound holds as before. What it removes is
 * multiply-add-shift's weak spot: it promises pairs, not the longest chain, and keys in arithmetic
 * progression ({@code 0, 1, 2, ...} or {@code k * 4096}: sequence numbers, block numbers) land on a
 * Weyl sequence that a multiplier near a fraction with a small denominator folds onto a few buckets;
 * premixed, they spread as random keys do. The secret keeps an attacker who knows the bijection from
 * choosing keys whose premixed values form such a progression. The index costs one 64-bit multiply
 * and an add, the premix a 32-bit multiply, two shifts and three XORs: a few cycles on the way to
 * the bucket's address (docs/benchmarks.md has the measurement).
 *
 * <p>The tables keep their own copies of the seed's values, beside their arrays, so that a lookup
 * reads them from the table's own lines; the function is this one.
 */
final class KeyedIndex {
    private KeyedIndex() {}

    /**
     * Four 64-bit words: from {@link SecureRandom}, or expanded from a fixed seed (SplitMix64). The
     * index takes the multiplier from the first, the increment from the second and the premix
     * secret from the fourth ({@link #premixSecret}); a table may take a value fingerprint's
     * multiplier from the third.
     *
     * @param hashSeed a fixed seed, or {@code null} to draw one
     */
    static long[] seed(Long hashSeed) {
        if (hashSeed == null) {
            SecureRandom random = new SecureRandom();
            return new long[] {random.nextLong(), random.nextLong(), random.nextLong(), random.nextLong()};
        }
        long state = hashSeed;
        long[] seed = new long[4];
        for (int i = 0; i < seed.length; i++) {
            long z = (state += 0x9E3779B97F4A7C15L);
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            seed[i] = z ^ (z >>> 31);
        }
        return seed;
    }

    /** The index's multiplier of a {@link #seed}: its first word, made odd. */
    static long multiplier(long[] seed) {
        return seed[0] | 1L;
    }

    /** The index's increment of a {@link #seed}: its second word. */
    static long increment(long[] seed) {
        return seed[1];
    }

    /** The premix secret of a {@link #seed}: the low half of its fourth word. */
    static int premixSecret(long[] seed) {
        return (int) seed[3];
    }

    /**
     * The keyed hash: {@code a * p + b mod 2^64}, {@code p} the key premixed (see the class
     * comment). Its top bits pick the bucket; the tables take their fingerprints and filter bits
     * from the rest.
     */
    static long keyedHash(int key, int premixSecret, long multiplier, long increment) {
        int p = key ^ premixSecret;
        p ^= p >>> 16;
        p *= 0x7FEB_352D;
        p ^= p >>> 15;
        return multiplier * (p & 0xFFFF_FFFFL) + increment;
    }

    /**
     * The kernel's {@code hash_32(key, bits)}: multiply by the golden-ratio constant as an unsigned
     * 32-bit number and keep the top {@code bits} bits; bucket 0 when {@code bits == 0}. What the
     * kernel does, kept for comparison: the tables use {@link #keyedHash} instead.
     */
    static int hash32(int key, int bits) {
        return bits == 0 ? 0 : (key * 0x61C88647) >>> (32 - bits);
    }
}
