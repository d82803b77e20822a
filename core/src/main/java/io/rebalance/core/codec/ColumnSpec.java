package io.rebalance.core.codec;

/**
 * One source column as the codec sees it.
 *
 * @param name column name, also the DynamoDB attribute name (unless it is the key and the target renames it)
 * @param typname {@code pg_type.typname} of the column, or of the element for arrays
 * @param kind mapping rule of the value, or of each element for arrays
 * @param array whether the column is an array (any dimension) of {@code kind}
 */
public record ColumnSpec(String name, String typname, ColumnKind kind, boolean array) {
    public static ColumnSpec scalar(String name, String typname) {
        return new ColumnSpec(name, typname, ColumnKind.of(typname), false);
    }

    public static ColumnSpec arrayOf(String name, String elementTypname) {
        return new ColumnSpec(name, elementTypname, ColumnKind.of(elementTypname), true);
    }

    /** The SQL type as a person writes it: {@code int8}, {@code text[]}. */
    public String sqlType() {
        return array ? typname + "[]" : typname;
    }
}
