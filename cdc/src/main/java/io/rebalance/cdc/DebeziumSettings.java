package io.rebalance.cdc;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.keyspace.TailKeys;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * The settings of the tail's Debezium engine (pgoutput, keys only, offsets in Redis fenced by the lease), as typed
 * code in one place: what the connector reads, what it converts, and where it keeps its position.
 */
final class DebeziumSettings {
    private final MigrationConfig config;
    private final SourceTable table;
    private final TailKeys keys;
    private final String leaseMember;

    /** @param leaseMember the tail lease's member: offset saves compare it, so only this grant moves them */
    DebeziumSettings(MigrationConfig config, SourceTable table, TailKeys keys, String leaseMember) {
        this.config = config;
        this.table = table;
        this.keys = keys;
        this.leaseMember = leaseMember;
    }

    /** The topic Debezium gives the table's change events under {@link #properties}. */
    String topic(TailPreflight.TableId id) {
        return config.tail().slotName() + "." + id.dotted();
    }

    /** The Debezium settings the tail runs with. */
    Properties properties(TailPreflight.TableId id) {
        var t = config.tail();
        var src = config.source();
        ReplicationHost where = ReplicationHost.of(src);
        Properties p = new Properties();
        // every setting of the JDBC URL (sslmode, sslrootcert, ...) reaches the driver of both of Debezium's
        // connections
        where.driverSettings().forEach((k, v) -> p.setProperty("driver." + k, (String) v));
        p.setProperty("name", "rebalance-tail");
        p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        // Named for the slot: Debezium registers its JMX metrics under this name and, when a second engine in one
        // JVM (a test, the bench) uses a name still registered, waits a minute per context before streaming.
        p.setProperty("topic.prefix", t.slotName());
        p.setProperty("database.hostname", where.host());
        p.setProperty("database.port", where.port());
        p.setProperty("database.dbname", where.database());
        p.setProperty("database.user", where.user());
        // The engine logs its properties whole at DEBUG: secrets stay out of them, behind handles (EngineSecrets).
        if (!where.password().isEmpty()) {
            p.setProperty("driver.authenticationPluginClassName", EnginePassword.class.getName());
            p.setProperty("driver." + EnginePassword.HANDLE, EngineSecrets.keep(where.password()));
        }
        p.setProperty("plugin.name", "pgoutput");
        p.setProperty("slot.name", t.slotName());
        p.setProperty("publication.name", t.publication());
        p.setProperty("publication.autocreate.mode", "filtered");
        // a partitioned table's changes then carry its own name, not its partitions' (new partitions included)
        if (id.partitioned()) p.setProperty("publish.via.partition.root", "true");
        p.setProperty("table.include.list", Pattern.quote(id.dotted()));
        // the key Debezium puts on each event is the migration's key columns, whatever the table's primary key is
        p.setProperty(
                "message.key.columns",
                id.dotted() + ":" + String.join(",", table.key().columns()));
        // Only the key is used (ChangeApplier reads the row itself), so Debezium converts no other column: the
        // decoding is most of the tail's CPU, and a large jsonb costs the most of it.
        p.setProperty(
                "column.include.list",
                String.join(
                        ",",
                        table.key().columns().stream()
                                .map(k -> Pattern.quote(id.dotted()) + "\\." + Pattern.quote(k))
                                .toList()));
        p.setProperty("snapshot.mode", "no_data"); // the mover backfills; the tail only streams
        p.setProperty("tombstones.on.delete", "false");
        p.setProperty("skipped.operations", "none"); // TRUNCATE arrives, to be reported (ChangeHandler#truncated)
        p.setProperty("slot.drop.on.stop", "false");
        p.setProperty("poll.interval.ms", Long.toString(t.pollInterval().toMillis()));
        p.setProperty("max.batch.size", Integer.toString(t.maxBatch()));
        p.setProperty("max.queue.size", Integer.toString(t.maxBatch() * 4));
        p.setProperty("heartbeat.interval.ms", Long.toString(t.heartbeat().toMillis()));
        // An idle table gets no events, and Postgres 15's pgoutput sends nothing for other tables' transactions, so
        // the slot would pin WAL forever. Each heartbeat writes a logical message instead (no table, no row): the
        // slot decodes it, the tail passes it, and the confirmed position follows the server's.
        p.setProperty("heartbeat.action.query", "SELECT pg_logical_emit_message(false, 'rebalance.heartbeat', '')");
        p.setProperty("offset.storage", RedisOffsetStore.class.getName());
        p.setProperty("offset.flush.interval.ms", "1000");
        p.setProperty(RedisOffsetStore.REDIS, EngineSecrets.keep(config.redis()));
        p.setProperty(RedisOffsetStore.OFFSETS_KEY, keys.offsets());
        p.setProperty(RedisOffsetStore.LEASE_KEY, keys.lease());
        p.setProperty(RedisOffsetStore.OWNER, leaseMember); // saves compare the member: this grant, not the process
        return p;
    }
}
