package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.copy.CopyStatus;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Ulid;
import io.rebalance.mover.RunState;
import io.rebalance.mover.redis.RedisRunState;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code status} tells the truth: the rows of a table never ANALYZEd are estimated (it said {@code ~0} and gave no
 * ETA); with no copy process left, the last rate and ETA the keeper published are not shown as now's (after Ctrl-C it
 * still said {@code 112 rows/s, ETA 26s}); events carry their time, not raw epoch milliseconds.
 */
class StatusTruthIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("truth");
    private final String prefix = SharedServices.unique("truth") + ":";

    private CliRun run(String... words) {
        List<String> args = new ArrayList<>(List.of(words));
        args.addAll(CliRun.base(services, table, prefix));
        return CliRun.of(args.toArray(String[]::new));
    }

    @Test
    void statusSaysWhatIsTrueNow() throws Exception {
        try (Connection c = services.postgres()) {
            try (Statement st = c.createStatement()) {
                // never ANALYZEd, and autovacuum kept away so it stays so: reltuples = -1
                st.execute("CREATE TABLE " + table + " (id text PRIMARY KEY, body text) WITH"
                        + " (autovacuum_enabled = false)");
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " VALUES (?, ?)")) {
                for (int i = 0; i < 4000; i++) {
                    ps.setString(
                            1, Ulid.of(Instant.parse("2024-10-20T00:00:00Z").toEpochMilli() + i * 1_000L, i, i));
                    ps.setString(2, "a message body of some length, number " + i);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
        }
        CliRun copy = run("copy", "--create-table", "--no-concurrent-writers", "--no-progress");
        assertThat(copy.exitCode()).as(copy.err()).isZero();
        JsonNode rows = JSON.readTree(run("status", "--json").out()).path("rows");
        assertThat(rows.path("copied").asLong()).isEqualTo(4000);
        assertThat(rows.path("estimatedTotal").asLong())
                .as("estimated from the table's size")
                .isBetween(2000L, 8000L);

        // what a copy stopped by Ctrl-C leaves: the keeper's last rate and ETA, and no process
        try (var redis = services.redis()) {
            var keys = new Keyspace(prefix).run();
            RunState state = new RedisRunState(redis, keys, Retrier.standard());
            state.writeProgress(new CopyStatus(
                    true, "IN_PROGRESS", 2000, 112, 26, 2, 1, 1, "", "gone", System.currentTimeMillis()));
            state.event("resume slot=20241020.00 last_id=x rows_before=1 by=w");
        }
        CliRun status = run("status", "--json");
        JsonSchemas.assertValid("status", status.out());
        JsonNode doc = JSON.readTree(status.out());
        assertThat(doc.path("rows").path("perSecond").asLong()).isZero();
        assertThat(doc.path("rows").path("etaSeconds").asLong()).isEqualTo(-1);
        assertThat(doc.path("events").get(0).asText())
                .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z resume slot=20241020\\.00 .*");
        String text = run("status").out();
        assertThat(text).contains("0 rows/s").doesNotContain("ETA").doesNotContainPattern("\\n  1\\d{12} ");
    }
}
