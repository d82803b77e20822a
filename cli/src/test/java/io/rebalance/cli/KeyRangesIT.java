package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.client.WriteGuard;
import io.rebalance.core.retry.Retrier;
import io.rebalance.mover.RunState;
import io.rebalance.mover.redis.RedisRunState;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.route.Target;
import io.rebalance.testkit.SharedServices;
import java.io.File;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.awaitility.Awaitility;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Delete;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * Tables where nothing in a row tells time move on key ranges ({@code slots.timeFrom: none}), one of each key kind:
 * random (version 4) uuids, text in a non-C collation (mixed case, which ICU and C order differently), an integer
 * sequence with no time column, and a two-column key. Each is copied by two `rebalance copy` processes while a writer
 * inserts, updates, deletes and changes keys and the tail carries it all; then `verify --all` is MATCH, both stores
 * read independently are equal row by row, a cutover lets the application write DynamoDB through the guard, and a
 * rollback carries those writes back.
 */
class KeyRangesIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int ROWS = 6_000;
    private static final int PER_RANGE = 1_000;

    /** A key kind: the table, its rows, the writer's key changes and inserts, and a key the application adds. */
    enum Kind {
        UUID(
                "id uuid PRIMARY KEY, body text NOT NULL, n int NOT NULL",
                "SELECT gen_random_uuid(), 'row ' || i, i FROM generate_series(1, %d) i",
                "id = gen_random_uuid()",
                "INSERT INTO %s VALUES (gen_random_uuid(), 'w', 0)",
                item -> with(
                        item,
                        "id",
                        AttributeValue.fromS(java.util.UUID.randomUUID().toString()))),
        ICU_TEXT(
                "id text COLLATE \"und-x-icu\" PRIMARY KEY, body text NOT NULL, n int NOT NULL",
                "SELECT CASE WHEN mod(i, 2) = 0 THEN upper(md5(i::text)) ELSE md5(i::text) END, 'row ' || i, i"
                        + " FROM generate_series(1, %d) i",
                "id = id || 'K'",
                "INSERT INTO %s VALUES (initcap(md5(random()::text)), 'w', 0)",
                item -> with(item, "id", AttributeValue.fromS("Zz-app-" + java.util.UUID.randomUUID()))),
        SEQUENCE(
                "id bigserial PRIMARY KEY, body text NOT NULL, n int NOT NULL",
                "SELECT nextval(pg_get_serial_sequence('%1$s', 'id')), 'row ' || i, i FROM generate_series(1, %2$d) i",
                "id = id + 1000000",
                "INSERT INTO %s (body, n) VALUES ('w', 0)",
                item -> with(item, "id", AttributeValue.fromN("900000000"))),
        COMPOSITE(
                "tenant int NOT NULL, item text NOT NULL, body text NOT NULL, n int NOT NULL,"
                        + " PRIMARY KEY (tenant, item)",
                "SELECT mod(i, 7), 'item ' || i, 'row ' || i, i FROM generate_series(1, %d) i",
                "item = item || 'K'",
                "INSERT INTO %s VALUES ((random() * 9)::int, 'w ' || gen_random_uuid(), 'w', 0)",
                item -> with(with(item, "tenant", AttributeValue.fromN("99")), "item", AttributeValue.fromS("app")));

        final String columns;
        final String rows;
        final String keyChange;
        final String insert;
        final UnaryOperator<Map<String, AttributeValue>> newKey;

        Kind(
                String columns,
                String rows,
                String keyChange,
                String insert,
                UnaryOperator<Map<String, AttributeValue>> newKey) {
            this.columns = columns;
            this.rows = rows;
            this.keyChange = keyChange;
            this.insert = insert;
            this.newKey = newKey;
        }

        void make(Connection pg, String table) throws SQLException {
            try (Statement st = pg.createStatement()) {
                st.execute("CREATE TABLE " + table + " (" + columns + ")");
                String select = this == SEQUENCE ? String.format(rows, table, ROWS) : String.format(rows, ROWS);
                st.execute("INSERT INTO " + table + " " + select);
                st.execute("ANALYZE " + table);
            }
        }
    }

    private static Map<String, AttributeValue> with(Map<String, AttributeValue> item, String name, AttributeValue v) {
        Map<String, AttributeValue> out = new HashMap<>(item);
        out.put(name, v);
        return out;
    }

    private final SharedServices services = SharedServices.get();

    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void movesOnKeyRangesUnderWritesAndCutsOverAndBack(Kind kind) throws Exception {
        String table = SharedServices.unique("kr_" + kind.name().toLowerCase(java.util.Locale.ROOT));
        String prefix = SharedServices.unique("kr") + ":";
        Map<String, String> settings = TailedTable.settings(services, table, prefix);
        settings.put("slots.timeFrom", "none");
        settings.put("slots.rowsPerSlot", Integer.toString(PER_RANGE));
        settings.put("verify.settle", "200ms");
        List<String> args = TailedTable.args(settings);
        try (TailedTable t = new TailedTable(services, table, settings, pg -> kind.make(pg, table))) {
            CliRun check = CliRun.of(args, "check", "--json");
            assertThat(check.exitCode()).as(check.out() + check.err()).isZero();
            JsonNode survey = JSON.readTree(check.out());
            assertThat(survey.path("slots").path("count").asInt()).isEqualTo(ROWS / PER_RANGE);
            for (JsonNode slot : survey.path("bySlot"))
                assertThat(slot.path("rows").asLong()).as(slot.toString()).isEqualTo(PER_RANGE);

            Set<Long> copiers = new HashSet<>();
            List<Process> copies = new ArrayList<>();
            Writer writer = new Writer(kind, table);
            try (writer) {
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> writer.done.get(3) > 0);
                for (int i = 0; i < 2; i++) copies.add(copy(prefix, args, i));
                RunState run = new RedisRunState(t.redis, new Keyspace(prefix).run(), Retrier.standard());
                // every process seen holding a range, until both have exited
                Awaitility.await()
                        .atMost(Duration.ofSeconds(240))
                        .pollInterval(Duration.ofMillis(20))
                        .until(() -> {
                            for (String info : run.liveProcesses(60_000).values()) {
                                JsonNode n = JSON.readTree(info);
                                if (!n.path("slots").isEmpty())
                                    copiers.add(n.path("pid").asLong());
                            }
                            return copies.stream().noneMatch(Process::isAlive);
                        });
                for (Process p : copies)
                    assertThat(p.exitValue()).as("copy exit").isZero();
            } finally {
                copies.forEach(Process::destroyForcibly);
            }
            assertThat(copiers).as("processes that held a range").hasSize(2);
            for (int op = 0; op < 4; op++)
                assertThat(writer.done.get(op)).as("writes of kind " + op).isPositive();

            // the tail carries the writer's last changes; then verify and an independent read agree
            Awaitility.await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> t.assertEqualStores());
            CliRun verify = CliRun.of(args, "verify", "--all", "--json");
            assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();
            JsonNode verdict = JSON.readTree(verify.out());
            long verified = 0;
            for (JsonNode s : verdict.path("slots")) {
                assertThat(s.path("slot").asText()).matches("r\\d{6}");
                verified += s.path("sourceRows").asLong();
            }
            assertThat(verified).isEqualTo(count(table));

            // a cutover; the application writes DynamoDB through the guard, leaving out the slot it cannot know;
            // a rollback carries the writes back to Postgres
            CliRun prepared = CliRun.of(args, "cutover", "--prepare");
            assertThat(prepared.exitCode()).as(prepared.out() + prepared.err()).isZero();
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> CliRun.of(args, "cutover", "--dry-run").exitCode() == 0);
            CliRun cut = CliRun.of(args, "cutover");
            assertThat(cut.exitCode()).as(cut.out() + cut.err()).isZero();
            Map<String, Map<String, AttributeValue>> before = t.items();
            List<String> keys = new ArrayList<>(before.keySet());
            java.util.Collections.sort(keys);
            Map<String, AttributeValue> changed = with(before.get(keys.get(0)), "body", AttributeValue.fromS("app"));
            Map<String, AttributeValue> added = kind.newKey.apply(changed);
            Map<String, AttributeValue> gone = t.source.key().dynamoKey(keys.get(1));
            String slotAttribute = t.config.target().slotAttribute();
            try (WriteGuard guard = new WriteGuard(t.redis, t.dynamo, t.guard())) {
                String scope = t.config.cutover().scope();
                Target where = guard.write(scope, permit -> {
                    for (Map<String, AttributeValue> item : List.of(changed, added)) {
                        Map<String, AttributeValue> unslotted = new HashMap<>(item);
                        unslotted.remove(slotAttribute);
                        permit.writeDynamo(
                                t.dynamo,
                                TransactWriteItem.builder()
                                        .put(Put.builder()
                                                .tableName(table)
                                                .item(unslotted)
                                                .build())
                                        .build());
                    }
                    permit.writeDynamo(
                            t.dynamo,
                            TransactWriteItem.builder()
                                    .delete(Delete.builder()
                                            .tableName(table)
                                            .key(gone)
                                            .build())
                                    .build());
                    return permit.target();
                });
                assertThat(where).isEqualTo(Target.DYNAMODB);
            }
            CliRun back = CliRun.of(args, "cutover", "--rollback");
            assertThat(back.exitCode()).as(back.out() + back.err()).isZero();
            Map<String, Map<String, AttributeValue>> after = t.items();
            String addedKey = t.source.key().textOf(added);
            assertThat(after).containsKey(addedKey).doesNotContainKey(keys.get(1));
            assertThat(after.get(keys.get(0)).get("body").s()).isEqualTo("app");
            t.assertEqualStores();
            CliRun again = CliRun.of(args, "verify", "--all");
            assertThat(again.exitCode()).as(again.out() + again.err()).isZero();
        }
    }

    /** A copy process of the shaded jar, one worker, paced so that both processes take ranges. */
    private Process copy(String prefix, List<String> args, int n) throws Exception {
        List<String> cmd = ShadedJar.java("512m");
        cmd.addAll(List.of("copy", "--no-progress"));
        cmd.addAll(args);
        cmd.addAll(CopyProcesses.settings("mover.workers=1", "mover.pageSize=100", "mover.rateLimit=1000"));
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(new File("target/" + prefix.replace(":", "") + "-copy-" + n + ".log"))
                .start();
    }

    private long count(String table) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Inserts, updates, deletes and key changes in turn, one every 5 ms on one session (a steady application, not a
     * flood the copy would queue behind on two cores); counts each that changed a row. Closing stops it, waits for the
     * write in flight, and throws the first write that failed other than on a taken key.
     */
    private final class Writer implements AutoCloseable {
        /** inserts, updates, deletes, key changes */
        final AtomicLongArray done = new AtomicLongArray(4);

        private final List<String> statements;
        private final Connection pg;
        private final Statement st;
        private final AtomicReference<SQLException> failed = new AtomicReference<>();
        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        private long next;

        Writer(Kind kind, String table) throws SQLException {
            String any = "ctid = (SELECT ctid FROM " + table + " OFFSET floor(random() * " + ROWS + ")::int LIMIT 1)";
            statements = List.of(
                    String.format(kind.insert, table),
                    "UPDATE " + table + " SET n = n + 1, body = body || '.' WHERE " + any,
                    "DELETE FROM " + table + " WHERE " + any,
                    "UPDATE " + table + " SET " + kind.keyChange + " WHERE " + any);
            pg = services.postgres();
            st = pg.createStatement();
            timer.scheduleWithFixedDelay(this::writeOne, 0, 5, TimeUnit.MILLISECONDS);
        }

        private void writeOne() {
            int op = (int) (next++ % 4);
            try {
                if (st.executeUpdate(statements.get(op)) > 0) done.incrementAndGet(op);
            } catch (SQLException e) {
                if (!"23505".equals(e.getSQLState()))
                    failed.compareAndSet(null, e); // 23505: a changed key met one taken
            }
        }

        @Override
        public void close() throws Exception {
            timer.shutdown();
            assertThat(timer.awaitTermination(30, TimeUnit.SECONDS))
                    .as("the writer stopped")
                    .isTrue();
            st.close();
            pg.close();
            if (failed.get() != null) throw failed.get();
        }
    }
}
