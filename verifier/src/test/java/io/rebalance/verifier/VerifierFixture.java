package io.rebalance.verifier;

import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.BatchWriter;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.dynamo.WritePacer;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.lease.WriteFence;
import io.rebalance.testkit.SharedServices;
import io.rebalance.testkit.TestMigration;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * A source table and its DynamoDB copy for verifier tests, over the kit's {@link TestMigration}. The copy is written through the codec and the batch
 * writer the mover uses (slot by slot, page by page); the end-to-end tests in the cli module copy with
 * {@code rebalance copy} itself.
 */
final class VerifierFixture implements AutoCloseable {
    private final TestMigration migration = new TestMigration("verify").set("verify.settle", "0s");
    final SharedServices services = migration.services;
    final String table = migration.table;
    final DynamoDbClient dynamo = services.dynamoClient();

    VerifierFixture set(String key, String value) {
        migration.set(key, value);
        return this;
    }

    MigrationConfig config() {
        return migration.config();
    }

    Connection session() throws Exception {
        return new SourceSession(config().source()).open();
    }

    /** The source table as the copy takes it: its key ranges kept, where it has them. */
    SourceTable sourceTable() throws Exception {
        try (Connection c = new SourceSession(config().source()).open()) {
            return SourceTable.inspect(c, config()).keepRanges(c);
        }
    }

    /** Creates the DynamoDB table and copies the given slots into it. */
    void copy(List<Slot> slots) throws Exception {
        MigrationConfig config = config();
        SourceTable source = sourceTable();
        TargetTable.create(dynamo, table, source.key(), io.rebalance.core.dynamo.SlotIndex.of(config.target()));
        write(slots);
    }

    /** Copies the given slots into the table {@link #copy} created, again. */
    void write(List<Slot> slots) throws Exception {
        MigrationConfig config = config();
        SourceTable source = sourceTable();
        RowCodec codec = source.codec(config.target());
        PageReader reader = new PageReader(source);
        BatchWriter writer = new BatchWriter(dynamo, table, 25, Retrier.standard(), WritePacer.NONE);
        try (Connection c = new SourceSession(config.source()).open()) {
            for (Slot slot : slots) {
                String last = null;
                while (true) {
                    List<SourceRow> page = reader.page(c, slot, last, 500);
                    if (page.isEmpty()) break;
                    List<WriteRequest> items = new ArrayList<>();
                    for (SourceRow row : page) items.add(BatchWriter.put(codec.encode(row)));
                    writer.apply(items, WriteFence.NONE);
                    last = page.get(page.size() - 1).key();
                }
            }
        }
    }

    Verifier verifier(SlotVerifier.BeforeRecheck hook) throws Exception {
        return verifier(hook, o -> o);
    }

    /** A verifier with {@code hook} and the options {@code options} makes of the defaults. */
    Verifier verifier(SlotVerifier.BeforeRecheck hook, java.util.function.UnaryOperator<VerifyOptions> options)
            throws Exception {
        VerifyOptions defaults = VerifyOptions.of(InFlight.settle(java.time.Duration.ZERO));
        return new Verifier(config(), sourceTable(), dynamo, options.apply(defaults), hook);
    }

    Map<String, AttributeValue> item(String id) {
        return dynamo.getItem(b -> b.tableName(table)
                        .key(Map.of("id", AttributeValue.fromS(id)))
                        .consistentRead(true))
                .item();
    }

    /** Sequential and index scans Postgres counted on the table, once the verifier's sessions have ended. */
    long scans() throws Exception {
        try (Connection c = services.postgres()) {
            org.awaitility.Awaitility.await()
                    .atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> {
                        try (java.sql.Statement st = c.createStatement();
                                java.sql.ResultSet rs =
                                        st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE application_name"
                                                + " = 'rebalance' AND pid <> pg_backend_pid() AND query LIKE '%" + table
                                                + "%'")) {
                            rs.next();
                            return rs.getLong(1) == 0; // their counts are flushed when they end
                        }
                    });
            try (java.sql.Statement st = c.createStatement()) {
                st.execute("SELECT pg_stat_force_next_flush()");
                st.execute("SELECT pg_stat_clear_snapshot()");
                try (java.sql.ResultSet rs = st.executeQuery("SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM"
                        + " pg_stat_user_tables WHERE relname = '" + table + "'")) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        }
    }

    long scansSince(long before) throws Exception {
        long after = scans();
        org.assertj.core.api.Assertions.assertThat(after)
                .as("Postgres counted the verifier's scans")
                .isGreaterThan(before);
        return after - before;
    }

    @Override
    public void close() {
        try {
            dynamo.deleteTable(b -> b.tableName(table));
        } catch (RuntimeException ignored) {
            // the test may have failed before creating it
        }
        dynamo.close();
        try (Connection c = services.postgres();
                java.sql.Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS rebalance_ranges_" + table);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        try {
            migration.close();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
