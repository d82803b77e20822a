package io.rebalance.core.slot;

import io.rebalance.protocol.KeyText;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The row key every part names rows by: one column, or two (a composite primary key such as {@code (tenant_id, id)}),
 * whose DynamoDB home is the partition key and, for the second column, the sort key. Keys travel as one text
 * ({@link KeyText}); this class turns that text into SQL (select, order, compare, match a list) and into DynamoDB
 * keys and back, so no other class needs to know how many columns a key has.
 *
 * <p>With two columns the slot's time is in the second ({@code (tenant_id, id)}: the id), the key part DynamoDB keeps
 * in order within a partition; rows are paged in the order of the whole key.
 *
 * @param columns the key columns, in the primary key's order; one or two
 * @param types each column's type family
 * @param attributes the DynamoDB attribute holding each column: the partition key, then the sort key
 */
public record TableKey(List<String> columns, List<KeyType> types, List<String> attributes) {

    public TableKey {
        columns = List.copyOf(columns);
        types = List.copyOf(types);
        attributes = List.copyOf(attributes);
        if (columns.isEmpty() || columns.size() > 2 || types.size() != columns.size())
            throw new IllegalArgumentException("a key has one or two columns: " + columns);
    }

    /** A one-column key whose attribute is {@code attribute}. */
    public static TableKey single(String column, KeyType type, String attribute) {
        return new TableKey(List.of(column), List.of(type), List.of(attribute));
    }

    public boolean composite() {
        return columns.size() > 1;
    }

    /** The key column the slots' time is read from when slots come from ids: the last one. */
    public String timeColumn() {
        return columns.get(columns.size() - 1);
    }

    public KeyType timeType() {
        return types.get(types.size() - 1);
    }

    /** The DynamoDB partition key attribute. */
    public String partitionAttribute() {
        return attributes.get(0);
    }

    /** The DynamoDB sort key attribute, or null for a one-column key. */
    public String sortAttribute() {
        return composite() ? attributes.get(1) : null;
    }

    /** The attribute a column is stored under: a key column's key attribute, any other column its own name. */
    public String attributeOf(String column) {
        int i = columns.indexOf(column);
        return i < 0 ? column : attributes.get(i);
    }

    /** The key's columns as people read them: {@code id}, or {@code (tenant_id, id)}. */
    public String describe() {
        return composite() ? "(" + String.join(", ", columns) + ")" : columns.get(0);
    }

    /** The text of a key from its parts' texts, in the columns' order. */
    public String text(List<String> parts) {
        if (parts.size() == 1) return parts.get(0); // a one-column key is its value: no list on the hot paths
        List<KeyText.Part> ps = new ArrayList<>(parts.size());
        for (int i = 0; i < parts.size(); i++) ps.add(new KeyText.Part(parts.get(i), types.get(i) == KeyType.BIGINT));
        return KeyText.of(ps);
    }

    /** The parts' texts of a key text, in the columns' order. */
    public List<String> parts(String text) {
        return KeyText.parts(text, columns.size());
    }

    /** A key's value for people: {@code id=01J…} or {@code tenant_id=7, id=1823}. */
    public String name(String text) {
        List<String> parts = parts(text);
        List<String> out = new ArrayList<>(parts.size());
        for (int i = 0; i < parts.size(); i++) out.add(columns.get(i) + "=" + parts.get(i));
        return String.join(", ", out);
    }

    // ---- SQL: {@code q} is a table alias with its dot ("src.") or ""

    /** SQL giving a row's key text (what {@link #text} makes of the same values). */
    public String selectText(String q) {
        if (!composite()) return q + quote(0) + "::text";
        return "jsonb_build_array(" + q + quote(0) + ", " + q + quote(1) + ")::text";
    }

    /**
     * The key columns for paging through a slot, time part first: {@code id, tenant_id}. A slot is a range of the
     * time part, so an index leading with it serves each page in order; in the key's own order every page would
     * sort the whole slot.
     */
    public String pageOrder(String q) {
        return composite() ? q + quote(1) + ", " + q + quote(0) : q + quote(0);
    }

    /** The key columns in the key's own order, for ORDER BY: {@code src."tenant_id", src."id"}. */
    public String operandOrder(String q) {
        List<String> out = new ArrayList<>(columns.size());
        for (int i = 0; i < columns.size(); i++) out.add(q + quote(i));
        return String.join(", ", out);
    }

    /** SQL true for the rows after a key in {@link #pageOrder}, with the placeholders {@link #bindPage} fills. */
    public String pageAfter(String q) {
        return composite() ? "(" + q + quote(1) + ", " + q + quote(0) + ") > (?, ?)" : q + quote(0) + " > ?";
    }

    /** Binds a key text for {@link #pageAfter}; @return the next parameter index */
    public int bindPage(PreparedStatement ps, int p, String text) throws SQLException {
        List<String> parts = parts(text);
        for (int i = parts.size() - 1; i >= 0; i--)
            ps.setObject(p++, types.get(i).bind(parts.get(i)));
        return p;
    }

    /** The key as one operand of a comparison; with {@code codePoints} text parts compare as {@code COLLATE "C"}. */
    public String operand(String q, boolean codePoints) {
        List<String> out = new ArrayList<>(columns.size());
        for (int i = 0; i < columns.size(); i++) {
            String col = q + quote(i);
            out.add(codePoints && types.get(i) == KeyType.TEXT ? col + " COLLATE \"C\"" : col);
        }
        return composite() ? "(" + String.join(", ", out) + ")" : out.get(0);
    }

    /** The placeholders {@link #bind} fills: {@code ?} or {@code (?, ?)}. */
    public String placeholder() {
        return composite() ? "(?, ?)" : "?";
    }

    /** Binds a key text's parts at {@code p}; @return the next parameter index */
    public int bind(PreparedStatement ps, int p, String text) throws SQLException {
        List<String> parts = parts(text);
        for (int i = 0; i < parts.size(); i++) ps.setObject(p++, types.get(i).bind(parts.get(i)));
        return p;
    }

    /** SQL true for the rows whose key is one of a list, bound as one text[] of key texts. */
    public String anyOf(String q) {
        if (!composite())
            return q + quote(0) + " = ANY(CAST(? AS " + types.get(0).sqlArrayType() + "))";
        return "(" + q + quote(0) + ", " + q + quote(1) + ") IN (SELECT (k->>0)::" + scalar(0) + ", (k->>1)::"
                + scalar(1) + " FROM unnest(CAST(? AS jsonb[])) k)";
    }

    private String scalar(int i) {
        return types.get(i).sqlArrayType().replace("[]", "");
    }

    private String quote(int i) {
        return SlotKeyspace.quote(columns.get(i));
    }

    // ---- DynamoDB

    /** The DynamoDB key of a key text. */
    public Map<String, AttributeValue> dynamoKey(String text) {
        List<String> parts = parts(text);
        Map<String, AttributeValue> key = new HashMap<>(4);
        for (int i = 0; i < parts.size(); i++) {
            key.put(
                    attributes.get(i),
                    types.get(i) == KeyType.BIGINT
                            ? AttributeValue.fromN(parts.get(i))
                            : AttributeValue.fromS(parts.get(i)));
        }
        return key;
    }

    /** The key text of a DynamoDB item or key, or null when it lacks a key attribute. */
    public String textOf(Map<String, AttributeValue> itemOrKey) {
        if (!composite()) return partText(itemOrKey.get(attributes.get(0))); // every item the verifier reads
        List<String> parts = new ArrayList<>(columns.size());
        for (String attribute : attributes) {
            String part = partText(itemOrKey.get(attribute));
            if (part == null) return null;
            parts.add(part);
        }
        return text(parts);
    }

    private static String partText(AttributeValue v) {
        return v == null ? null : v.s() != null ? v.s() : v.n();
    }

    /** The key attributes as {@link io.rebalance.protocol.handoff.TargetWriteLog} names them: joined by commas. */
    public String logAttributes() {
        return String.join(",", attributes);
    }
}
