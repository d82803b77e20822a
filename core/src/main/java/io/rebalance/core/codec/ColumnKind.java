package io.rebalance.core.codec;

import java.util.Locale;

/** How a Postgres type is carried into DynamoDB. One kind per distinct mapping rule of {@link ValueCodec}. */
public enum ColumnKind {
    STRING,
    INTEGER,
    NUMERIC,
    FLOAT,
    BOOL,
    UUID,
    JSON,
    TIMESTAMP,
    TIMESTAMPTZ,
    DATE,
    BYTEA,
    /** Anything else (time, interval, inet, enums, ...): a string holding Postgres's text form, losslessly. */
    OTHER;

    /** @param typname a scalar {@code pg_type.typname} such as {@code int8} or {@code timestamptz} */
    public static ColumnKind of(String typname) {
        return switch (typname.toLowerCase(Locale.ROOT)) {
            case "text", "varchar", "bpchar", "char", "name", "citext" -> STRING;
            case "int2", "int4", "int8" -> INTEGER;
            case "numeric" -> NUMERIC;
            case "float4", "float8" -> FLOAT;
            case "bool" -> BOOL;
            case "uuid" -> UUID;
            case "json", "jsonb" -> JSON;
            case "timestamp" -> TIMESTAMP;
            case "timestamptz" -> TIMESTAMPTZ;
            case "date" -> DATE;
            case "bytea" -> BYTEA;
            default -> OTHER;
        };
    }
}
