package io.rebalance.core.slot;

import java.util.UUID;

/** The SQL type family of the key column, which decides how a key's text is bound as a JDBC parameter. */
public enum KeyType {
    TEXT,
    UUID,
    BIGINT;

    /** @return the JDBC value for a key given as text */
    public Object bind(String text) {
        return switch (this) {
            case TEXT -> text;
            case UUID -> java.util.UUID.fromString(text);
            case BIGINT -> Long.parseLong(text);
        };
    }

    /** The SQL array type a list of keys is bound as (as text, cast by Postgres). */
    public String sqlArrayType() {
        return switch (this) {
            case TEXT -> "text[]";
            case UUID -> "uuid[]";
            case BIGINT -> "int8[]";
        };
    }

    /** @return the key type for a {@code pg_type.typname}, or null when keys of that type cannot be slotted */
    public static KeyType ofTypname(String typname) {
        return switch (typname) {
            case "text", "varchar", "bpchar" -> TEXT; // bpchar then refused by SourceTable: its padding is lost
            case "uuid" -> UUID;
            case "int8", "int4", "int2" -> BIGINT;
            default -> null;
        };
    }

    public static String text(Object jdbcValue) {
        return jdbcValue instanceof UUID u ? u.toString() : String.valueOf(jdbcValue);
    }
}
