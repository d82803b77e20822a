package io.rebalance.core.codec;

import io.rebalance.core.slot.TableKey;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The inverse of {@link RowCodec}: a DynamoDB item back to the Postgres text of each source column, for the reverse
 * stream (ADR 7). Column for column it undoes what the codec did: the key attributes become the key columns,
 * DynamoDB's NULL (or an absent attribute, which applications writing DynamoDB often leave out) becomes SQL NULL,
 * lists become array literals, and scalars go through {@link ValueDecoder}. The slot attribute is the codec's own
 * and is dropped.
 *
 * <p>An attribute that is no source column is refused rather than dropped: writing the row without it would lose
 * data on rollback without a word. The message names the item, the attribute and what to change.
 */
public final class RowDecoder {
    private final List<ColumnSpec> columns;
    private final String[] attributeNames;
    private final int[] keyIndexes;
    private final TableKey key;
    private final String slotAttribute;
    private final ValueDecoder values;
    private final ValueDecoder jsonText;
    private final ColumnForms forms;

    /** The same arguments as the {@link RowCodec} that made the items (the slot index by its attribute). */
    public RowDecoder(
            List<ColumnSpec> columns, String keyColumn, String partitionKey, boolean jsonAsMap, String slotAttribute) {
        this(columns, keyColumn, partitionKey, ColumnForms.of(jsonAsMap), slotAttribute);
    }

    public RowDecoder(
            List<ColumnSpec> columns, String keyColumn, String partitionKey, ColumnForms forms, String slotAttribute) {
        this(columns, RowCodec.singleKey(columns, keyColumn, partitionKey), forms, slotAttribute);
    }

    /** @param forms the columns stored in another form than their kind's, as the codec had them */
    public RowDecoder(List<ColumnSpec> columns, TableKey key, ColumnForms forms, String slotAttribute) {
        this.columns = List.copyOf(columns);
        this.slotAttribute = slotAttribute;
        this.attributeNames = new String[columns.size()];
        this.keyIndexes = new int[key.columns().size()];
        for (int i = 0; i < columns.size(); i++) {
            String name = columns.get(i).name();
            attributeNames[i] = key.attributeOf(name);
            int part = key.columns().indexOf(name);
            if (part >= 0) keyIndexes[part] = i;
        }
        this.key = key;
        this.values = new ValueDecoder(true);
        this.jsonText = new ValueDecoder(false);
        this.forms = forms;
    }

    public List<ColumnSpec> columns() {
        return columns;
    }

    /** The positions in {@link #columns()} of the key's columns, in key order. */
    public int[] keyIndexes() {
        return keyIndexes.clone();
    }

    /** The key text of a DynamoDB key (or whole item). */
    public String key(Map<String, AttributeValue> keyOrItem) {
        List<String> parts = new ArrayList<>(keyIndexes.length);
        for (int k : keyIndexes) {
            AttributeValue v = keyOrItem.get(attributeNames[k]);
            if (v == null || v.nul() != null) {
                throw new RebalanceException(
                        ErrorCode.ROW_REFUSED,
                        "a DynamoDB key " + keyOrItem + " has no " + attributeNames[k]
                                + " attribute; are target.partitionKey and target.sortKey the table's key?");
            }
            try {
                parts.add(values.decode(columns.get(k).kind(), v));
            } catch (ValueRefusedException e) {
                throw refused(keyOrItem.toString(), "key " + attributeNames[k] + ": " + e.getMessage());
            }
        }
        return key.text(parts);
    }

    /**
     * @return the row as texts in {@link #columns()} order, null for SQL NULL; bound as untyped parameters
     * @throws RebalanceException ROW_REFUSED naming the item's key when an attribute cannot go back to its column
     */
    public String[] decode(Map<String, AttributeValue> item) {
        String key = key(item);
        int known = 0;
        String[] out = new String[columns.size()];
        for (int i = 0; i < out.length; i++) {
            AttributeValue v = item.get(attributeNames[i]);
            if (v == null) continue;
            known++;
            ColumnSpec col = columns.get(i);
            try {
                out[i] = text(col, v);
            } catch (ValueRefusedException e) {
                throw refused(key, "attribute " + attributeNames[i] + " (" + col.sqlType() + "): " + e.getMessage());
            }
        }
        if (item.containsKey(slotAttribute)) known++;
        if (known != item.size()) {
            for (String name : item.keySet()) {
                if (!name.equals(slotAttribute) && !List.of(attributeNames).contains(name)) {
                    throw refused(
                            key,
                            "attribute '" + name + "' is no column among source.columns, so Postgres has nowhere to"
                                    + " keep it; add the column to the table (and to source.columns), or stop writing"
                                    + " that attribute");
                }
            }
        }
        return out;
    }

    private String text(ColumnSpec col, AttributeValue v) {
        if (v.nul() != null) return null;
        if (!col.array()) return scalar(col, v);
        if (!v.hasL()) throw new ValueRefusedException("an array is stored as L, not " + v.type());
        StringBuilder sb = new StringBuilder();
        arrayLiteral(col, v.l(), sb);
        return sb.toString();
    }

    private String scalar(ColumnSpec col, AttributeValue v) {
        ColumnKind kind = col.kind();
        boolean number = kind == ColumnKind.NUMERIC || kind == ColumnKind.FLOAT;
        if (number && v.s() != null && forms.numberAsString(col.name())) return v.s(); // stored as its exact text
        if (kind != ColumnKind.JSON) return values.decode(kind, v);
        // a json column stored as text may hold items written as maps before target.jsonAsString named it
        return forms.jsonAsMap(col.name()) || v.s() == null ? values.decode(kind, v) : jsonText.decode(kind, v);
    }

    /** {@code {"1",NULL,{"a \"b\""}}}: every element quoted, so no element text needs a rule of its own. */
    private void arrayLiteral(ColumnSpec col, List<AttributeValue> items, StringBuilder sb) {
        ColumnKind kind = col.kind();
        sb.append('{');
        for (int i = 0; i < items.size(); i++) {
            if (i > 0) sb.append(',');
            AttributeValue item = items.get(i);
            if (item.nul() != null) {
                sb.append("NULL");
            } else if (item.hasL() && kind != ColumnKind.JSON) {
                arrayLiteral(col, item.l(), sb);
            } else {
                String text = scalar(col, item);
                sb.append('"');
                for (int c = 0; c < text.length(); c++) {
                    char ch = text.charAt(c);
                    if (ch == '"' || ch == '\\') sb.append('\\');
                    sb.append(ch);
                }
                sb.append('"');
            }
        }
        sb.append('}');
    }

    private static RebalanceException refused(String key, String why) {
        return new RebalanceException(
                ErrorCode.ROW_REFUSED, "item id=" + key + " cannot be written back to Postgres: " + why);
    }
}
