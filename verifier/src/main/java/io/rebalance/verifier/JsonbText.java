package io.rebalance.verifier;

import io.rebalance.protocol.KeyText;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A json value written as Postgres writes a {@code jsonb} (its own deterministic text), with numbers as DynamoDB
 * gives them back: the json token of the canonical encoding (docs/fingerprint.md). Postgres makes this text in C
 * next to the data, so the SQL half needs no recursion of its own; this class makes the same text from an item.
 *
 * <p>jsonb's rules: object keys ordered by UTF-8 length, then by bytes; {@code ", "} between members and elements,
 * {@code ": "} after a key; strings escaped as {@code escape_json} does ({@code \"}, {@code \\}, {@code \b \f \n \r
 * \t}, other characters below U+0020 as a backslash, {@code u} and four lower-case hex digits, everything else as is); numbers in plain notation.
 */
final class JsonbText {
    /** jsonb's key order: shorter UTF-8 first, then byte order (which is code point order). */
    private static final Comparator<Key> KEY_ORDER = Comparator.comparingInt((Key k) -> k.utf8.length)
            .thenComparing((a, b) -> Arrays.compareUnsigned(a.utf8, b.utf8));

    private JsonbText() {}

    /**
     * Appends the jsonb text of {@code v}; false (and {@code out} partly written) when {@code v} holds a type json
     * never becomes (a set, binary), which the caller turns into a token that can only mismatch.
     */
    static boolean write(AttributeValue v, StringBuilder out) {
        if (v.hasM()) {
            Key[] keys = new Key[v.m().size()];
            int i = 0;
            for (Map.Entry<String, AttributeValue> e : v.m().entrySet())
                keys[i++] = new Key(e.getKey(), e.getKey().getBytes(StandardCharsets.UTF_8), e.getValue());
            Arrays.sort(keys, KEY_ORDER);
            out.append('{');
            for (int k = 0; k < keys.length; k++) {
                if (k > 0) out.append(", ");
                KeyText.quote(keys[k].text, out);
                out.append(": ");
                if (!write(keys[k].value, out)) return false;
            }
            out.append('}');
        } else if (v.hasL()) {
            out.append('[');
            for (int k = 0; k < v.l().size(); k++) {
                if (k > 0) out.append(", ");
                if (!write(v.l().get(k), out)) return false;
            }
            out.append(']');
        } else if (v.s() != null) {
            KeyText.quote(v.s(), out);
        } else if (v.n() != null) {
            out.append(CanonicalItem.number(v.n()));
        } else if (v.bool() != null) {
            out.append(v.bool() ? "true" : "false");
        } else if (v.nul() != null) {
            out.append("null");
        } else {
            return false;
        }
        return true;
    }

    private record Key(String text, byte[] utf8, AttributeValue value) {}
}
