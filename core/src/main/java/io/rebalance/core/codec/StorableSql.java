package io.rebalance.core.codec;

import io.rebalance.core.slot.SlotKeyspace;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The codec's size and refusal rules as SQL over one row of the source table ({@code src}), so that Postgres can tell
 * without moving a row which rows {@link RowCodec} would refuse and how large their items would be ({@link ItemSize}'s
 * rules). It follows the same {@link ColumnForms}: a column stored as its text is neither checked for DynamoDB's
 * number range nor walked as a map.
 *
 * <p>Exact, value by value: json maps are walked node by node with {@code jsonb_path_query(.., 'strict $.**')}, arrays
 * of any dimension count their nested lists, times their year's digits. The test that holds it to the codec compares
 * the two row by row over every type the codec maps ({@code StorableSqlIT}).
 */
public final class StorableSql {
    /** One reason the codec refuses a row, for one column or (for {@link Refusal#ITEM_SIZE}) the whole item. */
    public record Cause(Refusal refusal, String column) {}

    private static final String NUMBER_CHECK =
            "(%1$s <> 0 AND (abs(%1$s) >= 1e126 OR abs(%1$s) < 1e-130 OR %2$s > " + DynamoNumber.MAX_DIGITS + "))";
    /** The column {@link #refusal()} reads the item's size from. */
    public static final String SIZE = "s.rebalance_item_bytes";

    private static final String SPECIAL = " IN ('NaN', 'Infinity', '-Infinity')";

    private final String itemSize;
    private final String refusal;
    private final List<Cause> causes;

    /**
     * @param columns the copied columns, as the codec has them
     * @param attributeNames the DynamoDB attribute names, column by column (the key's may be renamed)
     * @param fixedBytes bytes every item carries besides its columns' values and names: the slot attribute
     */
    public StorableSql(List<ColumnSpec> columns, List<String> attributeNames, ColumnForms forms, long fixedBytes) {
        long names = fixedBytes;
        StringBuilder size = new StringBuilder();
        StringBuilder why = new StringBuilder("CASE");
        List<Cause> found = new ArrayList<>();
        for (int i = 0; i < columns.size(); i++) {
            ColumnSpec col = columns.get(i);
            names += attributeNames.get(i).getBytes(StandardCharsets.UTF_8).length;
            String q = "src." + SlotKeyspace.quote(col.name());
            boolean jsonAsMap = forms.jsonAsMap(col.name());
            boolean numberAsText = forms.numberAsString(col.name());
            size.append(" + ")
                    .append(
                            col.array()
                                    ? arraySize(q, col, jsonAsMap, numberAsText)
                                    : valueSize(q, col, jsonAsMap, numberAsText));
            for (Refusal r : refusals(col, jsonAsMap, numberAsText)) {
                found.add(new Cause(r, col.name()));
                why.append(" WHEN ").append(refuses(q, col, r)).append(" THEN ").append(found.size());
            }
        }
        this.itemSize = "(" + names + size + ")";
        found.add(new Cause(Refusal.ITEM_SIZE, null));
        why.append(" WHEN " + SIZE + " > ")
                .append(ItemSize.MAX_BYTES)
                .append(" THEN ")
                .append(found.size());
        this.refusal = why.append(" END").toString();
        this.causes = List.copyOf(found);
    }

    /** SQL: the bytes of the row's item as DynamoDB counts them (names and values, and the fixed bytes). */
    public String itemSize() {
        return itemSize;
    }

    /**
     * SQL, over {@code src} and a column {@link #SIZE} holding {@link #itemSize()}: NULL for a row the codec stores,
     * else the 1-based index into {@link #causes()} of the first reason it refuses the row, in the codec's order
     * (columns in table order, then the item's size).
     */
    public String refusal() {
        return refusal;
    }

    public List<Cause> causes() {
        return causes;
    }

    /** SQL: the write units a put of an item of {@code bytes} consumes on the table ({@link ItemSize#tableUnits}). */
    public static String tableUnits(String bytes) {
        return "greatest(1, ceil(" + bytes + " / " + ItemSize.WRITE_UNIT_BYTES + ".0))";
    }

    /** SQL: the same on the slot index ({@link ItemSize#indexUnits}). */
    public static String indexUnits(String bytes) {
        return tableUnits("(" + bytes + " + " + ItemSize.INDEX_ENTRY_OVERHEAD_BYTES + ")");
    }

    private static List<Refusal> refusals(ColumnSpec col, boolean jsonAsMap, boolean numberAsText) {
        return switch (col.kind()) {
            case NUMERIC, FLOAT -> numberAsText ? List.of() : List.of(Refusal.NUMBER);
            case JSON -> jsonAsMap ? List.of(Refusal.JSON_DEPTH, Refusal.JSON_NUMBER) : List.of();
            default -> List.of();
        };
    }

    private static String refuses(String q, ColumnSpec col, Refusal r) {
        return col.array()
                ? "EXISTS (SELECT 1 FROM unnest(" + q + ") v WHERE v IS NOT NULL AND " + refusesValue("v", r) + ")"
                : "(" + q + " IS NOT NULL AND " + refusesValue(q, r) + ")";
    }

    private static String refusesValue(String v, Refusal r) {
        return switch (r) {
            case NUMBER -> "(" + v + "::text NOT" + SPECIAL + " AND " + badNumber("(" + v + "::text)::numeric") + ")";
            case JSON_DEPTH ->
                "jsonb_path_exists(" + v + "::jsonb, 'strict $.**{" + JsonAttributes.MAX_DEPTH
                        + " to last} ? (@.type() == \"object\" || @.type() == \"array\")')";
            case JSON_NUMBER ->
                "EXISTS (SELECT 1 FROM jsonb_path_query(" + v + "::jsonb, 'strict $.** ? (@.type() =="
                        + " \"number\")') n WHERE " + badNumber("(n #>> '{}')::numeric") + ")";
            default -> throw new IllegalArgumentException(r.name());
        };
    }

    /** A number DynamoDB's N cannot hold: magnitude outside 1E-130..below 1E126, or more than 38 significant digits. */
    private static String badNumber(String n) {
        return NUMBER_CHECK.formatted(n, digits(n));
    }

    /** Significant digits of a numeric: its digits without the point, leading and trailing zeros. */
    private static String digits(String n) {
        return "length(trim(both '0' from replace(abs(" + n + ")::text, '.', '')))";
    }

    /** DynamoDB's size of N: about one byte per two significant digits, plus one. */
    private static String numberBytes(String n) {
        return "(CASE WHEN " + n + " = 0 THEN 1 ELSE (" + digits(n) + " + 1) / 2 + 1 END)";
    }

    /**
     * A list per array and per sub-array ({@code {{1,2},{3,4}}} is a list of two lists): 3 bytes each, 1 per entry,
     * plus the elements. With {@code S} the entries of every level together ({@code d1 + d1*d2 + ...}), there are
     * {@code 1 + S - cardinality} lists. Postgres arrays have at most 6 dimensions.
     */
    private static String arraySize(String q, ColumnSpec col, boolean jsonAsMap, boolean numberAsText) {
        StringBuilder entries = new StringBuilder("(0");
        StringBuilder product = new StringBuilder();
        for (int k = 1; k <= 6; k++) {
            product.append(k == 1 ? "" : " * ")
                    .append("array_length(")
                    .append(q)
                    .append(", ")
                    .append(k)
                    .append(')');
            entries.append(" + coalesce(").append(product).append(", 0)");
        }
        entries.append(')');
        return "(CASE WHEN " + q + " IS NULL THEN 1 WHEN array_ndims(" + q + ") IS NULL THEN 3 ELSE 3 * (1 + "
                + entries + " - cardinality(" + q + ")) + " + entries + " + (SELECT sum("
                + valueSize("v", col, jsonAsMap, numberAsText) + ") FROM unnest(" + q + ") v) END)";
    }

    private static String valueSize(String v, ColumnSpec col, boolean jsonAsMap, boolean numberAsText) {
        String bytes =
                switch (col.kind()) {
                    case STRING -> col.typname().equals("bpchar") ? "octet_length(" + v + ")" : text(v);
                    case OTHER -> text(v);
                    case INTEGER -> numberBytes(v + "::numeric");
                    case NUMERIC, FLOAT ->
                        numberAsText
                                ? text(v)
                                : "(CASE WHEN " + v + "::text" + SPECIAL + " THEN " + text(v) + " ELSE "
                                        + numberBytes("(" + v + "::text)::numeric") + " END)";
                    case BOOL -> "1";
                    case UUID -> "36";
                    case JSON -> jsonAsMap ? jsonMapSize(v) : text(v);
                    case TIMESTAMP -> time(v, 22); // 2024-10-20T02:15:30.500000
                    case TIMESTAMPTZ -> time(v, 23); // the same and Z
                    case DATE -> time(v, 6); // 2024-10-20
                    case BYTEA -> "octet_length(" + v + ")";
                };
        return "(CASE WHEN " + v + " IS NULL THEN 1 ELSE " + bytes + " END)";
    }

    /**
     * An ISO-8601 time as {@link ValueCodec} writes it: its year ({@code 2024}, {@code -0043} for 44 BC, {@code 0000}
     * for 1 BC, more digits past 9999) and {@code rest} characters; an infinity as its word.
     */
    private static String time(String v, int rest) {
        String year = "extract(year FROM " + v + ")::int";
        String astronomical = "(CASE WHEN " + year + " < 0 THEN " + year + " + 1 ELSE " + year + " END)";
        return "(CASE WHEN NOT isfinite(" + v + ") THEN " + text(v) + " ELSE " + rest + " + (CASE WHEN " + astronomical
                + " < 0 THEN 1 ELSE 0 END) + greatest(4, length(abs(" + astronomical + ")::text)) END)";
    }

    private static String text(String v) {
        return "octet_length(" + v + "::text)";
    }

    /** Every node of the document once: a map 3 bytes and 1 plus its name per entry, a list 3 and 1 per element. */
    private static String jsonMapSize(String v) {
        return "(SELECT sum(CASE jsonb_typeof(n)"
                + " WHEN 'object' THEN 3 + (SELECT count(*) + coalesce(sum(octet_length(k)), 0)"
                + " FROM jsonb_object_keys(n) k)"
                + " WHEN 'array' THEN 3 + jsonb_array_length(n)"
                + " WHEN 'string' THEN octet_length(n #>> '{}')"
                + " WHEN 'number' THEN " + numberBytes("(n #>> '{}')::numeric")
                + " ELSE 1 END) FROM jsonb_path_query(" + v + "::jsonb, 'strict $.**') n)";
    }
}
