package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.client.WriteGuard;
import io.rebalance.protocol.fence.FenceTrigger;
import io.rebalance.protocol.part.PartMap;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.protocol.route.Target;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * Parts on key ranges: a tenants' table keyed (tenant_id, id uuid) with nothing that tells time is slotted by key
 * ranges and moved part by part. The pilot tenant is cut over alone (Postgres refuses its rows, the other tenants
 * write on), the application writes one of its rows to DynamoDB without a slot, every range still verifies, and the
 * pilot's rollback carries the write back.
 */
class PartedKeyRangesIT {
    private static final String PARTS = "[{name: pilot, values: [1]}, {name: rest}]";

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("partkr");
    private final String prefix = SharedServices.unique("pk") + ":";

    private Map<String, String> settings() {
        Map<String, String> s = TailedTable.settings(services, table, prefix);
        s.put("slots.timeFrom", "none");
        s.put("slots.rowsPerSlot", "1000");
        s.put("cutover.parts", PARTS);
        return s;
    }

    private CliRun ok(String... command) {
        CliRun run = CliRun.of(TailedTable.args(settings()), command);
        assertThat(run.exitCode())
                .as(String.join(" ", command) + "\n" + run.out() + run.err())
                .isZero();
        return run;
    }

    @Test
    void aTenantOfAKeyRangedTableIsCutOverAndRolledBackAlone() throws Exception {
        try (TailedTable t = new TailedTable(services, table, settings(), pg -> {
            try (Statement st = pg.createStatement()) {
                st.execute("CREATE TABLE " + table + " (tenant_id int NOT NULL, id uuid NOT NULL, kind text NOT NULL,"
                        + " PRIMARY KEY (tenant_id, id))");
                st.execute("INSERT INTO " + table + " SELECT t, gen_random_uuid(), 'k' FROM generate_series(1, 20) t,"
                        + " generate_series(1, 150) i");
                st.execute("ANALYZE " + table);
            }
        })) {
            RoutingTable routes = new RoutingTable(t.redis, t.config.redis().keyspace());
            ok("cutover", "--prepare");
            ok("copy", "--no-progress");
            assertThat(ok("verify", "--all").out()).contains("3 slots: 3 MATCH");
            ok("verify", "--all", "--part", "pilot");
            List<String> args = TailedTable.args(settings());
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> CliRun.of(args, "cutover", "--dry-run", "--part", "pilot")
                                    .exitCode()
                            == 0);
            ok("cutover", "--part", "pilot");
            assertThat(routes.get(PartMap.scope(table, "pilot")).orElseThrow().status())
                    .isEqualTo(RouteStatus.TARGET);
            assertThat(routes.get(PartMap.scope(table, "rest")).orElseThrow().status())
                    .isEqualTo(RouteStatus.SOURCE);

            String pilotRow;
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement()) {
                assertThatThrownBy(() -> st.executeUpdate("UPDATE " + table + " SET kind = 'pg' WHERE tenant_id = 1"))
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState())
                                .isEqualTo(FenceTrigger.REFUSED));
                assertThat(st.executeUpdate("UPDATE " + table + " SET kind = 'pg' WHERE tenant_id = 2"))
                        .isEqualTo(150);
                try (ResultSet rs = st.executeQuery("SELECT id FROM " + table + " WHERE tenant_id = 1 LIMIT 1")) {
                    rs.next();
                    pilotRow = rs.getString(1);
                }
            }
            // the application writes the pilot's row to DynamoDB, without the slot it cannot know
            Map<String, AttributeValue> item = Map.of(
                    "tenant_id", AttributeValue.fromN("1"),
                    "id", AttributeValue.fromS(pilotRow),
                    "kind", AttributeValue.fromS("app"));
            try (WriteGuard guard = new WriteGuard(t.redis, t.dynamo, t.guard())) {
                Target where = guard.write(PartMap.scope(table, "pilot"), permit -> {
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
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> "app".equals(kind(pilotRow)));
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> CliRun.of(args, "verify", "--all").exitCode() == 0); // the tail carries tenant 2's
            ok("cutover", "--rollback", "--part", "pilot");
            assertThat(routes.get(PartMap.scope(table, "pilot")).orElseThrow().status())
                    .isEqualTo(RouteStatus.SOURCE);
            assertThat(kind(pilotRow)).isEqualTo("app");
            ok("verify", "--all");
        }
    }

    private String kind(String id) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement();
                ResultSet rs =
                        st.executeQuery("SELECT kind FROM " + table + " WHERE tenant_id = 1 AND id = '" + id + "'")) {
            return rs.next() ? rs.getString(1) : null;
        }
    }
}
