package io.rebalance.core.codec;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;

/**
 * A row DynamoDB cannot hold as the codec maps it, named by its id: a permanent, per-row error. The tail and the
 * repair path record it in {@link io.rebalance.core.refused.RefusedRows} and go on with the other rows; a command
 * that meets one outside them exits with {@link ErrorCode#ROW_REFUSED}.
 */
public final class RowRefusedException extends RebalanceException {
    private final String key;
    private final String column;
    private final String reason;
    private final String slot;

    /**
     * @param column the column whose value is refused, or null when the row as a whole is (its size)
     * @param columnType the column's SQL type, or null with a null column
     * @param slot the row's slot name, or null when it has none (a NULL time column)
     */
    public RowRefusedException(String key, String column, String columnType, String reason, String slot) {
        super(
                ErrorCode.ROW_REFUSED,
                "row id=" + key + " cannot be stored in DynamoDB: "
                        + (column == null ? "" : "column " + column + " (" + columnType + "): ") + reason);
        this.key = key;
        this.column = column;
        this.reason = reason;
        this.slot = slot;
    }

    public String key() {
        return key;
    }

    /** The refused column, or null when the whole row is refused. */
    public String column() {
        return column;
    }

    public String reason() {
        return reason;
    }

    /** The row's slot name, or null when the row has none. */
    public String slot() {
        return slot;
    }
}
