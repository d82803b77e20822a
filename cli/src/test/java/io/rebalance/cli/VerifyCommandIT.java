package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.testkit.SharedServices;
import io.rebalance.testkit.TypeZoo;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * {@code rebalance verify} end to end: the type zoo copied by {@code rebalance copy} verifies MATCH; a corrupted
 * item makes it exit 1 naming the id and attribute, and status shows the mismatch; {@code --repair} brings the slot
 * back to MATCH; bad input exits 2 with the reason and writes nothing.
 */
class VerifyCommandIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("vzoo");
    private final String prefix = SharedServices.unique("vfy") + ":";

    private CliRun run(String... words) {
        List<String> args = new ArrayList<>(List.of(words));
        args.addAll(CliRun.base(services, table, prefix));
        args.addAll(List.of("--set", "verify.settle=200ms"));
        return CliRun.of(args.toArray(String[]::new));
    }

    /**
     * A table sparse over its hours (30 rows over 21 days) is surveyed, its empty hours printed as runs; a corrupted
     * item is still pinned to its hour, id and attribute.
     */
    @Test
    void aSparseTableVerifiesItsEmptyHoursAsRunsAndStillFindsADifference() throws Exception {
        try (Connection c = services.postgres();
                java.sql.Statement st = c.createStatement()) {
            st.execute(
                    "CREATE TABLE " + table + " (id int8 PRIMARY KEY, billed_at timestamptz NOT NULL, total numeric)");
            st.execute("INSERT INTO " + table + " SELECT n, timestamptz '2024-10-01 00:30:00+00' + n * interval '17"
                    + " hours', n + 0.5 FROM generate_series(0, 29) n");
        }
        String[] byTime = {"--set", "slots.timeFrom=column", "--set", "slots.timeColumn=billed_at"};
        CliRun copy = run(concat(new String[] {"copy", "--create-table", "--no-concurrent-writers"}, byTime));
        assertThat(copy.exitCode()).as(copy.err()).isZero();

        CliRun ok = run(concat(new String[] {"verify", "--all"}, byTime));
        assertThat(ok.exitCode()).as(ok.out() + ok.err()).isZero();
        // 30 hours with a row and the 464 empty ones between them (29 runs of 16)
        assertThat(ok.out())
                .contains("495 slots: 495 MATCH, 0 MISMATCH, 0 ERROR") // and notime, the slot of rows with no time
                .containsPattern("20241001\\.01\\.\\.20241001\\.16 MATCH +0 +0 +0 +0  \\(16 empty hours\\)");
        assertThat(ok.out().lines().filter(l -> l.endsWith("empty hours)"))).hasSize(29);

        try (DynamoDbClient dynamo = services.dynamoClient()) {
            Map<String, AttributeValue> item =
                    new HashMap<>(dynamo.getItem(b -> b.tableName(table).key(Map.of("id", AttributeValue.fromN("7"))))
                            .item());
            item.put("total", AttributeValue.fromN("99"));
            dynamo.putItem(b -> b.tableName(table).item(item));
        }
        CliRun differs = run(concat(new String[] {"verify", "--all"}, byTime));
        assertThat(differs.exitCode()).as(differs.out() + differs.err()).isEqualTo(1);
        assertThat(differs.out())
                .containsPattern("20241005\\.23 +MISMATCH +1 +1 +1")
                .contains("7  DIFFERENT total");
    }

    private static String[] concat(String[] a, String[] b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void typeZooCopiedByCopyVerifiesThenACorruptionIsPinpointedAndRepaired() throws Exception {
        List<String> ids;
        try (Connection c = services.postgres()) {
            ids = TypeZoo.create(c, table, 3);
        }
        CliRun copy = run("copy", "--create-table", "--no-concurrent-writers", "--set", "mover.workers=2");
        assertThat(copy.exitCode()).as(copy.err()).isZero();

        CliRun ok = run("verify", "--all", "--json");
        assertThat(ok.exitCode()).as(ok.err()).isZero();
        JsonSchemas.assertValid("verify", ok.out());
        JsonNode doc = JSON.readTree(ok.out());
        assertThat(doc.path("result").asText()).isEqualTo("MATCH");
        assertThat(doc.path("counts").path("MATCH").asInt()).isEqualTo(3);
        long rows = 0;
        for (JsonNode slot : doc.path("slots")) {
            rows += slot.path("sourceRows").asLong();
            // each result records both fingerprints and the WAL position and time it was taken at
            assertThat(slot.path("sourceFingerprint").asText())
                    .matches("\\d+:[0-9a-f]{16}")
                    .isEqualTo(slot.path("targetFingerprint").asText());
            assertThat(slot.path("walLsn").asText()).matches("[0-9A-F]+/[0-9A-F]+");
            assertThat(slot.path("atMillis").asLong()).isPositive();
        }
        assertThat(rows).isEqualTo(3L * TypeZoo.rowsPerCopy());

        // a slot outside the run held nothing by definition: its MATCH 0 0 read as proof, exit 0
        for (String outside : List.of("20200101.00", "20241019.00..20241020.02")) {
            CliRun notOfRun = run("verify", "--slot", outside);
            assertThat(notOfRun.exitCode()).as(notOfRun.out() + notOfRun.err()).isEqualTo(2);
            assertThat(notOfRun.err())
                    .containsPattern("--slot 20\\d{6}\\.00 is not a slot of the run: the run's slots run from"
                            + " 20241020\\.\\d\\d \\(its first\\) to 20241020\\.\\d\\d \\(its last\\)")
                    .contains("or use --all");
            assertThat(notOfRun.out()).doesNotContain("MATCH");
        }

        String victim = ids.get(4); // slot 20241020.02
        try (DynamoDbClient d = services.dynamoClient()) {
            Map<String, AttributeValue> item = new HashMap<>(d.getItem(b -> b.tableName(table)
                            .key(Map.of("id", AttributeValue.fromS(victim)))
                            .consistentRead(true))
                    .item());
            item.put("num", AttributeValue.fromS(item.get("num").n())); // a number stored as a string
            d.putItem(b -> b.tableName(table).item(item));
        }
        CliRun bad = run("verify", "--slot", "20241020.01..20241020.03");
        assertThat(bad.exitCode()).as(bad.err()).isEqualTo(1);
        assertThat(bad.out())
                .containsPattern("20241020\\.02 +MISMATCH")
                .contains(victim + "  DIFFERENT num (expected N")
                .contains("found S")
                .containsPattern("20241020\\.01 +MATCH")
                .contains("3 slots: 2 MATCH, 1 MISMATCH, 0 ERROR; 1 differences");

        CliRun status = run("status", "--json");
        JsonSchemas.assertValid("status", status.out());
        JsonNode ver = JSON.readTree(status.out()).path("verification");
        assertThat(ver.path("counts").path("MISMATCH").asInt()).isEqualTo(1);
        assertThat(ver.path("notMatching").get(0).path("slot").asText()).isEqualTo("20241020.02");
        assertThat(run("status").out()).contains("verified   3 slots: 2 MATCH, 1 MISMATCH");

        // while a copy is still running, slots it has not finished are said to be so
        try (var redis = services.redis()) {
            var keys = new io.rebalance.protocol.keyspace.Keyspace(prefix).run();
            var run =
                    new io.rebalance.mover.redis.RedisRunState(redis, keys, io.rebalance.core.retry.Retrier.standard());
            run.setStatus(io.rebalance.core.copy.RunStatus.IN_PROGRESS);
            run.setWatermark(io.rebalance.core.slot.Slot.parse("20241020.03"));
            redis.del(keys.slotState(
                    io.rebalance.core.slot.Slot.parse("20241020.02").name()));
            CliRun during = run("verify", "--slot", "20241020.02..20241020.03");
            assertThat(during.err()).contains("warning: 1 of these slots are not finished copying");
            assertThat(during.out()).containsPattern("20241020\\.02 +MISMATCH .*copy not finished");
            assertThat(JSON.readTree(run("verify", "--slot", "20241020.02", "--json")
                                    .out())
                            .path("notFinishedCopying")
                            .get(0)
                            .asText())
                    .isEqualTo("20241020.02");
            run.setStatus(io.rebalance.core.copy.RunStatus.FINISHED);
        }

        CliRun repair = run("verify", "--slot", "20241020.02", "--repair");
        assertThat(repair.exitCode()).as(repair.out() + repair.err()).isZero();
        assertThat(repair.out()).contains("repaired 1");
        assertThat(run("verify", "--all").exitCode()).isZero();
        assertThat(JSON.readTree(run("status", "--json").out())
                        .path("verification")
                        .path("counts")
                        .path("MATCH")
                        .asInt())
                .isEqualTo(3);
    }

    @Test
    void badInputExitsTwoNamingWhatIsWrong() throws Exception {
        CliRun noSlots = run("verify");
        assertThat(noSlots.exitCode()).isEqualTo(2);
        assertThat(noSlots.err()).contains("--slot 20241020.02").contains("--all");

        CliRun badSlot = run("verify", "--slot", "2024-10-20T02");
        assertThat(badSlot.exitCode()).isEqualTo(2);
        assertThat(badSlot.err()).contains("--slot 2024-10-20T02 is not valid").contains("20241020.02");

        CliRun noHour = run("verify", "--slot", "20241020.24"); // was read as 20241021.00, verified, exit 0
        assertThat(noHour.exitCode()).isEqualTo(2);
        assertThat(noHour.err()).contains("--slot 20241020.24 is not valid").contains("'20241020.24' is not a slot");

        CliRun badFlag = run("verify", "--slott", "20241020.02");
        assertThat(badFlag.exitCode()).isEqualTo(2);

        CliRun noTable = run("verify", "--slot", "20241020.02");
        assertThat(noTable.exitCode()).isEqualTo(2);
        assertThat(noTable.err()).contains("source table '" + table + "' does not exist");

        try (Connection c = services.postgres()) {
            TypeZoo.create(c, table, 1);
        }
        CliRun noTarget = run("verify", "--slot", "20241020.02");
        assertThat(noTarget.exitCode()).isEqualTo(2);
        assertThat(noTarget.err()).contains("DynamoDB table '" + table + "' does not exist");

        try (DynamoDbClient d = services.dynamoClient()) { // a table without the slot index
            io.rebalance.core.dynamo.TargetTable.create(
                    d,
                    table,
                    "id",
                    io.rebalance.core.slot.KeyType.TEXT,
                    new io.rebalance.core.dynamo.SlotIndex("other_index", "_slot"));
        }
        CliRun noIndex = run("verify", "--slot", "20241020.02");
        assertThat(noIndex.exitCode()).isEqualTo(2);
        assertThat(noIndex.err()).contains("has no index by_slot").contains("projection ALL");
        try (var redis = services.redis()) {
            assertThat(io.rebalance.core.redis.RedisScan.keys(redis, prefix)).isEmpty(); // nothing written
        }
    }
}
