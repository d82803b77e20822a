package io.rebalance.core.codec;

/**
 * One row as read from Postgres, before encoding.
 *
 * @param key the key column's text form (ULID text, bigint digits, or uuid), used for progress and in errors
 * @param values per column in {@link RowCodec#columns()} order: the text form, {@code byte[]} for a scalar bytea,
 *     or null for SQL NULL
 */
public record SourceRow(String key, Object[] values) {}
