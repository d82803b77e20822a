package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.testkit.SharedServices;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.Select;

/**
 * Rows DynamoDB cannot hold do not stall the copy: with a quarter of the rows holding a json number outside
 * DynamoDB's range ({@code target.json: map}), the copy writes every other row, lists each refused one with its
 * reason (status, status --json), and ends with exit 21 and a summary; verify counts them as known. With the way out
 * set ({@code target.jsonAsString=data}) {@code verify --retry-refused} writes exactly those rows, and {@code verify
 * --all} is MATCH. Before, each slot failed on its first bad row and retried from it forever, writing nothing after.
 * Alike with either coordinator: with the Postgres one no Redis answers, and the refused rows and the verifications
 * are kept in its tables.
 */
class CopyRefusedRowsIT {
    private static final int ROWS = 2_000;

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("refcopy");
    private final String prefix = SharedServices.unique("rc") + ":";
    private final String schema = SharedServices.unique("rc_coord");
    private String coordinator = "redis";

    private List<String> flags() {
        List<String> flags = new ArrayList<>(CliRun.base(services, table, prefix));
        flags.addAll(List.of("--set", "target.json=map"));
        if (coordinator.equals("postgres")) flags.addAll(CliRun.coordinatedByPostgres(schema));
        return flags;
    }

    @AfterEach
    void drop() throws Exception {
        CutoverTables.drop(services, table);
        try (var c = services.postgres();
                var st = c.createStatement()) {
            st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // the copy it replaces never ended: this bounds the failure
    void aQuarterOfTheRowsRefusedTheCopyWritesEveryOtherRowAndListsThem(String coordinator) throws Exception {
        this.coordinator = coordinator;
        long bad = OutOfRangeRows.create(services, table, ROWS);
        assertThat(bad).isBetween(ROWS / 8L, ROWS / 2L);

        CliRun copy = CliRun.of(flags(), "copy", "--create-table", "--no-concurrent-writers", "--no-progress");

        assertThat(copy.exitCode()).as(copy.out() + copy.err()).isEqualTo(21);
        assertThat(copy.out()).contains("run FINISHED: " + (ROWS - bad) + " rows copied in all"); // not the refused
        assertThat(copy.err())
                .contains("copied except " + bad + " refused rows")
                .contains("column data")
                .contains("`rebalance verify --retry-refused`");
        try (DynamoDbClient dynamo = services.dynamoClient()) {
            int items = dynamo.scanPaginator(b -> b.tableName(table).select(Select.COUNT)).stream()
                    .mapToInt(r -> r.count())
                    .sum();
            assertThat(items).as("every storable row written").isEqualTo(ROWS - bad);
        }
        assertThat(CliRun.of(flags(), "status").out())
                .contains("status FINISHED (copied except " + bad + " refused rows)");
        JsonNode status = new ObjectMapper()
                .readTree(CliRun.of(flags(), "status", "--json").out());
        assertThat(status.path("status").asText()).isEqualTo("FINISHED");
        assertThat(status.path("refused").path("count").asLong()).isEqualTo(bad);
        JsonNode first = status.path("refused").path("rows").get(0);
        assertThat(first.path("column").asText()).isEqualTo("data");
        assertThat(first.path("by").asText()).isEqualTo("copy");
        assertThat(first.path("slot").asText()).startsWith("20241020.");
        assertThat(OutOfRangeRows.isRefused(services, table, first.path("id").asText()))
                .isTrue();

        CliRun verify = CliRun.of(flags(), "verify", "--all");
        assertThat(verify.exitCode()).as(verify.out()).isEqualTo(1);
        assertThat(verify.out()).contains(bad + " of the differences are known refused rows");

        // the way out, without code: the column stored as its json text, then exactly the refused rows again
        List<String> wayOut = new ArrayList<>(flags());
        wayOut.addAll(List.of("--set", "target.jsonAsString=data"));
        CliRun retried = CliRun.of(wayOut, "verify", "--retry-refused");
        assertThat(retried.exitCode()).as(retried.out() + retried.err()).isZero();
        assertThat(retried.out()).contains("retried " + bad + " refused rows: " + bad + " written, 0 still refused");
        assertThat(new ObjectMapper()
                        .readTree(CliRun.of(wayOut, "status", "--json").out())
                        .path("refused")
                        .path("count")
                        .asLong())
                .isZero();
        String after = CliRun.of(wayOut, "status").out();
        assertThat(after)
                .as("nothing says the retried rows are still refused")
                .contains("status FINISHED")
                .doesNotContain("copied except")
                .doesNotContain("DynamoDB cannot hold")
                .contains("retried-refused rows=" + bad + " written=" + bad + " still-refused=0");
        // one type per attribute: the items copied as maps before the setting differ, and the repair rewrites them
        CliRun mixed = CliRun.of(wayOut, "verify", "--all");
        assertThat(mixed.exitCode()).as(mixed.out()).isEqualTo(1);
        assertThat(mixed.out())
                .contains("DIFFERENT data (expected J")
                .contains("found ?M where target.jsonAsString stores text)")
                .containsPattern("12 slots: 0 MATCH, 12 MISMATCH, 0 ERROR; \\d+ differences")
                .contains("rebalance verify --repair");
        CliRun repaired = CliRun.of(wayOut, "verify", "--all", "--repair");
        assertThat(repaired.exitCode()).as(repaired.out() + repaired.err()).isZero();
        assertThat(CliRun.of(wayOut, "verify", "--all").exitCode()).isZero();
        JsonNode verified = new ObjectMapper()
                .readTree(CliRun.of(wayOut, "status", "--json").out())
                .path("verification");
        assertThat(verified.path("slotsVerified").asInt())
                .as("the results kept")
                .isEqualTo(12);
        assertThat(verified.path("counts").path("MATCH").asInt()).isEqualTo(12);
        try (DynamoDbClient dynamo = services.dynamoClient()) {
            long maps = dynamo.scanPaginator(b -> b.tableName(table)).items().stream()
                    .map(item -> item.get("data"))
                    .filter(data -> data != null && data.nul() == null && data.s() == null)
                    .count();
            assertThat(maps).as("every data attribute is text (or NULL) now").isZero();
        }
    }
}
