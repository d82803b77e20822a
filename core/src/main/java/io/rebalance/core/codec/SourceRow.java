package io.rebalance.core.codec;

import io.rebalance.core.slot.Slot;

/**
 * One row as read from Postgres, before encoding.
 *
 * @param key the key column's text form (ULID text, bigint digits, or uuid), used for progress and in errors
 * @param values per column in {@link RowCodec#columns()} order: the text form, {@code byte[]} for a scalar bytea,
 *     or null for SQL NULL
 * @param slot the row's slot where the reader knows it and only Postgres can say it (a key range: the collation
 *     orders it), else null
 */
public record SourceRow(String key, Object[] values, Slot slot) {
    public SourceRow(String key, Object[] values) {
        this(key, values, null);
    }
}
