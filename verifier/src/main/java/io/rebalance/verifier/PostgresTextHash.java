package io.rebalance.verifier;

/**
 * Postgres's {@code hashtextextended(text, 0)} in Java: Bob Jenkins' lookup3 hash over the text's bytes, as Postgres
 * computes it on a little-endian machine, its two final 32-bit words ({@code b}, {@code c}) made one 64-bit value. It
 * is what Postgres's hash partitioning keeps stable across versions; {@link RowHash#probe} checks, once per verify,
 * that the source's answer agrees before it is used.
 */
final class PostgresTextHash {
    private PostgresTextHash() {}

    /** The hash of {@code k}, seed 0; bytes are read as little-endian 32-bit words, 12 bytes a round. */
    static long of(byte[] k) {
        int len = k.length;
        int a = 0x9e3779b9 + len + 3923095;
        int b = a;
        int c = a;
        int i = 0;
        while (len - i >= 12) {
            a += word(k, i);
            b += word(k, i + 4);
            c += word(k, i + 8);
            // mix(a, b, c)
            a -= c;
            a ^= Integer.rotateLeft(c, 4);
            c += b;
            b -= a;
            b ^= Integer.rotateLeft(a, 6);
            a += c;
            c -= b;
            c ^= Integer.rotateLeft(b, 8);
            b += a;
            a -= c;
            a ^= Integer.rotateLeft(c, 16);
            c += b;
            b -= a;
            b ^= Integer.rotateLeft(a, 19);
            a += c;
            c -= b;
            c ^= Integer.rotateLeft(b, 4);
            b += a;
            i += 12;
        }
        // the last 0 to 11 bytes; the lowest byte of c is left for the length, so c takes bytes 8-10 one place up
        int rest = len - i;
        if (rest > 8) c += partial(k, i + 8, rest - 8) << 8;
        if (rest > 4) b += partial(k, i + 4, Math.min(rest - 4, 4));
        if (rest > 0) a += partial(k, i, Math.min(rest, 4));
        // final(a, b, c)
        c ^= b;
        c -= Integer.rotateLeft(b, 14);
        a ^= c;
        a -= Integer.rotateLeft(c, 11);
        b ^= a;
        b -= Integer.rotateLeft(a, 25);
        c ^= b;
        c -= Integer.rotateLeft(b, 16);
        a ^= c;
        a -= Integer.rotateLeft(c, 4);
        b ^= a;
        b -= Integer.rotateLeft(a, 14);
        c ^= b;
        c -= Integer.rotateLeft(b, 24);
        return ((long) b << 32) | (c & 0xffffffffL);
    }

    private static int word(byte[] k, int at) {
        return partial(k, at, 4);
    }

    /** Up to four bytes from {@code at} as a little-endian word, the missing high bytes zero. */
    private static int partial(byte[] k, int at, int n) {
        int w = 0;
        for (int j = n - 1; j >= 0; j--) w = (w << 8) | (k[at + j] & 0xff);
        return w;
    }
}
