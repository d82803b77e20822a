package io.rebalance.cdc;

import io.rebalance.core.Finding;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Whether a change stream covers a copy started now: the tail's replication slot exists (pgoutput, this database)
 * and its publication includes the source table. A slot keeps every change from its creation on until the tail
 * confirms it, so with both in place, whatever is written while the copy runs reaches DynamoDB even if no tail
 * process is running yet. Without them those writes would be lost, which {@code copy} refuses unless told there
 * are no concurrent writers.
 */
public final class CopyCoverage {
    private CopyCoverage() {}

    public static void check(Connection c, MigrationConfig config) throws SQLException {
        String slot = config.tail().slotName();
        String publication = config.tail().publication();
        String table = config.source().table();
        String unless = "; or, if nothing writes to " + table + " until cutover, pass --no-concurrent-writers";
        if (!exists(c, table)) return; // the copy's own preflight names a missing table (exit 12)
        TailPreflight.SlotInfo s = TailPreflight.slot(c, slot);
        if (!s.exists() || !"pgoutput".equals(s.plugin()) || !c.getCatalog().equals(s.database())) {
            String found = s.exists()
                    ? "replication slot '" + slot + "' is for plugin " + s.plugin() + " in database " + s.database()
                    : "no replication slot '" + slot + "' (tail.slotName) exists";
            throw new RebalanceException(
                    ErrorCode.NO_CHANGE_STREAM,
                    found + ", so changes made to " + table + " while the copy runs would not reach DynamoDB;"
                            + " start `rebalance tail` first (it creates the slot and publication and streams"
                            + " them)" + unless);
        }
        Finding unfit = TailPreflight.publication(c, table, publication);
        if (unfit.level() == Finding.Level.BLOCKING) {
            throw new RebalanceException(ErrorCode.NO_CHANGE_STREAM, unfit.detail() + unless);
        }
        if (!TailPreflight.publishes(c, publication, table)) {
            throw new RebalanceException(
                    ErrorCode.NO_CHANGE_STREAM,
                    "publication '" + publication + "' (tail.publication) does not include " + table + ", so the"
                            + " slot '" + slot + "' carries none of its changes; start `rebalance tail` with this"
                            + " configuration (it creates the publication for the table)" + unless);
        }
    }

    private static boolean exists(Connection c, String table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }
}
