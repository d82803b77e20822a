package io.rebalance.local;

import io.rebalance.core.slot.Ulid;
import java.io.IOException;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Random;
import java.util.UUID;
import org.postgresql.PGConnection;

/**
 * Generates a realistic {@code room_events} table for the demo, the tests and the benchmarks: ULID text ids
 * spread over a number of hours, a room uuid, a kind, a jsonb payload with a bigint beyond 2^53 and unicode text,
 * a timestamptz with microseconds, and a bigint sequence. Loaded with COPY (about 1M rows in seconds here) and
 * analyzed, so the planner's row estimate is right. Deterministic for a given seed.
 */
public final class RoomEventsGenerator {
    public static final String DDL = "CREATE TABLE %s (id text PRIMARY KEY, room_id uuid NOT NULL, kind text NOT NULL,"
            + " data jsonb, created_at timestamptz NOT NULL, seq bigint NOT NULL)";
    private static final String[] KINDS = {"message", "join", "leave", "reaction", "edit"};
    private static final DateTimeFormatter TS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS'+00'").withZone(ZoneOffset.UTC);
    private static final int CHUNK = 50_000;

    private RoomEventsGenerator() {}

    /**
     * Creates {@code table} and fills it.
     *
     * @param end the rows' times lie in [end - hours, end)
     */
    public static void create(Connection c, String table, long rows, Instant end, int hours, long seed)
            throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute(String.format(DDL, table));
        }
        Random random = new Random(seed);
        long spanMs = hours * 3_600_000L;
        long startMs = end.toEpochMilli() - spanMs;
        UUID[] rooms = new UUID[50];
        for (int i = 0; i < rooms.length; i++) rooms[i] = new UUID(random.nextLong(), random.nextLong());
        StringBuilder buf = new StringBuilder(CHUNK * 200);
        for (long i = 0; i < rows; i++) {
            long ms = startMs + (long) (random.nextDouble() * spanMs);
            String id = Ulid.of(ms, random.nextLong(), random.nextLong());
            String kind = KINDS[random.nextInt(KINDS.length)];
            buf.append(id)
                    .append('\t')
                    .append(rooms[random.nextInt(rooms.length)])
                    .append('\t')
                    .append(kind)
                    .append('\t');
            if (random.nextInt(20) == 0) {
                buf.append("\\N");
            } else {
                buf.append("{\"type\":\"")
                        .append(kind)
                        .append("\",\"text\":\"hello \u2713 caf\u00e9 #")
                        .append(i)
                        .append("\",\"n\":")
                        .append(i)
                        .append(",\"big\":")
                        .append(9007199254740993L + i)
                        .append(",\"score\":")
                        .append(random.nextInt(1000))
                        .append(".25,\"tags\":[\"a\",null,true]}");
            }
            buf.append('\t')
                    .append(TS.format(Instant.ofEpochMilli(ms).plusNanos(random.nextInt(1000) * 1000L)))
                    .append('\t')
                    .append(i)
                    .append('\n');
            if ((i + 1) % CHUNK == 0) flush(c, table, buf);
        }
        flush(c, table, buf);
        try (Statement st = c.createStatement()) {
            st.execute("ANALYZE " + table);
        }
    }

    private static void flush(Connection c, String table, StringBuilder buf) throws SQLException {
        if (buf.length() == 0) return;
        try {
            c.unwrap(PGConnection.class)
                    .getCopyAPI()
                    .copyIn("COPY " + table + " FROM STDIN", new StringReader(buf.toString()));
        } catch (IOException e) {
            throw new SQLException("COPY into " + table + " failed", e);
        }
        buf.setLength(0);
    }
}
