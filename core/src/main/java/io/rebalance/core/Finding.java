package io.rebalance.core;

import io.rebalance.protocol.RebalanceException;

/**
 * One result of a pre-flight check ({@code rebalance check}): what was checked, how it stands, and in {@code detail}
 * what was found and, unless it is {@link Level#OK}, the way out.
 *
 * @param check a short stable name, such as {@code wal_level}
 */
public record Finding(String check, Level level, String detail) {
    public enum Level {
        OK,
        /** Works, but can surprise: worth changing before a run of days. */
        WARNING,
        /** A part would refuse to run, or rows would not reach DynamoDB. */
        BLOCKING
    }

    public static Finding ok(String check, String detail) {
        return new Finding(check, Level.OK, detail);
    }

    public static Finding warning(String check, String detail) {
        return new Finding(check, Level.WARNING, detail);
    }

    /** A part would refuse with {@code e}: its message already says what to do. */
    public static Finding blocking(String check, RebalanceException e) {
        return new Finding(
                check, Level.BLOCKING, e.getMessage() + " (exit " + e.code().exitCode() + ")");
    }

    public static Finding blocking(String check, String detail) {
        return new Finding(check, Level.BLOCKING, detail);
    }
}
