package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.mover.RunState;
import io.rebalance.mover.SlotStore;
import io.rebalance.mover.redis.RedisRunState;
import io.rebalance.mover.redis.RedisSlotStore;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The cutover refuses while something could still write what verification did not see: a copy process alive, a
 * slot lease held (a worker that died may have a write in flight until it lapses), and a TRUNCATE newer than a slot's
 * last verification (the tail does not apply it, so every slot's items are still there). Each refusal lifts once
 * its cause is gone: the process leaves, the lease lapses, every slot is verified (and repaired) after the TRUNCATE.
 */
class CutoverRefusalsIT {
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("cutref");
    private final String prefix = SharedServices.unique("cr") + ":";

    @Test
    void refusedWhileACopyCanWriteAndAfterATruncateUntilReverified() throws Exception {
        Map<String, String> settings = TailedTable.settings(services, table, prefix);
        settings.put("mover.leaseTtl", "2s");
        List<String> flags = TailedTable.args(settings);
        try (TailedTable t = new TailedTable(services, table, settings, 600, 17)) {
            assertThat(CliRun.of(flags, "cutover", "--prepare").exitCode()).isZero();
            assertThat(CliRun.of(flags, "copy", "--no-progress").exitCode()).isZero();
            assertThat(CliRun.of(flags, "verify", "--all").exitCode()).isZero();
            awaitDryRun(flags, 0, "ok     copy processes: none runs, no slot lease is held");

            RunState run = new RedisRunState(t.redis, new Keyspace(prefix).run(), Retrier.standard());
            run.heartbeat("host-a:123", "{\"host\":\"host-a\",\"pid\":123,\"slots\":[]}");
            CliRun alive = CliRun.of(flags, "cutover", "--dry-run");
            assertThat(alive.exitCode()).as(alive.out()).isEqualTo(31);
            assertThat(alive.out()).contains("FAILED copy processes: 1 copy process runs (host-a:123)");
            run.leave("host-a:123");

            SlotStore slots = new RedisSlotStore(
                    t.redis, new Keyspace(prefix).run(), Retrier.standard(), Duration.ofSeconds(2), Duration.ofDays(1));
            Slot slot = run.plan().range().newest();
            slots.acquire(slot, "dead-worker"); // as a worker that died holding it would leave it
            CliRun leased = CliRun.of(flags, "cutover", "--dry-run");
            assertThat(leased.exitCode()).as(leased.out()).isEqualTo(31);
            assertThat(leased.out()).contains("FAILED copy processes: 1 slot lease is still held");
            awaitDryRun(flags, 0, "ok     copy processes"); // it lapses within mover.leaseTtl

            sql("TRUNCATE " + table);
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> t.redis.hget(new Keyspace(prefix).tail().changedSlots(), "truncated") != null);
            CliRun truncated = CliRun.of(flags, "cutover", "--dry-run");
            assertThat(truncated.exitCode()).as(truncated.out()).isEqualTo(31);
            assertThat(truncated.out())
                    .contains("verified before the TRUNCATE at")
                    .contains("--repair");

            CliRun repaired = CliRun.of(flags, "verify", "--all", "--repair");
            assertThat(repaired.exitCode()).as(repaired.out()).isZero();
            awaitDryRun(flags, 0, "all pre-checks pass");
        }
    }

    /**
     * Every row is in a slot, or the cutover refuses. With slots from a time column, rows whose time is NULL or
     * infinite are the slot `notime`: copied last, verified like any other by `verify --all` and `verify --slot
     * notime`, and kept current by the tail (a row whose time becomes NULL moves there). Rows outside
     * slots.from/slots.to are in no slot: `verify --all` counts them (exit 1) and `--dry-run` refuses naming the count
     * and the fix. Before, the copy left the 22 rows out, `verify --all` said every slot MATCH (exit 0) and the
     * cutover went through without them.
     */
    @Test
    void rowsWithNoTimeArriveInASlotOfTheirOwnAndRowsOutsideTheWindowStopTheCutover() throws Exception {
        Map<String, String> settings = TailedTable.settings(services, table, prefix);
        settings.put("slots.timeFrom", "column");
        settings.put("slots.timeColumn", "created_at");
        List<String> flags = TailedTable.args(settings);
        TailedTable.Maker make = roomEventsThen(
                600,
                9,
                "ALTER TABLE " + table + " ALTER COLUMN created_at DROP NOT NULL",
                "UPDATE " + table + " SET created_at = NULL WHERE id IN (SELECT id FROM " + table
                        + " ORDER BY id LIMIT 10)",
                "UPDATE " + table + " SET created_at = 'infinity' WHERE id IN (SELECT id FROM " + table
                        + " ORDER BY id DESC LIMIT 6)",
                "UPDATE " + table + " SET created_at = '-infinity' WHERE id IN (SELECT id FROM " + table
                        + " WHERE created_at > '-infinity' AND created_at < 'infinity' ORDER BY id LIMIT 6)");
        try (TailedTable t = new TailedTable(services, table, settings, make)) {
            assertThat(CliRun.of(flags, "cutover", "--prepare").exitCode()).isZero();
            assertThat(CliRun.of(flags, "copy", "--no-progress").exitCode()).isZero();
            CliRun verified = CliRun.of(flags, "verify", "--all");
            assertThat(verified.exitCode()).as(verified.out() + verified.err()).isZero();
            assertThat(verified.out()).containsPattern("notime\\s+MATCH\\s+22\\s+22\\s");
            CliRun json = CliRun.of(flags, "verify", "--all", "--json");
            JsonSchemas.assertValid("verify", json.out());
            assertThat(json.out()).containsPattern("\"rowsInNoSlot\"\\s*:\\s*0");
            String nullId;
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement();
                    java.sql.ResultSet rs = st.executeQuery(
                            "SELECT id FROM " + table + " WHERE created_at IS NULL ORDER BY id LIMIT 1")) {
                rs.next();
                nullId = rs.getString(1);
            }
            assertThat(t.dynamo
                            .getItem(b -> b.tableName(table)
                                    .key(Map.of(
                                            "id",
                                            software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS(
                                                    nullId))))
                            .item()
                            .get("_slot")
                            .s())
                    .isEqualTo("notime");
            awaitDryRun(flags, 0, "ok     rows in no slot: none");

            sql("UPDATE " + table + " SET created_at = NULL WHERE id = (SELECT id FROM " + table
                    + " WHERE created_at > '-infinity' AND created_at < 'infinity' ORDER BY id LIMIT 1)");
            Awaitility.await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                CliRun moved = CliRun.of(flags, "verify", "--slot", "notime");
                assertThat(moved.exitCode()).as(moved.out() + moved.err()).isZero();
                assertThat(moved.out()).containsPattern("notime\\s+MATCH\\s+23\\s+23\\s");
            });
            CliRun range = CliRun.of(flags, "verify", "--slot", "notime..20241020.02");
            assertThat(range.exitCode()).as(range.out() + range.err()).isEqualTo(2);
            assertThat(range.err()).contains("ends no range");

            List<String> window = new java.util.ArrayList<>(flags);
            window.addAll(
                    List.of("--set", "slots.from=2024-10-20T02:00:00Z", "--set", "slots.to=2024-10-20T04:00:00Z"));
            CliRun part = CliRun.of(window, "verify", "--all");
            assertThat(part.exitCode()).as(part.out() + part.err()).isEqualTo(1);
            assertThat(part.out()).contains("outside slots.from 2024-10-20T02:00:00Z, slots.to 2024-10-20T04:00:00Z");
            CliRun dry = CliRun.of(window, "cutover", "--dry-run");
            assertThat(dry.exitCode()).as(dry.out()).isEqualTo(31);
            assertThat(dry.out()).contains("FAILED rows in no slot").contains("unset slots.from and slots.to");
        }
    }

    /**
     * A rollback is proven possible before the flip: a table with a generated column is refused by `check` and
     * `--prepare`, naming the column and the fix (before, it passed both and `--dry-run`, and its reverse stream
     * failed after the cutover). Once fixed, a reverse stream that fails shows as failing in `status`, and
     * `--rollback`'s refusal names its error (before: "streaming, lag 0 ms", and a refusal asking to start a tail that
     * ran).
     */
    @Test
    void aTableTheReverseStreamCannotWriteIsRefusedBeforeTheFlipAndAFailingStreamSaysWhy() throws Exception {
        Map<String, String> settings = TailedTable.settings(services, table, prefix);
        List<String> all = TailedTable.args(settings);
        settings.put("source.columns", "id,room_id,kind,data,created_at,seq"); // the fix `check` names
        List<String> flags = TailedTable.args(settings);
        TailedTable.Maker make = roomEventsThen(
                400, 5, "ALTER TABLE " + table + " ADD COLUMN loud text GENERATED ALWAYS AS (upper(kind)) STORED");
        try (TailedTable t = new TailedTable(services, table, settings, make)) {
            CliRun check = CliRun.of(all, "check");
            assertThat(check.exitCode()).as(check.out() + check.err()).isEqualTo(1);
            assertThat(check.out()).contains("reverse writes").contains("column loud of");
            CliRun refused = CliRun.of(all, "cutover", "--prepare");
            assertThat(refused.exitCode()).as(refused.out() + refused.err()).isEqualTo(31);
            assertThat(refused.err())
                    .contains("column loud of")
                    .contains("leave it out of source.columns")
                    .contains("Nothing was changed");

            assertThat(CliRun.of(flags, "cutover", "--prepare").exitCode()).isZero();
            assertThat(CliRun.of(flags, "copy", "--no-progress").exitCode()).isZero();
            assertThat(CliRun.of(flags, "verify", "--all").exitCode()).isZero();
            awaitDryRun(flags, 0, "ok     reverse writes");
            CliRun cut = CliRun.of(flags, "cutover");
            assertThat(cut.exitCode()).as(cut.out() + cut.err()).isZero();

            // an item Postgres has no column for: the reverse stream's rounds fail on it until it is fixed
            Map<String, software.amazon.awssdk.services.dynamodb.model.AttributeValue> odd = new java.util.HashMap<>(
                    t.dynamo.scan(b -> b.tableName(table).limit(1)).items().get(0));
            odd.put("bogus", software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS("x"));
            try (io.rebalance.client.WriteGuard g = new io.rebalance.client.WriteGuard(t.redis, t.dynamo, t.guard())) {
                g.run(
                        table,
                        permit -> permit.writeDynamo(
                                t.dynamo,
                                software.amazon.awssdk.services.dynamodb.model.TransactWriteItem.builder()
                                        .put(b -> b.tableName(table).item(odd))
                                        .build()));
            }
            Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                            CliRun.of(flags, "status").out())
                    .containsPattern("reverse    failing, .*last error: .*bogus"));
            CliRun back = CliRun.of(flags, "cutover", "--rollback");
            assertThat(back.exitCode()).as(back.out() + back.err()).isEqualTo(31);
            assertThat(back.err())
                    .contains("its rounds fail")
                    .contains("bogus")
                    .doesNotContain("start `rebalance tail`");
        }
    }

    /** The table as a room_events over 4 hours, then {@code statements} run on it. */
    private TailedTable.Maker roomEventsThen(int rows, long seed, String... statements) {
        return pg -> {
            io.rebalance.local.RoomEventsGenerator.create(
                    pg, table, rows, java.time.Instant.parse("2024-10-20T04:00:00Z"), 4, seed);
            try (Statement st = pg.createStatement()) {
                for (String sql : statements) st.execute(sql);
            }
        };
    }

    private static void awaitDryRun(List<String> flags, int code, String text) {
        Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            CliRun dry = CliRun.of(flags, "cutover", "--dry-run");
            assertThat(dry.exitCode()).as(dry.out()).isEqualTo(code);
            assertThat(dry.out()).contains(text);
        });
    }

    private void sql(String statement) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            st.execute(statement);
        }
    }
}
