package io.rebalance.protocol;

import java.util.Map;

/** Fields of a Redis hash read back: every value is text there, and a field may be absent or empty. */
public final class HashFields {
    private HashFields() {}

    /** The field as a number, or {@code none} when it is absent or empty. */
    public static long number(Map<String, String> hash, String field, long none) {
        String v = hash.get(field);
        return v == null || v.isEmpty() ? none : Long.parseLong(v);
    }
}
