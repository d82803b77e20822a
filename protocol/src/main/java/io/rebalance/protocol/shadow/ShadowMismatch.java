package io.rebalance.protocol.shadow;

import java.util.ArrayList;
import java.util.List;

/**
 * One shadow read whose answers differed: the key as the application named it, each store's answer in the form
 * compared, and when. Kept in Redis as one list entry: each field as its length in characters, a colon and the
 * characters, so that no form can be read as another field.
 *
 * @param key the key read, as given to {@code Router.read}
 * @param postgres the Postgres answer's form ({@code absent} when there was no row)
 * @param dynamo the DynamoDB answer's form ({@code absent} when there was no item)
 * @param atMs when the second read of both ended, Unix ms
 */
public record ShadowMismatch(String key, String postgres, String dynamo, long atMs) {
    /** The form of an answer that found nothing: no row, no item. */
    public static final String ABSENT = "absent";

    String encode() {
        StringBuilder out = new StringBuilder();
        for (String field : List.of(Long.toString(atMs), key, postgres, dynamo))
            out.append(field.length()).append(':').append(field);
        return out.toString();
    }

    static ShadowMismatch decode(String entry) {
        List<String> fields = new ArrayList<>(4);
        int at = 0;
        while (at < entry.length()) {
            int colon = entry.indexOf(':', at);
            int length = Integer.parseInt(entry.substring(at, colon));
            fields.add(entry.substring(colon + 1, colon + 1 + length));
            at = colon + 1 + length;
        }
        if (fields.size() != 4)
            throw new IllegalArgumentException(
                    "not a shadow mismatch: " + entry.substring(0, Math.min(80, entry.length())));
        return new ShadowMismatch(fields.get(1), fields.get(2), fields.get(3), Long.parseLong(fields.get(0)));
    }
}
