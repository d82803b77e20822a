package io.rebalance.cdc;

import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotKeyspace;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.keyspace.TailKeys;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.UnifiedJedis;

/**
 * The partitions of a partitioned source table, watched for ones attached with rows already in them: those rows
 * entered the table without a change the stream carries (ATTACH PARTITION writes no row to the WAL), and slots the
 * copy had finished would lack them. Such a partition's slots are recorded as changed ({@link ChangedSlots#arrived}),
 * so they are verified again (and repaired) before a cutover. A partition created empty (CREATE TABLE ... PARTITION
 * OF) needs nothing: its rows arrive as inserts the stream carries. A partition detached or dropped takes its rows
 * away without deletes the stream carries: every slot then counts as changed.
 *
 * <p>The partitions seen are kept in Redis, so an attach while no tail ran is found when one starts again.
 */
final class PartitionWatch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PartitionWatch.class);

    private final SourceTable table;
    private final UnifiedJedis redis;
    private final String key;
    private final ChangedSlots changed;
    private final SourceSession session;
    private Connection catalog;

    PartitionWatch(SourceTable table, SourceSession session, UnifiedJedis redis, TailKeys keys, ChangedSlots changed) {
        this.table = table;
        this.session = session;
        this.redis = redis;
        this.key = keys.partitions();
        this.changed = changed;
    }

    /** The first time, records the partitions there are (the copy reads their rows); then, each new one. */
    void check() throws SQLException {
        try {
            if (catalog == null || catalog.isClosed()) catalog = session.open(); // one connection, kept
            check(catalog);
        } catch (SQLException | RuntimeException e) {
            close(); // the next call connects again
            throw e;
        }
    }

    private void check(Connection c) throws SQLException {
        List<String> now = leaves(c);
        if (now.isEmpty()) return; // none yet
        Set<String> seen = redis.smembers(key);
        if (seen.isEmpty()) {
            redis.sadd(key, now.toArray(String[]::new));
            return;
        }
        for (String partition : now) {
            if (seen.contains(partition)) continue;
            arrived(c, partition);
            redis.sadd(key, partition);
        }
        for (String partition : seen) {
            if (now.contains(partition)) continue;
            left(c, partition);
            redis.srem(key, partition);
        }
    }

    private void arrived(Connection c, String partition) throws SQLException {
        long lsn = currentLsn(c); // before reading the rows: any verification after sees them
        SlotKeyspace.Hours hours = table.keyspace() instanceof SlotKeyspace.Hours h ? h : null;
        String ends = hours != null
                ? hours.minMaxQuery(partition)
                // a key range is Postgres' to tell: any row makes every range changed (ChangedSlots.ALL)
                : "SELECT (SELECT 'r' FROM " + partition + " LIMIT 1), NULL";
        try (PreparedStatement ps = c.prepareStatement(ends);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            if (rs.getString(1) == null) {
                log.info("partition {} of {} was added empty: its rows arrive as changes", partition, table.name());
                return;
            }
            Slot oldest = hours != null ? Slot.containing(hours.instantOf(rs.getString(1))) : Slot.range(0);
            Slot newest = hours != null
                    ? Slot.containing(hours.instantOf(rs.getString(2)))
                    : Slot.range(((KeyRanges) table.keyspace()).count() - 1);
            changed.arrived(oldest, newest, lsn);
            log.warn(
                    "partition {} was attached to {} with rows in it (slots {}..{}): they reached no change stream."
                            + " Those slots count as changed: `rebalance verify --slot {}..{} --repair` writes what"
                            + " they lack, and a cutover verifies them first",
                    partition,
                    table.name(),
                    oldest,
                    newest,
                    oldest,
                    newest);
        }
    }

    private static long currentLsn(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_current_wal_lsn()::text");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return Lsn.parse(rs.getString(1));
        }
    }

    /**
     * A partition detached or dropped took its rows out of the table without a delete the stream carries: their
     * items stay in DynamoDB. Which slots they were in is not known any more, so every slot counts as changed.
     */
    private void left(Connection c, String partition) throws SQLException {
        changed.everyRow(currentLsn(c));
        log.warn(
                "partition {} left {}: its rows are gone from the table but not from DynamoDB. Every slot counts as"
                        + " changed: `rebalance verify --all --repair` deletes the items, and a cutover verifies"
                        + " every slot first",
                partition,
                table.name());
    }

    @Override
    public void close() {
        try {
            if (catalog != null) catalog.close();
        } catch (SQLException ignored) {
            // dropped either way
        }
        catalog = null;
    }

    /** The leaf partitions of the table, by name. */
    private List<String> leaves(Connection c) throws SQLException {
        List<String> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT relid::regclass::text FROM pg_partition_tree(?::regclass) WHERE isleaf AND level > 0")) {
            ps.setString(1, table.name());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.add(rs.getString(1));
            }
        }
        return out;
    }
}
