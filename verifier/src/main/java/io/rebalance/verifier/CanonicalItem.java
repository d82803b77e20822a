package io.rebalance.verifier;

import io.rebalance.core.codec.ColumnForms;
import io.rebalance.core.codec.ColumnKind;
import io.rebalance.core.codec.ColumnSpec;
import io.rebalance.core.codec.JsonAttributes;
import io.rebalance.core.codec.ValueRefusedException;
import io.rebalance.core.slot.TableKey;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The canonical encoding of a DynamoDB item (docs/fingerprint.md), the Java half of the fingerprint: it must give,
 * byte for byte, what {@link CanonicalSql} gives for the row the item was copied from. Every token is typed and
 * length-prefixed, so NULL ({@code Z}), the string 'NULL' ({@code S4:NULL}) and the empty string ({@code S0:})
 * differ, and no concatenation of tokens can be read two ways. An absent attribute is NULL, as the reverse stream
 * reads it ({@code core/codec/RowDecoder}): an application writing DynamoDB leaves a nullable attribute out rather than
 * writing NULL, and a NOT NULL column's row never gives {@code Z}. Anything the codec never produces (an attribute of
 * an unexpected type, an extra attribute) becomes a token starting with {@code ?}, which SQL never produces, so it
 * can only ever mismatch.
 */
public final class CanonicalItem {
    private final List<ColumnSpec> columns;
    private final String[] attributes;
    private final Set<String> expected;
    private final ColumnForms forms;

    public CanonicalItem(
            List<ColumnSpec> columns, String keyColumn, String partitionKey, String slotAttribute, boolean jsonAsMap) {
        this(columns, keyColumn, partitionKey, slotAttribute, ColumnForms.of(jsonAsMap));
    }

    public CanonicalItem(
            List<ColumnSpec> columns, String keyColumn, String partitionKey, String slotAttribute, ColumnForms forms) {
        this(columns, Map.of(keyColumn, partitionKey), slotAttribute, forms);
    }

    /** @param key the row key, whose columns are stored under its attributes */
    public CanonicalItem(List<ColumnSpec> columns, TableKey key, String slotAttribute, ColumnForms forms) {
        this(columns, keyAttributes(key), slotAttribute, forms);
    }

    private static Map<String, String> keyAttributes(TableKey key) {
        Map<String, String> out = new HashMap<>();
        for (String column : key.columns()) out.put(column, key.attributeOf(column));
        return out;
    }

    /** @param forms the columns the codec stores in another form than their kind's */
    private CanonicalItem(
            List<ColumnSpec> columns, Map<String, String> keyAttributes, String slotAttribute, ColumnForms forms) {
        this.columns = List.copyOf(columns);
        this.attributes = new String[columns.size()];
        this.expected = new HashSet<>();
        for (int i = 0; i < attributes.length; i++) {
            String name = columns.get(i).name();
            attributes[i] = keyAttributes.getOrDefault(name, name);
            expected.add(attributes[i]);
        }
        expected.add(slotAttribute);
        this.forms = forms;
    }

    /** The attribute that holds column {@code i}. */
    public String attribute(int i) {
        return attributes[i];
    }

    public int columnCount() {
        return attributes.length;
    }

    /** The whole item: column tokens in column order, then a marker if it holds attributes no column explains. */
    public String encode(Map<String, AttributeValue> item) {
        StringBuilder out = new StringBuilder(256);
        for (int i = 0; i < attributes.length; i++) token(columns.get(i), item.get(attributes[i]), out);
        if (item.size() != expected.size() || !expected.containsAll(item.keySet())) {
            Set<String> extra = unexpected(item);
            if (!extra.isEmpty()) out.append("?extra").append(extra);
        }
        return out.toString();
    }

    /** Attributes the item holds that are neither a column nor the slot attribute, sorted. */
    public Set<String> unexpected(Map<String, AttributeValue> item) {
        Set<String> extra = new TreeSet<>(item.keySet());
        extra.removeAll(expected);
        return extra;
    }

    /** The token of column {@code i} alone, for naming the attributes that differ. */
    public String token(int i, Map<String, AttributeValue> item) {
        StringBuilder out = new StringBuilder();
        token(columns.get(i), item.get(attributes[i]), out);
        return out.toString();
    }

    private void token(ColumnSpec col, AttributeValue v, StringBuilder out) {
        if (v == null || v.nul() != null) {
            out.append('Z'); // absent equals NULL: applications leave nullable attributes out (docs/codec.md)
        } else if (col.array()) {
            array(col, v, out);
        } else {
            scalar(col, v, out);
        }
    }

    private void scalar(ColumnSpec col, AttributeValue v, StringBuilder out) {
        ColumnKind kind = col.kind();
        if (kind == ColumnKind.JSON) {
            json(forms.jsonAsMap(col.name()), v, out);
            return;
        }
        if ((kind == ColumnKind.NUMERIC || kind == ColumnKind.FLOAT) && forms.numberAsString(col.name())) {
            // one type per attribute: a number item written before target.numbersAsString named the column differs,
            // so `verify --repair` rewrites it as text
            if (v.s() != null) numberText(v.s(), out); // stored as its text: the same token as the number
            else out.append("?").append(v.type()).append(" where target.numbersAsString stores text");
            return;
        }
        if (v.s() != null) text('S', v.s(), out);
        else if (v.n() != null) text('N', number(v.n()), out);
        else if (v.bool() != null) out.append(v.bool() ? 'T' : 'F');
        else if (v.b() != null) {
            byte[] bytes = v.b().asByteArrayUnsafe();
            out.append('B')
                    .append(bytes.length)
                    .append(':')
                    .append(HexFormat.of().formatHex(bytes));
        } else out.append("?").append(v.type());
    }

    /**
     * A json column: {@code J} and the value's jsonb text (keys in jsonb's order, numbers as DynamoDB gives them back),
     * so key order, spacing and number spelling do not matter. The text needs no length: a json value ends where its
     * text does, and every token starts with a letter no json number continues with.
     */
    private static void json(boolean jsonAsMap, AttributeValue v, StringBuilder out) {
        if (!jsonAsMap
                && v.s() == null) { // written before target.jsonAsString named the column: one type per attribute
            out.append("?").append(v.type()).append(" where target.jsonAsString stores text");
            return;
        }
        AttributeValue tree;
        try {
            tree = jsonAsMap ? v : JsonAttributes.tree(v.s());
        } catch (ValueRefusedException e) {
            out.append("?json:").append(v.s());
            return;
        }
        StringBuilder text = new StringBuilder(64);
        if (JsonbText.write(tree, text)) out.append('J').append(text);
        else out.append("?json of ").append(v.type());
    }

    /** {@code L<ndims>:<len>,<len>:<elements>} with elements in row-major order, as Postgres stores them. */
    private void array(ColumnSpec col, AttributeValue v, StringBuilder out) {
        ColumnKind kind = col.kind();
        if (!v.hasL()) {
            out.append("?").append(v.type());
            return;
        }
        List<Integer> dims = new ArrayList<>();
        AttributeValue level = v;
        // json elements can themselves be lists, so json arrays are taken as one-dimensional (docs/fingerprint.md)
        while (level.hasL() && !level.l().isEmpty()) {
            dims.add(level.l().size());
            if (kind == ColumnKind.JSON) break;
            level = level.l().get(0);
        }
        List<AttributeValue> flat = new ArrayList<>();
        if (!dims.isEmpty() && !flatten(v, dims, 0, flat, kind)) {
            out.append("?ragged");
            return;
        }
        out.append('L').append(dims.size()).append(':');
        for (int i = 0; i < dims.size(); i++) out.append(i == 0 ? "" : ",").append(dims.get(i));
        out.append(':');
        for (AttributeValue e : flat) {
            if (e.nul() != null) out.append('Z');
            else scalar(col, e, out);
        }
    }

    private static boolean flatten(
            AttributeValue v, List<Integer> dims, int depth, List<AttributeValue> out, ColumnKind kind) {
        if (depth == dims.size()) {
            if (v.hasL() && kind != ColumnKind.JSON) return false;
            out.add(v);
            return true;
        }
        if (!v.hasL() || v.l().size() != dims.get(depth)) return false;
        for (AttributeValue e : v.l()) if (!flatten(e, dims, depth + 1, out, kind)) return false;
        return true;
    }

    private static void text(char tag, String s, StringBuilder out) {
        out.append(tag).append(utf8Length(s)).append(':').append(s);
    }

    /** A number as Postgres's {@code trim_scale(x)::text} writes it: plain digits, no trailing fractional zeros. */
    /** A number stored as its text: N with the number's token, or S for what is no number (NaN, infinities). */
    private static void numberText(String s, StringBuilder out) {
        String normalized;
        try {
            normalized = number(s);
        } catch (NumberFormatException notANumber) {
            text('S', s, out);
            return;
        }
        text('N', normalized, out);
    }

    static String number(String n) {
        BigDecimal d = new BigDecimal(n);
        return d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString();
    }

    static int utf8Length(String s) {
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) n += 1;
            else if (c < 0x800) n += 2;
            else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else n += 3;
        }
        return n;
    }
}
