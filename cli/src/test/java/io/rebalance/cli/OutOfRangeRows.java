package io.rebalance.cli;

import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;

/**
 * A table a user reported: room_events over 12 hours in which about a quarter of the rows (those whose id
 * hashes to 0 mod 4) hold a json number outside DynamoDB's range, so {@code target.json: map} refuses them.
 */
final class OutOfRangeRows {
    private static final String BAD = "abs(hashtext(id)) % 4 = 0";

    private OutOfRangeRows() {}

    /** @return how many rows hold the out-of-range number */
    static long create(SharedServices services, String table, int rows) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            RoomEventsGenerator.create(pg, table, rows, Instant.parse("2024-10-20T12:00:00Z"), 12, 5);
            return st.executeUpdate("UPDATE " + table + " SET data = '{\"x\": 1.5e300}'::jsonb WHERE " + BAD);
        }
    }

    /** Whether the row with this id is one of them. */
    static boolean isRefused(SharedServices services, String table, String id) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement();
                ResultSet rs = st.executeQuery("SELECT " + BAD + " FROM " + table + " WHERE id = '" + id + "'")) {
            return rs.next() && rs.getBoolean(1);
        }
    }
}
