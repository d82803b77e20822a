package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.client.WriteGuard;
import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
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
import software.amazon.awssdk.services.dynamodb.model.Delete;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * A table of 20 tenants moved part by part: pilot (tenant 1), early (tenants 2 and 3) and the rest. The pilot is cut
 * over alone: its rows' writes go to DynamoDB and Postgres refuses them, while every other tenant's writes go on in
 * Postgres and reach DynamoDB through the tail. Another part is cut over and rolled back beside it; the pilot is
 * rolled back with its DynamoDB writes carried to Postgres, cut over again and its window closed: from then on
 * Postgres keeps its rows no more, and verification, and the next part's cutover, compare only the parts Postgres
 * keeps. Each command names its part; the other parts' routes never move.
 */
class PartedCutoverIT {
    private static final String PARTS = "[{name: pilot, values: [1]}, {name: early, values: [2, 3]}, {name: rest}]";

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("partcut");
    private final String prefix = SharedServices.unique("pc") + ":";

    private List<String> args() {
        return TailedTable.args(PartedTables.settings(services, table, prefix, PARTS));
    }

    private CliRun ok(String... command) {
        CliRun run = CliRun.of(args(), command);
        assertThat(run.exitCode())
                .as(String.join(" ", command) + "\n" + run.out() + run.err())
                .isZero();
        return run;
    }

    @Test
    void partsAreCutOverRolledBackAndClosedOneAtATime() throws Exception {
        try (TailedTable t = new TailedTable(
                services,
                table,
                PartedTables.settings(services, table, prefix, PARTS),
                pg -> PartedTables.make(pg, table))) {
            RoutingTable routes = new RoutingTable(t.redis, t.config.redis().keyspace());
            ok("cutover", "--prepare");
            ok("copy", "--no-progress");
            ok("verify", "--all");

            // one part verified alone: a difference in another part's rows is not its own
            t.dynamo.updateItem(b -> b.tableName(table)
                    .key(key(3, 4))
                    .updateExpression("SET #k = :v")
                    .expressionAttributeNames(Map.of("#k", "kind"))
                    .expressionAttributeValues(Map.of(":v", AttributeValue.fromS("corrupted"))));
            ok("verify", "--all", "--part", "rest");
            CliRun early = CliRun.of(args(), "verify", "--all", "--part", "early", "--json");
            assertThat(early.exitCode()).as(early.out() + early.err()).isEqualTo(1);
            assertThat(early.out()).contains("[3, 4]");
            ok("verify", "--all", "--part", "early", "--repair");

            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> CliRun.of(args(), "cutover", "--dry-run", "--part", "pilot")
                                    .exitCode()
                            == 0);
            CliRun cut = ok("cutover", "--part", "pilot");
            assertThat(cut.out()).contains("scope '" + table + "/pilot'");
            assertThat(routeOf(routes, "pilot")).isEqualTo(RouteStatus.TARGET);
            assertThat(routeOf(routes, "early")).isEqualTo(RouteStatus.SOURCE);
            assertThat(routeOf(routes, "rest")).isEqualTo(RouteStatus.SOURCE);

            // Postgres refuses the pilot's rows and takes every other tenant's, which the tail carries over
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement()) {
                assertThatThrownBy(() -> st.executeUpdate("UPDATE " + table + " SET kind = 'pg' WHERE tenant_id = 1"))
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState())
                                .isEqualTo(FenceTrigger.REFUSED));
                assertThat(st.executeUpdate(
                                "UPDATE " + table + " SET kind = 'pg' WHERE tenant_id IN (2, 7) AND id = 5"))
                        .isEqualTo(2);
            }
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> "pg".equals(kindInDynamo(t, 7, 5)));

            // the application writes the pilot's rows to DynamoDB; the reverse stream carries them to Postgres
            writePilot(t, 31, "app");
            deletePilot(t, 2);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> "app".equals(kindInPostgres(1, 31)));
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> kindInPostgres(1, 2) == null);
            ok("verify", "--all");

            // another part moves beside it, and back
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> CliRun.of(args(), "cutover", "--dry-run", "--part", "early")
                                    .exitCode()
                            == 0);
            ok("cutover", "--part", "early");
            assertThat(routeOf(routes, "early")).isEqualTo(RouteStatus.TARGET);
            ok("cutover", "--rollback", "--part", "early");
            assertThat(routeOf(routes, "early")).isEqualTo(RouteStatus.SOURCE);
            assertThat(routeOf(routes, "pilot")).isEqualTo(RouteStatus.TARGET);

            // the pilot back to Postgres with what was written to DynamoDB, then over again and its window closed
            writePilot(t, 32, "before-rollback");
            ok("cutover", "--rollback", "--part", "pilot");
            assertThat(kindInPostgres(1, 32)).isEqualTo("before-rollback");
            assertThat(routeOf(routes, "pilot")).isEqualTo(RouteStatus.SOURCE);
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> CliRun.of(args(), "cutover", "--dry-run", "--part", "pilot")
                                    .exitCode()
                            == 0);
            ok("cutover", "--part", "pilot");
            ok("cutover", "--close-window", "--yes", "--part", "pilot");
            assertThat(routeOf(routes, "pilot")).isEqualTo(RouteStatus.FINAL);
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement()) {
                assertThatThrownBy(() -> st.executeUpdate("DELETE FROM " + table + " WHERE tenant_id = 1 AND id = 1"))
                        .as("a plain write to a closed part's rows")
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState())
                                .isEqualTo(FenceTrigger.REFUSED));
                assertThat(st.executeUpdate("UPDATE " + table + " SET kind = 'final' WHERE tenant_id = 2 AND id = 6"))
                        .isEqualTo(1);
            }

            // Postgres keeps the pilot no more: its rows there differ from DynamoDB, and verification passes them by
            writePilot(t, 33, "dynamo-only");
            assertThat(kindInPostgres(1, 33)).isNull();
            ok("verify", "--all");
            CliRun closed = CliRun.of(args(), "verify", "--all", "--part", "pilot");
            assertThat(closed.exitCode()).as(closed.out() + closed.err()).isEqualTo(2);
            assertThat(closed.err()).contains("--part pilot: its window is closed");
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> CliRun.of(args(), "cutover", "--dry-run", "--part", "rest")
                                    .exitCode()
                            == 0);
            ok("cutover", "--part", "rest");
            assertThat(routeOf(routes, "rest")).isEqualTo(RouteStatus.TARGET);
            assertThat(routeOf(routes, "early")).isEqualTo(RouteStatus.SOURCE);
            ok("cutover", "--rollback", "--part", "rest");

            CliRun status = ok("status", "--json");
            JsonSchemas.assertValid("status", status.out());
            assertThat(status.out()).contains(table + "/pilot");
        }
    }

    private RouteStatus routeOf(RoutingTable routes, String part) {
        return routes.get(PartMap.scope(table, part)).orElseThrow().status();
    }

    /** Puts tenant 1's row {@code id} in DynamoDB through the guard, under the pilot's scope. */
    private void writePilot(TailedTable t, long id, String kind) throws Exception {
        RowCodec codec = t.source.codec(t.config.target());
        Object[] values = {"1", Long.toString(id), kind, "2024-10-20 04:0" + (id % 10) + ":00+00"};
        Map<String, AttributeValue> item =
                codec.encode(new SourceRow(t.source.key().text(List.of("1", Long.toString(id))), values));
        try (WriteGuard guard = new WriteGuard(t.redis, t.dynamo, t.guard())) {
            Target where = guard.write(PartMap.scope(table, "pilot"), permit -> {
                permit.writeDynamo(
                        t.dynamo,
                        TransactWriteItem.builder()
                                .put(Put.builder().tableName(table).item(item).build())
                                .build());
                return permit.target();
            });
            assertThat(where).isEqualTo(Target.DYNAMODB);
        }
    }

    private void deletePilot(TailedTable t, long id) throws Exception {
        try (WriteGuard guard = new WriteGuard(t.redis, t.dynamo, t.guard())) {
            guard.write(PartMap.scope(table, "pilot"), permit -> {
                permit.writeDynamo(
                        t.dynamo,
                        TransactWriteItem.builder()
                                .delete(Delete.builder()
                                        .tableName(table)
                                        .key(key(1, id))
                                        .build())
                                .build());
                return null;
            });
        }
    }

    private static Map<String, AttributeValue> key(int tenant, long id) {
        return Map.of(
                "tenant_id",
                AttributeValue.fromN(Integer.toString(tenant)),
                "id",
                AttributeValue.fromN(Long.toString(id)));
    }

    private String kindInDynamo(TailedTable t, int tenant, long id) {
        var item = t.dynamo.getItem(b -> b.tableName(table).key(key(tenant, id)).consistentRead(true));
        return item.hasItem() ? item.item().get("kind").s() : null;
    }

    private String kindInPostgres(int tenant, long id) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement();
                ResultSet rs = st.executeQuery(
                        "SELECT kind FROM " + table + " WHERE tenant_id = " + tenant + " AND id = " + id)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }
}
