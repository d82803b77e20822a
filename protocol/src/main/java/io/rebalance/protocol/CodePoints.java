package io.rebalance.protocol;

/** Text order by Unicode code point: UTF-8 byte order, and Postgres' {@code COLLATE "C"} on UTF-8. */
public final class CodePoints {
    private CodePoints() {}

    /** Compares {@code a} and {@code b} code point by code point (a surrogate pair is one code point, not two chars). */
    public static int compare(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) return Integer.compare(ca, cb);
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }
}
