package io.rebalance.core.codec;

import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.slot.KeyType;
import io.rebalance.core.slot.TableKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The one row-to-item codec: every part (copy, tail, verify, repair) builds DynamoDB items through this class, so
 * two paths can never disagree on how a value is stored.
 *
 * <p>Guarantees: every column becomes an attribute of the same name (SQL NULL becomes the NULL attribute, which is
 * distinct from the string {@code "NULL"} and from the empty string); the key's columns are stored under the target's
 * partition key and sort key names; no value is rounded; an item DynamoDB would refuse is refused here, naming the row id, the
 * column and what to change. Every item also carries its slot (for example {@code _slot: "20241020.02"}), the
 * partition key of the slot index through which the verifier reads one slot without a table scan.
 */
public final class RowCodec {
    private final List<ColumnSpec> columns;
    private final String[] attributeNames;
    private final ValueCodec values;
    private final ValueCodec jsonText;
    private final boolean[] jsonAsMap;
    private final boolean[] numberAsString;
    private final SlotIndex slotIndex;
    private final RowSlot rowSlot;
    private final TableKey key;

    /**
     * A codec for a one-column key (tests and benchmarks).
     *
     * @param columns the source columns, in the order {@link SourceRow#values()} holds them
     * @param keyColumn the source key column, one of {@code columns}
     * @param partitionKey the DynamoDB attribute that holds the key column's value
     * @param slotIndex where the row's slot goes: its attribute, and its shard when the index is sharded
     */
    public RowCodec(
            List<ColumnSpec> columns,
            String keyColumn,
            String partitionKey,
            boolean jsonAsMap,
            SlotIndex slotIndex,
            RowSlot rowSlot) {
        this(columns, keyColumn, partitionKey, ColumnForms.of(jsonAsMap), slotIndex, rowSlot);
    }

    public RowCodec(
            List<ColumnSpec> columns,
            String keyColumn,
            String partitionKey,
            ColumnForms forms,
            SlotIndex slotIndex,
            RowSlot rowSlot) {
        this(columns, singleKey(columns, keyColumn, partitionKey), forms, slotIndex, rowSlot);
    }

    /**
     * @param key the row key: its columns are among {@code columns} and are stored under its attributes
     * @param forms the columns stored in another form than their kind's
     */
    public RowCodec(List<ColumnSpec> columns, TableKey key, ColumnForms forms, SlotIndex slotIndex, RowSlot rowSlot) {
        this.key = key;
        this.slotIndex = slotIndex;
        this.rowSlot = rowSlot;
        this.columns = List.copyOf(columns);
        this.attributeNames = new String[columns.size()];
        this.jsonAsMap = new boolean[columns.size()];
        this.numberAsString = new boolean[columns.size()];
        for (int i = 0; i < columns.size(); i++) {
            String name = columns.get(i).name();
            attributeNames[i] = key.attributeOf(name);
            jsonAsMap[i] = forms.jsonAsMap(name);
            numberAsString[i] = forms.numberAsString(name);
        }
        this.values = new ValueCodec(true);
        this.jsonText = new ValueCodec(false);
    }

    public List<ColumnSpec> columns() {
        return columns;
    }

    /** The DynamoDB key of the item for a source key given as text (what a delete names). */
    public Map<String, AttributeValue> key(String keyText) {
        return key.dynamoKey(keyText);
    }

    /** The source key, as text, of an item or a key this codec made (what {@link #key} was given). */
    public String keyText(Map<String, AttributeValue> itemOrKey) {
        String text = key.textOf(itemOrKey);
        return text == null ? "" : text;
    }

    /** A one-column key of a column's own type family. */
    static TableKey singleKey(List<ColumnSpec> columns, String keyColumn, String attribute) {
        ColumnSpec col = columns.stream()
                .filter(c -> c.name().equals(keyColumn))
                .findFirst()
                .orElseThrow(
                        () -> new IllegalArgumentException("key column " + keyColumn + " is not among " + columns));
        KeyType type = col.kind() == ColumnKind.INTEGER
                ? KeyType.BIGINT
                : col.kind() == ColumnKind.UUID ? KeyType.UUID : KeyType.TEXT;
        return TableKey.single(keyColumn, type, attribute);
    }

    /** @throws RowRefusedException naming the row id, the column and why, when DynamoDB cannot hold the row */
    public Map<String, AttributeValue> encode(SourceRow row) {
        Map<String, AttributeValue> item = new HashMap<>(columns.size() * 2 + 2);
        for (int i = 0; i < attributeNames.length; i++) {
            ColumnSpec col = columns.get(i);
            try {
                item.put(attributeNames[i], encodeValue(i, col, row.values()[i]));
            } catch (ValueRefusedException e) {
                throw refused(row, col, e.getMessage());
            }
        }
        try {
            item.put(slotIndex.attribute(), AttributeValue.fromS(slotIndex.value(rowSlot.of(row), row.key())));
        } catch (ValueRefusedException e) {
            throw refused(row, null, "it has no slot: " + e.getMessage());
        }
        if (ItemSize.exceedsLimit(item)) { // a bound first: the exact count parses every number of every item
            long size = ItemSize.of(item);
            throw refused(
                    row,
                    null,
                    "the item would be " + size + " bytes, over DynamoDB's limit of " + ItemSize.MAX_BYTES
                            + " bytes; leave large columns out with source.columns, or shrink the row in Postgres");
        }
        return item;
    }

    private AttributeValue encodeValue(int i, ColumnSpec col, Object value) {
        if (value == null) return AttributeValue.fromNul(true);
        if (value instanceof byte[] bytes) return values.encodeBytes(bytes);
        String text = (String) value;
        return col.array() ? encodeArray(i, col.kind(), PgArrayLiteral.parse(text)) : scalar(i, col.kind(), text);
    }

    private AttributeValue scalar(int i, ColumnKind kind, String text) {
        if (numberAsString[i] && (kind == ColumnKind.NUMERIC || kind == ColumnKind.FLOAT)) {
            return AttributeValue.fromS(text); // its exact text, whatever DynamoDB's N could hold
        }
        return (jsonAsMap[i] ? values : jsonText).encode(kind, text);
    }

    private AttributeValue encodeArray(int i, ColumnKind kind, List<Object> items) {
        List<AttributeValue> out = new ArrayList<>(items.size());
        for (Object item : items) {
            if (item == null) out.add(AttributeValue.fromNul(true));
            else if (item instanceof List<?> nested) out.add(encodeArray(i, kind, castList(nested)));
            else out.add(scalar(i, kind, (String) item));
        }
        return AttributeValue.fromL(out);
    }

    @SuppressWarnings("unchecked")
    private static List<Object> castList(List<?> list) {
        return (List<Object>) list;
    }

    private RowRefusedException refused(SourceRow row, ColumnSpec column, String why) {
        String slot;
        try {
            slot = rowSlot.of(row).name();
        } catch (ValueRefusedException e) {
            slot = null; // a row without an hour has no slot to name
        }
        return column == null
                ? new RowRefusedException(row.key(), null, null, why, slot)
                : new RowRefusedException(row.key(), column.name(), column.sqlType(), why, slot);
    }
}
