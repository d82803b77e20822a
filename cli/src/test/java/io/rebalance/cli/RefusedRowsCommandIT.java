package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A row the tail could not store, as the commands show it: {@code status} and {@code status --json} list it with its
 * reason, {@code verify} reports it as a known difference, the cutover refuses while it is listed, and
 * {@code verify --retry-refused} writes it once the row is fixed (and says when it still cannot be stored).
 */
class RefusedRowsCommandIT {
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("refcli");
    private final String prefix = SharedServices.unique("rf") + ":";

    @Test
    void aRefusedRowIsShownKnownBlocksTheCutoverAndIsRetried() throws Exception {
        Map<String, String> settings = TailedTable.settings(services, table, prefix);
        settings.put("target.json", "map");
        List<String> flags = TailedTable.args(settings);
        try (TailedTable t = new TailedTable(services, table, settings, 400, 21)) {
            assertThat(CliRun.of(flags, "copy", "--no-progress").exitCode()).isZero();
            String id = oneId();
            sql("UPDATE " + table + " SET data = '{\"x\": 1.5e300}' WHERE id = '" + id + "'");
            RefusedRows refused = new RefusedRows(t.redis, new Keyspace(prefix));
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> refused.count() == 1);

            CliRun status = CliRun.of(flags, "status");
            assertThat(status.out())
                    .contains("refused    1 row DynamoDB cannot hold")
                    .contains("id " + id);
            JsonNode json = new ObjectMapper()
                    .readTree(CliRun.of(flags, "status", "--json").out());
            assertThat(json.path("refused").path("count").asInt()).isEqualTo(1);
            assertThat(json.path("refused").path("rows").get(0).path("id").asText())
                    .isEqualTo(id);
            assertThat(json.path("refused").path("rows").get(0).path("column").asText())
                    .isEqualTo("data");

            CliRun verify = CliRun.of(flags, "verify", "--all");
            assertThat(verify.exitCode()).as(verify.out()).isEqualTo(1);
            assertThat(verify.out())
                    .contains("[known: refused, column data:")
                    .contains("1 of the differences are known refused rows");

            CliRun dry = CliRun.of(flags, "cutover", "--dry-run");
            assertThat(dry.exitCode()).as(dry.out()).isEqualTo(31);
            assertThat(dry.out()).contains("FAILED refused rows").contains("verify --retry-refused");

            t.stopTail();
            CliRun still = CliRun.of(flags, "verify", "--retry-refused");
            assertThat(still.exitCode()).as(still.out() + still.err()).isEqualTo(1);
            assertThat(still.out()).contains("retried 1 refused row: 0 written, 1 still refused");

            CliRun asJson = CliRun.of(flags, "verify", "--retry-refused", "--all", "--json");
            assertThat(asJson.err()).contains("retried 1 refused row: 0 written, 1 still refused");
            assertThat(asJson.out().trim())
                    .as("stdout is the one JSON document")
                    .startsWith("{");
            assertThat(new ObjectMapper().readTree(asJson.out()).has("slots")).isTrue();

            sql("UPDATE " + table + " SET data = '{\"x\": 1.5}' WHERE id = '" + id + "'");
            CliRun fixed = CliRun.of(flags, "verify", "--retry-refused", "--all");
            assertThat(fixed.exitCode()).as(fixed.out() + fixed.err()).isZero();
            assertThat(fixed.out()).contains("retried 1 refused row: 1 written, 0 still refused");
            assertThat(refused.count()).isZero();
        }
    }

    private String oneId() throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement();
                ResultSet rs = st.executeQuery("SELECT id FROM " + table + " ORDER BY id LIMIT 1 OFFSET 7")) {
            rs.next();
            return rs.getString(1);
        }
    }

    private void sql(String statement) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            st.execute(statement);
        }
    }
}
