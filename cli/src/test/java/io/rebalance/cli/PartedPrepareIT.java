package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.protocol.fence.FenceTrigger;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.part.PartMap;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code cutover --prepare} of a table moved part by part (a composite key, tenant first): every part gets its fences
 * and a route (SOURCE), the table its part triggers; a command that must name a part and does not, names one the
 * table does not have, or names one on a table without parts, is refused (exit 39); parts changed while one is away
 * from SOURCE are refused (exit 38) and the parts prepared stay; parts without a catch-all or with a name twice are
 * refused by the configuration (exit 10); a copy is refused once any part left SOURCE (exit 36, naming the part).
 * Nothing is changed by any refusal.
 */
class PartedPrepareIT {
    private static final String PARTS =
            "[{name: pilot, values: [1]}, {name: early, hashFrom: 0, hashTo: 30}," + " {name: rest}]";
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("parted");
    private final String prefix = SharedServices.unique("pp") + ":";

    private void make(Connection pg) throws Exception {
        try (Statement st = pg.createStatement()) {
            st.execute("CREATE TABLE " + table + " (tenant_id bigint NOT NULL, id bigint NOT NULL, kind text NOT NULL,"
                    + " created_at timestamptz NOT NULL, PRIMARY KEY (tenant_id, id))");
            st.execute("INSERT INTO " + table + " SELECT t, i, 'k', timestamptz '2024-10-20 04:00Z' + i * interval"
                    + " '1 minute' FROM generate_series(1, 20) t, generate_series(1, 30) i");
        }
    }

    private Map<String, String> settings(String parts) {
        Map<String, String> s = TailedTable.settings(services, table, prefix);
        s.put("slots.timeFrom", "column");
        s.put("slots.timeColumn", "created_at");
        if (parts != null) s.put("cutover.parts", parts);
        return s;
    }

    private List<String> flags(String parts) {
        return TailedTable.args(settings(parts));
    }

    @Test
    void everyPartIsPreparedAndEveryWrongPartRefused() throws Exception {
        try (TailedTable t = new TailedTable(services, table, settings(PARTS), this::make)) {
            PartMap parts = t.config.cutover().partMap();
            CliRun prepared = CliRun.of(flags(PARTS), "cutover", "--prepare");
            assertThat(prepared.exitCode()).as(prepared.out() + prepared.err()).isZero();
            assertThat(prepared.out())
                    .contains("prepared pilot: route: SOURCE")
                    .contains("prepared early: route: SOURCE")
                    .contains("prepared rest: route: SOURCE")
                    .contains("enabled while any part's fence is closed");
            RoutingTable routes = new RoutingTable(t.redis, t.config.redis().keyspace());
            for (String scope : parts.scopes(table)) {
                assertThat(routes.get(scope).orElseThrow().status()).as(scope).isEqualTo(RouteStatus.SOURCE);
            }
            assertThat(routes.get(table)).as("no route for the whole table").isEmpty();
            PostgresFence fence = new PostgresFence(t.config.cutover().pgFence());
            CliRun status = CliRun.of(flags(PARTS), "status", "--json");
            assertThat(status.exitCode()).as(status.err()).isZero();
            JsonSchemas.assertValid("status", status.out());
            var tree = new com.fasterxml.jackson.databind.ObjectMapper().readTree(status.out());
            assertThat(tree.findValuesAsText("scope")).contains(table + "/pilot", table + "/early", table + "/rest");
            assertThat(tree.findPath("fenceTrigger").path("state").asText()).isEqualTo("ready");
            CliRun again = CliRun.of(flags(PARTS), "cutover", "--prepare", "--json");
            assertThat(again.exitCode()).as(again.out() + again.err()).isZero();
            JsonSchemas.assertValid("cutover", again.out());
            var json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(again.out());
            assertThat(json.path("prepared").toString()).contains("pilot: route: SOURCE", "rest: route: SOURCE");
            assertThat(json.path("parts").path("early").toString()).contains("route: SOURCE");

            CliRun noPart = CliRun.of(flags(PARTS), "cutover", "--dry-run");
            assertThat(noPart.exitCode()).as(noPart.out() + noPart.err()).isEqualTo(39);
            assertThat(noPart.err())
                    .contains(table + " moves part by part: name the part with --part")
                    .contains("pilot (SOURCE), early (SOURCE), rest (SOURCE)");
            CliRun unknown = CliRun.of(flags(PARTS), "cutover", "--rollback", "--part", "pilto");
            assertThat(unknown.exitCode()).as(unknown.out() + unknown.err()).isEqualTo(39);
            assertThat(unknown.err()).contains("--part pilto").contains("has no such part");

            // a part away from SOURCE (as its cutover leaves it): the product's triggers fence its rows only
            try (Connection pg = services.postgres()) {
                fence.set(pg, PartMap.scope(table, "pilot"), FenceWriter.NONE, 1, Duration.ofSeconds(5));
                fence.record(pg, PartMap.scope(table, "pilot"), RouteStatus.FINAL, 2, 1, Duration.ofSeconds(5));
                try (Statement st = pg.createStatement()) {
                    assertThatThrownBy(() -> st.executeUpdate("DELETE FROM " + table + " WHERE tenant_id = 1"))
                            .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState())
                                    .isEqualTo(FenceTrigger.REFUSED));
                    assertThat(st.executeUpdate("UPDATE " + table + " SET kind = 'x' WHERE tenant_id = 2"))
                            .isEqualTo(30);
                }
            }
            var inPlace = new com.fasterxml.jackson.databind.ObjectMapper()
                    .readTree(CliRun.of(flags(PARTS), "status", "--json").out());
            assertThat(inPlace.findPath("fenceTrigger").path("state").asText()).isEqualTo("in place");
            assertThat(inPlace.findPath("fenceTrigger").path("trigger").asText())
                    .endsWith("_part");
            CliRun copy = CliRun.of(flags(PARTS), "copy", "--no-progress");
            assertThat(copy.exitCode())
                    .as("one part away from SOURCE: nothing writes Postgres rows into DynamoDB\n" + copy.err())
                    .isEqualTo(36);
            assertThat(copy.err()).contains(table + "/pilot");
            String changedParts = "[{name: pilot, values: [1, 2]}, {name: rest}]";
            CliRun changed = CliRun.of(flags(changedParts), "cutover", "--prepare");
            assertThat(changed.exitCode()).as(changed.out() + changed.err()).isEqualTo(38);
            assertThat(changed.err())
                    .contains("were prepared as " + parts.written())
                    .contains(table + "/pilot FINAL")
                    .contains("Nothing was changed");
            try (Connection pg = services.postgres()) {
                assertThat(fence.trigger()
                                .parts()
                                .recorded(pg, table)
                                .orElseThrow()
                                .parts())
                        .isEqualTo(parts.written());
                assertThat(fenceRows(pg, t.config.cutover().pgFence())).hasSize(3);
            }

            CliRun wholeTable = CliRun.of(flags(null), "cutover", "--dry-run", "--part", "pilot");
            assertThat(wholeTable.exitCode()).as(wholeTable.err()).isEqualTo(39);
            assertThat(wholeTable.err()).contains("has no parts (cutover.parts is empty)");

            CliRun noRest = CliRun.of(flags("[{name: pilot, values: [1]}]"), "cutover", "--dry-run");
            assertThat(noRest.exitCode()).isEqualTo(10);
            assertThat(noRest.err()).contains("add {name: rest} at the end");
            CliRun twice = CliRun.of(flags("[{name: a, values: [1]}, {name: a}]"), "cutover", "--prepare");
            assertThat(twice.exitCode()).isEqualTo(10);
            assertThat(twice.err()).contains("cutover.parts[1].name='a'");
        }
    }

    private static List<String> fenceRows(Connection pg, String fenceTable) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement st = pg.createStatement();
                ResultSet rs = st.executeQuery("SELECT scope FROM " + fenceTable + " ORDER BY scope")) {
            while (rs.next()) out.add(rs.getString(1));
        }
        return out;
    }
}
