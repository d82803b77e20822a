package io.rebalance.core.codec;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * DynamoDB's item size, computed as its documentation states it: attribute names plus values, strings in UTF-8
 * bytes, numbers about one byte per two significant digits plus one, 1 byte for BOOL and NULL, 3 bytes plus one per
 * element for lists and maps. Used to refuse an oversized row before a batch fails for it.
 */
public final class ItemSize {
    /** DynamoDB's limit for one item, names and values together. */
    public static final int MAX_BYTES = 400 * 1024;

    /** DynamoDB bills a write per started kilobyte of the item. */
    public static final int WRITE_UNIT_BYTES = 1024;

    /**
     * What an index entry weighs beyond the item's attributes, as DynamoDB documents it; the slot index projects
     * every attribute, so each put also writes an entry of the item's size plus this.
     */
    public static final int INDEX_ENTRY_OVERHEAD_BYTES = 100;

    private ItemSize() {}

    /** Write units one put of an item of {@code bytes} consumes on the table: one per started kilobyte. */
    public static long tableUnits(long bytes) {
        return Math.max(1, (bytes + WRITE_UNIT_BYTES - 1) / WRITE_UNIT_BYTES);
    }

    /** Write units the same put consumes on the slot index, which holds a copy of the item. */
    public static long indexUnits(long bytes) {
        return tableUnits(bytes + INDEX_ENTRY_OVERHEAD_BYTES);
    }

    /**
     * Whether the item is over DynamoDB's limit. A cheap upper bound (3 bytes per UTF-16 char, a byte per digit)
     * settles almost every item without counting UTF-8 bytes or parsing numbers.
     */
    public static boolean exceedsLimit(Map<String, AttributeValue> item) {
        long bound = 0;
        for (Map.Entry<String, AttributeValue> e : item.entrySet())
            bound += 3L * e.getKey().length() + upperBound(e.getValue());
        return bound > MAX_BYTES && of(item) > MAX_BYTES;
    }

    private static long upperBound(AttributeValue v) {
        if (v.s() != null) return 3L * v.s().length();
        if (v.n() != null) return v.n().length() + 1L;
        if (v.b() != null) return v.b().asByteArrayUnsafe().length;
        if (v.hasL()) {
            long n = 3;
            for (AttributeValue x : v.l()) n += 1 + upperBound(x);
            return n;
        }
        if (v.hasM()) {
            long n = 3;
            for (Map.Entry<String, AttributeValue> e : v.m().entrySet())
                n += 1 + 3L * e.getKey().length() + upperBound(e.getValue());
            return n;
        }
        return 1;
    }

    public static long of(Map<String, AttributeValue> item) {
        long total = 0;
        for (Map.Entry<String, AttributeValue> e : item.entrySet()) {
            total += utf8(e.getKey()) + of(e.getValue());
        }
        return total;
    }

    static long of(AttributeValue v) {
        if (v.s() != null) return utf8(v.s());
        if (v.n() != null) return numberBytes(v.n());
        if (v.b() != null) return v.b().asByteArrayUnsafe().length;
        if (v.bool() != null || v.nul() != null) return 1;
        if (v.hasL()) {
            long n = 3;
            for (AttributeValue x : v.l()) n += 1 + of(x);
            return n;
        }
        if (v.hasM()) {
            long n = 3;
            for (Map.Entry<String, AttributeValue> e : v.m().entrySet()) n += 1 + utf8(e.getKey()) + of(e.getValue());
            return n;
        }
        return 0;
    }

    private static long numberBytes(String n) {
        BigDecimal d = new BigDecimal(n);
        return d.signum() == 0 ? 1 : (d.stripTrailingZeros().precision() + 1) / 2 + 1;
    }

    private static long utf8(String s) {
        // Most strings are ASCII; count without allocating unless a non-ASCII char is present.
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) return s.getBytes(StandardCharsets.UTF_8).length;
        }
        return s.length();
    }
}
