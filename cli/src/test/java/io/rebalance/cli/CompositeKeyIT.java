package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.client.WriteGuard;
import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.protocol.route.Target;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Delete;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * A multi-tenant table keyed {@code PRIMARY KEY (tenant_id, id)}, with no key setting at all (the key is the primary
 * key), goes to DynamoDB with {@code tenant_id} as the partition key and {@code id} (time-ordered bigints, the slots'
 * time) as the sort key. Every id is used by five tenants, so a part that named rows by one column would mix them up.
 * Copy, the tail's changes, verify with a corruption pinpointed to both key parts, repair, a cutover with the
 * application writing to DynamoDB, and a rollback that carries those writes back, end with both stores equal row by
 * row.
 */
class CompositeKeyIT {
    private static final Instant START = Instant.parse("2024-10-20T00:00:00Z");
    private static final int TENANTS = 5;
    private static final int IDS = 400;

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("tenants");
    private final String prefix = SharedServices.unique("ck") + ":";

    private static final Instant EPOCH = Instant.parse("2024-01-01T00:00:00Z");

    /** A time-ordered id (milliseconds since {@link #EPOCH} above 23 bits) of {@code seconds} after the start. */
    private static long id(long seconds, int sequence) {
        return ((START.plusSeconds(seconds).toEpochMilli() - EPOCH.toEpochMilli()) << 23) | sequence;
    }

    private Map<String, String> settings() {
        Map<String, String> s = TailedTable.settings(services, table, prefix);
        s.put("slots.snowflake.epochMillis", Long.toString(EPOCH.toEpochMilli()));
        return s;
    }

    private List<String> args() {
        return TailedTable.args(settings());
    }

    private void make(Connection pg) throws Exception {
        try (Statement st = pg.createStatement()) {
            st.execute("CREATE TABLE " + table + " (tenant_id int NOT NULL, id bigint NOT NULL, kind text NOT NULL,"
                    + " data jsonb, created_at timestamptz NOT NULL, PRIMARY KEY (tenant_id, id))");
            st.execute("CREATE INDEX ON " + table + " (id)"); // slots are ranges of id
        }
        try (PreparedStatement ps = pg.prepareStatement("INSERT INTO " + table + " VALUES (?, ?, ?, ?::jsonb, ?)")) {
            for (int i = 0; i < IDS; i++) {
                for (int t = 1; t <= TENANTS; t++) {
                    ps.setInt(1, t);
                    ps.setLong(2, id(i * 17L, 0));
                    ps.setString(3, "k" + (i % 7));
                    ps.setString(4, "{\"tenant\": " + t + ", \"n\": " + i + ", \"tags\": [\"a\", \"b\"]}");
                    ps.setObject(
                            5,
                            java.time.OffsetDateTime.ofInstant(START.plusSeconds(i * 17L), java.time.ZoneOffset.UTC));
                    ps.addBatch();
                }
            }
            ps.executeBatch();
        }
    }

    @Test
    void aTwoColumnPrimaryKeyIsCopiedTailedVerifiedCutOverAndRolledBackExactly() throws Exception {
        try (TailedTable t = new TailedTable(services, table, settings(), this::make)) {
            assertThat(t.source.key().columns()).containsExactly("tenant_id", "id");
            assertThat(t.source.key().attributes()).containsExactly("tenant_id", "id");
            var keySchema =
                    t.dynamo.describeTable(b -> b.tableName(table)).table().keySchema();
            assertThat(keySchema)
                    .extracting(k -> k.attributeName() + " " + k.keyType())
                    .containsExactly("tenant_id HASH", "id RANGE");

            CliRun check = CliRun.of(args(), "check");
            assertThat(check.exitCode()).as(check.out() + check.err()).isZero();
            assertThat(check.out())
                    .contains(String.format(
                            java.util.Locale.ROOT,
                            "rows     %,d: %,d to write, 0 refused",
                            TENANTS * IDS,
                            TENANTS * IDS));
            CliRun prepared = CliRun.of(args(), "cutover", "--prepare");
            assertThat(prepared.exitCode()).as(prepared.out() + prepared.err()).isZero();
            CliRun copied = CliRun.of(args(), "copy", "--no-progress");
            assertThat(copied.exitCode()).as(copied.out() + copied.err()).isZero();
            assertThat(t.items()).hasSize(TENANTS * IDS);
            CliRun status = CliRun.of(args(), "status");
            assertThat(status.out()).contains("FINISHED");

            // the tail: an update, a delete and an insert that share an id with rows of other tenants
            long shared = id(17L * 10, 0);
            long fresh = id(17L * 10 + 1, 5);
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement()) {
                st.execute("UPDATE " + table + " SET kind = 'tailed' WHERE tenant_id = 2 AND id = " + shared);
                st.execute("DELETE FROM " + table + " WHERE tenant_id = 3 AND id = " + shared);
                st.execute("INSERT INTO " + table + " VALUES (7, " + fresh + ", 'new', '{}', now())");
            }
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                Map<String, Map<String, AttributeValue>> items = t.items();
                return items.containsKey("[7, " + fresh + "]")
                        && !items.containsKey("[3, " + shared + "]")
                        && "tailed"
                                .equals(items.get("[2, " + shared + "]")
                                        .get("kind")
                                        .s());
            });
            assertThat(t.items().get("[1, " + shared + "]").get("kind").s()).isNotEqualTo("tailed");
            assertThat(t.items()).containsKey("[4, " + shared + "]");
            t.assertEqualStores();

            CliRun verified = CliRun.of(args(), "verify", "--all");
            assertThat(verified.exitCode()).as(verified.out() + verified.err()).isZero();

            // corruption planted in DynamoDB: one item changed, one removed, one that has no row; each named by both
            // key parts, and none of the other tenants' items of the same ids
            long victim = id(17L * 200, 0);
            String slot = io.rebalance.core.slot.Slot.containing(START.plusSeconds(17L * 200))
                    .name();
            t.dynamo.updateItem(b -> b.tableName(table)
                    .key(key(4, victim))
                    .updateExpression("SET #k = :v")
                    .expressionAttributeNames(Map.of("#k", "kind"))
                    .expressionAttributeValues(Map.of(":v", AttributeValue.fromS("corrupted"))));
            t.dynamo.deleteItem(b -> b.tableName(table).key(key(5, victim)));
            Map<String, AttributeValue> stray = new HashMap<>(t.items().get("[1, " + victim + "]"));
            stray.put("tenant_id", AttributeValue.fromN("9"));
            t.dynamo.putItem(b -> b.tableName(table).item(stray));
            CliRun mismatch = CliRun.of(args(), "verify", "--slot", slot, "--json");
            assertThat(mismatch.exitCode()).as(mismatch.out() + mismatch.err()).isEqualTo(1);
            assertThat(mismatch.out())
                    .contains("[4, " + victim + "]", "[5, " + victim + "]", "[9, " + victim + "]")
                    .doesNotContain("[1, " + victim + "]", "[2, " + victim + "]", "[3, " + victim + "]");
            CliRun text = CliRun.of(args(), "verify", "--slot", slot);
            assertThat(text.out()).contains("[4, " + victim + "]").contains("kind");
            CliRun repaired = CliRun.of(args(), "verify", "--all", "--repair");
            assertThat(repaired.exitCode()).as(repaired.out() + repaired.err()).isZero();
            CliRun match = CliRun.of(args(), "verify", "--all");
            assertThat(match.exitCode()).as(match.out() + match.err()).isZero();
            t.assertEqualStores();

            // cutover; the application writes to DynamoDB through the guard, keyed by both parts; rollback
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> CliRun.of(args(), "cutover", "--dry-run").exitCode() == 0);
            CliRun cut = CliRun.of(args(), "cutover");
            assertThat(cut.exitCode()).as(cut.out() + cut.err()).isZero();
            RowCodec codec = t.source.codec(t.config.target());
            long written = id(17L * 300 + 3, 9);
            try (WriteGuard guard = new WriteGuard(t.redis, t.dynamo, t.guard())) {
                String scope = t.config.cutover().scope();
                for (int tenant : new int[] {1, 6}) { // 1 shares ids with other tenants; 6 is new
                    Object[] values = {
                        Integer.toString(tenant),
                        Long.toString(written),
                        "app",
                        "{\"by\": \"app\"}",
                        "2024-10-20 01:25:03+00"
                    };
                    Map<String, AttributeValue> item = codec.encode(new SourceRow(
                            t.source.key().text(List.of(values[0].toString(), values[1].toString())), values));
                    Target where = guard.write(scope, permit -> {
                        permit.writeDynamo(
                                t.dynamo,
                                TransactWriteItem.builder()
                                        .put(Put.builder()
                                                .tableName(table)
                                                .item(item)
                                                .build())
                                        .build());
                        return permit.target();
                    });
                    assertThat(where).isEqualTo(Target.DYNAMODB);
                }
                guard.write(scope, permit -> {
                    permit.writeDynamo(
                            t.dynamo,
                            TransactWriteItem.builder()
                                    .delete(Delete.builder()
                                            .tableName(table)
                                            .key(key(2, shared))
                                            .build())
                                    .build());
                    return null;
                });
            }
            CliRun back = CliRun.of(args(), "cutover", "--rollback");
            assertThat(back.exitCode()).as(back.out() + back.err()).isZero();
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement();
                    ResultSet rs = st.executeQuery("SELECT tenant_id, kind FROM " + table + " WHERE id = " + written
                            + " ORDER BY tenant_id")) {
                List<String> rows = new ArrayList<>();
                while (rs.next()) rows.add(rs.getInt(1) + ":" + rs.getString(2));
                assertThat(rows).containsExactly("1:app", "6:app");
            }
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement();
                    ResultSet rs = st.executeQuery(
                            "SELECT tenant_id FROM " + table + " WHERE id = " + shared + " ORDER BY tenant_id")) {
                List<Integer> tenants = new ArrayList<>();
                while (rs.next()) tenants.add(rs.getInt(1));
                assertThat(tenants).containsExactly(1, 4, 5); // 2 deleted in DynamoDB, 3 deleted in Postgres
            }
            t.assertEqualStores();
            CliRun after = CliRun.of(args(), "verify", "--all");
            assertThat(after.exitCode()).as(after.out() + after.err()).isZero();
        }
    }

    private static Map<String, AttributeValue> key(int tenant, long id) {
        return Map.of(
                "tenant_id",
                AttributeValue.fromN(Integer.toString(tenant)),
                "id",
                AttributeValue.fromN(Long.toString(id)));
    }
}
