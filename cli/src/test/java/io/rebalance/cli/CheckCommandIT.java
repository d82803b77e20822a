package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.codec.ItemSize;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * {@code rebalance check} tells before a copy what would block it, computed in Postgres, writing nothing: the rows
 * DynamoDB would refuse (by slot, with ids, with the way out), rows in no slot, what the tail needs of Postgres; and
 * its write-unit estimate is what the copy then consumes, by DynamoDB's item-size rules applied to the items written.
 */
class CheckCommandIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("checked");
    private final String prefix = SharedServices.unique("ck") + ":";
    private final List<String> cleanup = new ArrayList<>();

    private List<String> flags(String... sets) {
        List<String> flags = new ArrayList<>(CliRun.base(services, table, prefix));
        flags.addAll(List.of("--set", "target.json=map"));
        for (String s : sets) flags.addAll(List.of("--set", s));
        return flags;
    }

    @AfterEach
    void drop() throws Exception {
        CutoverTables.drop(services, table);
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            for (String sql : cleanup) st.execute(sql);
        }
    }

    @Test
    void namesTheRowsDynamoDbWouldRefuseByslotWithTheWayOutAndWritesNothing() throws Exception {
        long bad = OutOfRangeRows.create(services, table, 2_000);

        CliRun text = CliRun.of(flags(), "check");
        assertThat(text.exitCode()).as(text.out() + text.err()).isEqualTo(CheckCommand.BLOCKED);
        assertThat(text.out())
                .contains(String.format("rows     2,000: %,d to write, %,d refused", 2_000 - bad, bad))
                .contains("json-number")
                .contains("in column data hold a json number outside DynamoDB's range")
                .contains("way out: store the document as its text: target.jsonAsString: [data]")
                .contains("BLOCKED: 1 finding would block the migration");

        String parallel =
                CliRun.of(flags(), "check", "--json", "--parallel", "3").out();
        JsonNode report = JSON.readTree(
                CliRun.of(flags(), "check", "--json", "--parallel", "1").out());
        assertThat(JSON.readTree(parallel))
                .as("three sessions report what one does")
                .isEqualTo(report);
        assertThat(report.path("blocking").asBoolean()).isTrue();
        assertThat(report.path("refusedRows").asLong()).isEqualTo(bad);
        assertThat(report.path("storedRows").asLong()).isEqualTo(2_000 - bad);
        assertThat(report.path("refused").get(0).path("reason").asText()).isEqualTo("json-number");
        assertThat(report.path("refused").get(0).path("column").asText()).isEqualTo("data");
        long bySlot = 0;
        for (JsonNode slot : report.path("bySlot")) {
            for (JsonNode r : slot.path("refused")) {
                bySlot += r.path("rows").asLong();
                assertThat(OutOfRangeRows.isRefused(
                                services, table, r.path("firstId").asText()))
                        .isTrue();
                assertThat(OutOfRangeRows.isRefused(
                                services, table, r.path("lastId").asText()))
                        .isTrue();
            }
        }
        assertThat(bySlot).isEqualTo(bad);
        assertThat(report.path("slots").path("count").asLong()).isEqualTo(12);

        try (DynamoDbClient dynamo = services.dynamoClient();
                UnifiedJedis redis = services.redis()) {
            assertThat(dynamo.listTables().tableNames()).doesNotContain(table);
            assertThat(redis.keys(prefix + "*")).isEmpty();
        }

        CliRun wayOut = CliRun.of(flags("target.jsonAsString=data"), "check", "--json");
        assertThat(wayOut.exitCode()).as(wayOut.out() + wayOut.err()).isZero();
        assertThat(JSON.readTree(wayOut.out()).path("refusedRows").asLong()).isZero();
    }

    @Test
    void theDemoTableBlocksNothingAndItsWriteUnitsAreWhatTheCopyConsumes() throws Exception {
        try (Connection pg = services.postgres()) {
            RoomEventsGenerator.create(pg, table, 3_000, Instant.parse("2024-10-20T12:00:00Z"), 24, 9);
        }
        CliRun check = CliRun.of(flags(), "check", "--json", "--rate", "1000");
        assertThat(check.exitCode()).as(check.out() + check.err()).isZero();
        JsonSchemas.assertValid("check", check.out());
        JsonNode report = JSON.readTree(check.out());
        assertThat(report.path("blocking").asBoolean()).isFalse();
        assertThat(finding(report.path("findings"), "slot ranges").path("level").asText())
                .isEqualTo("OK"); // the primary key serves the ranges
        assertThat(finding(report.path("findings"), "fence trigger")
                        .path("detail")
                        .asText())
                .contains("`cutover --prepare` can install");
        assertThat(report.path("duration").path("atRate").path("seconds").asDouble())
                .isEqualTo(3.0);
        long estimate = report.path("writeUnits").path("total").asLong();
        long estimatedBytes = report.path("itemBytes").path("total").asLong();

        CliRun copy = CliRun.of(flags(), "copy", "--create-table", "--no-concurrent-writers", "--no-progress");
        assertThat(copy.exitCode()).as(copy.out() + copy.err()).isZero();
        long units = 0;
        long bytes = 0;
        try (DynamoDbClient dynamo = services.dynamoClient()) {
            for (var page : dynamo.scanPaginator(b -> b.tableName(table))) {
                for (Map<String, AttributeValue> item : page.items()) {
                    long size = ItemSize.of(item);
                    bytes += size;
                    units += ItemSize.tableUnits(size) + ItemSize.indexUnits(size);
                }
            }
        }
        assertThat(units).isPositive();
        assertThat((double) estimate / units)
                .as("estimate %d, consumed %d", estimate, units)
                .isBetween(0.8, 1.2);
        assertThat((double) estimatedBytes / bytes)
                .as("bytes estimated %d, written %d", estimatedBytes, bytes)
                .isBetween(0.99, 1.01);
    }

    /** Rows whose time column is NULL or infinite are the slot notime's: counted and stored, none refused. */
    /**
     * Keys that tell no time (random uuids, text that is no ULID, an integer sequence) under the default slots: the
     * check surveys the key ranges {@code slots.timeFrom: none} plans and recommends them in a blocking finding, keeping
     * nothing; the copy refuses naming the same way out.
     */
    @ParameterizedTest
    @ValueSource(strings = {"uuid DEFAULT gen_random_uuid()", "text DEFAULT md5(random()::text)", "bigserial"})
    void keysThatTellNoTimeGetKeyRangesRecommended(String keyType) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            st.execute("CREATE TABLE " + table + " (id " + keyType + " PRIMARY KEY, n int)");
            st.execute("INSERT INTO " + table + " (n) SELECT i FROM generate_series(1, 2500) i");
            st.execute("ANALYZE " + table);
        }
        CliRun check = CliRun.of(flags("slots.rowsPerSlot=1000"), "check", "--json");
        assertThat(check.exitCode()).as(check.out() + check.err()).isEqualTo(1);
        JsonNode report = JSON.readTree(check.out());
        JsonNode slots = finding(report.path("findings"), "slots");
        assertThat(slots.path("level").asText()).isEqualTo("BLOCKING");
        assertThat(slots.path("detail").asText()).contains("slots.timeFrom: none", "key ranges");
        assertThat(finding(report.path("findings"), "key ranges").path("detail").asText())
                .contains("3 ranges of the primary key (r000000 .. r000002), planned for 1,000 rows each, hold 500 to"
                        + " 1,000 rows");
        assertThat(report.path("rows").asLong()).isEqualTo(2500);
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement();
                ResultSet rs = st.executeQuery("SELECT to_regclass('rebalance_ranges_" + table + "')")) {
            rs.next();
            assertThat(rs.getString(1)).as("key ranges kept by a check").isNull();
        }
        CliRun copy = CliRun.of(flags(), "copy", "--create-table", "--no-concurrent-writers");
        assertThat(copy.exitCode()).as(copy.err()).isEqualTo(14);
        assertThat(copy.err()).contains("slots.timeFrom: none");
    }

    @Test
    void rowsWhoseTimeColumnIsNullOrInfiniteAreTheNoTimeSlots() throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            RoomEventsGenerator.create(pg, table, 500, Instant.parse("2024-10-20T12:00:00Z"), 5, 3);
            st.execute("ALTER TABLE " + table + " ALTER COLUMN created_at DROP NOT NULL");
            st.execute("UPDATE " + table + " SET created_at = NULL WHERE id IN (SELECT id FROM " + table
                    + " ORDER BY id LIMIT 3)");
            st.execute("UPDATE " + table + " SET created_at = 'infinity' WHERE id IN (SELECT id FROM " + table
                    + " ORDER BY id DESC LIMIT 2)");
        }
        CliRun check = CliRun.of(flags("slots.timeFrom=column", "slots.timeColumn=created_at"), "check", "--json");
        JsonNode report = JSON.readTree(check.out());
        assertThat(report.path("refused").size()).as(check.out()).isZero();
        assertThat(report.path("rows").asLong()).isEqualTo(500);
        assertThat(report.path("storedRows").asLong()).isEqualTo(500);
        assertThat(check.out()).containsPattern("\"slot\"\\s*:\\s*\"notime\"");
        // slots are ranges of created_at, which no index starts with: every slot's query reads the table
        JsonNode ranges = finding(report.path("findings"), "slot ranges");
        assertThat(ranges.path("level").asText()).isEqualTo("WARNING");
        assertThat(ranges.path("detail").asText()).contains("CREATE INDEX CONCURRENTLY ON", "(\"created_at\")");
    }

    @Test
    void namesWhatTheTailNeedsOfPostgres() throws Exception {
        String role = table + "_app";
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            // partitioned by id ranges, so the key alone is unique; a publication that names the partitions' rows
            st.execute("CREATE TABLE " + table + " (id text PRIMARY KEY, v int) PARTITION BY RANGE (id)");
            st.execute("CREATE TABLE " + table + "_p1 PARTITION OF " + table + " FOR VALUES FROM ('01J') TO ('01K')");
            st.execute("INSERT INTO " + table + " VALUES ('01JAKQ0BMD006G00000000000D', 1)");
            st.execute("CREATE PUBLICATION " + table + " FOR TABLE " + table);
            st.execute("CREATE ROLE " + role + " LOGIN");
            st.execute("GRANT SELECT ON " + table + " TO " + role);
            cleanup.add("DROP TABLE IF EXISTS " + table + "_p1");
            cleanup.add("DROP OWNED BY " + role);
            cleanup.add("DROP ROLE " + role);
        }
        CliRun check = CliRun.of(flags("tail.publication=" + table, "source.user=" + role), "check", "--json");
        assertThat(check.exitCode()).as(check.out() + check.err()).isEqualTo(CheckCommand.BLOCKED);
        JsonNode findings = JSON.readTree(check.out()).path("findings");
        assertThat(finding(findings, "replication right").path("level").asText())
                .isEqualTo("BLOCKING");
        assertThat(finding(findings, "replication right").path("detail").asText())
                .contains("ALTER ROLE \"" + role + "\" REPLICATION")
                .contains("(exit 24)");
        assertThat(finding(findings, "publication").path("level").asText()).isEqualTo("BLOCKING");
        assertThat(finding(findings, "publication").path("detail").asText())
                .contains("SET (publish_via_partition_root = true)");
        assertThat(finding(findings, "fence trigger").path("level").asText()).isEqualTo("BLOCKING");
        assertThat(finding(findings, "fence trigger").path("detail").asText())
                .contains("does not own " + table)
                .contains(" TO " + role)
                .contains("`cutover --prepare` refuses");

        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            st.execute("ALTER PUBLICATION " + table + " SET (publish_via_partition_root = true)");
        }
        JsonNode after = JSON.readTree(CliRun.of(flags("tail.publication=" + table), "check", "--json")
                        .out())
                .path("findings");
        assertThat(finding(after, "publication").path("level").asText()).isEqualTo("OK");
        assertThat(finding(after, "replication right").path("level").asText()).isEqualTo("OK");
        assertThat(finding(after, "fence trigger").path("level").asText()).isEqualTo("OK");
    }

    @Test
    void aRateOrParallelismOutOfRangeIsRefusedNamingTheFlag() {
        CliRun check = CliRun.of(flags(), "check", "--rate", "-1");
        assertThat(check.exitCode()).isEqualTo(10);
        assertThat(check.err()).contains("--rate -1 is not a rate");
        for (String n : new String[] {"0", "65"}) { // verify.parallel's range, 1 to 64
            CliRun sessions = CliRun.of(flags(), "check", "--parallel", n);
            assertThat(sessions.exitCode()).isEqualTo(10);
            assertThat(sessions.err()).contains("--parallel " + n + " is not a number of sessions; give 1 to 64");
        }
    }

    @Test
    void aRateOfZeroIsNoRateAsInTheConfig() throws Exception {
        OutOfRangeRows.create(services, table, 200);
        CliRun zero = CliRun.of(flags(), "check", "--rate", "0");
        assertThat(zero.exitCode()).as(zero.err()).isEqualTo(CheckCommand.BLOCKED); // the refused rows block
        assertThat(zero.out()).contains("no rate limit set");
    }

    private static JsonNode finding(JsonNode findings, String check) {
        for (JsonNode f : findings) {
            if (f.path("check").asText().equals(check)) return f;
        }
        throw new AssertionError("no finding " + check + " in " + findings);
    }
}
