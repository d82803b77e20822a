package io.rebalance.protocol.handoff;

/** Postgres WAL positions: the number Debezium reports and the {@code X/Y} text Postgres prints. */
public final class Lsn {
    private Lsn() {}

    public static String text(long lsn) {
        return Long.toHexString(lsn >>> 32).toUpperCase() + "/"
                + Long.toHexString(lsn & 0xFFFFFFFFL).toUpperCase();
    }

    public static long parse(String text) {
        int slash = text.indexOf('/');
        if (slash < 0) throw new IllegalArgumentException("not a WAL position: " + text);
        return (Long.parseLong(text.substring(0, slash), 16) << 32) | Long.parseLong(text.substring(slash + 1), 16);
    }
}
