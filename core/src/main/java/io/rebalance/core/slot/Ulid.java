package io.rebalance.core.slot;

import java.util.Arrays;

/**
 * The time inside a ULID: 48 bits of Unix milliseconds, the first 10 of its 26 Crockford base32 characters.
 * Only what slotting needs: the millisecond of an id, and the smallest id of a millisecond.
 */
public final class Ulid {
    private static final char[] ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ".toCharArray();
    private static final int[] VALUE = new int[128];

    static {
        Arrays.fill(VALUE, -1);
        for (int i = 0; i < ALPHABET.length; i++) {
            VALUE[ALPHABET[i]] = i;
            VALUE[Character.toLowerCase(ALPHABET[i])] = i;
        }
    }

    private Ulid() {}

    /** The smallest ULID of millisecond {@code ms}: its time part followed by 16 zero characters. */
    public static String lowest(long ms) {
        char[] out = new char[26];
        Arrays.fill(out, '0');
        long v = ms;
        for (int i = 9; i >= 0; i--) {
            out[i] = ALPHABET[(int) (v & 31)];
            v >>>= 5;
        }
        return new String(out);
    }

    /** @throws IllegalArgumentException when {@code ulid} is not 26 base32 characters */
    public static long millis(String ulid) {
        if (ulid.length() != 26) throw new IllegalArgumentException("'" + ulid + "' is not a ULID (26 characters)");
        long v = 0;
        for (int i = 0; i < 10; i++) {
            char c = ulid.charAt(i);
            int d = c < 128 ? VALUE[c] : -1;
            if (d < 0) throw new IllegalArgumentException("'" + ulid + "' is not a ULID (bad character '" + c + "')");
            v = (v << 5) | d;
        }
        return v;
    }

    /** A ULID for {@code ms} with the given 80 random bits (hi 16, lo 64), for demo and test data. */
    public static String of(long ms, long randomHi16, long randomLo64) {
        char[] out = lowest(ms).toCharArray();
        // 80 random bits in 16 chars: the first char carries 5 bits of hi, etc. Fill from the right.
        long lo = randomLo64;
        long hi = randomHi16 & 0xFFFF;
        for (int i = 25; i >= 10; i--) {
            out[i] = ALPHABET[(int) (lo & 31)];
            lo = (lo >>> 5) | ((hi & 31) << 59);
            hi >>>= 5;
        }
        return new String(out);
    }
}
