package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.coordinator.CoordinatorSchema;
import io.rebalance.core.retry.Retrier;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.mover.RunState;
import io.rebalance.mover.postgres.PostgresRunState;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code mover.coordinator: postgres} as a user meets it, with no Redis anywhere ({@code redis.url} points at a port
 * nothing listens on): the commands whose state lives only in Redis refuse before they connect, naming the setting;
 * status says which coordinator holds the run; reset forgets the run's rows and nothing else; settings a user can get
 * wrong are refused naming the key, the value and the way on.
 */
class PostgresCoordinatorIT {
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("pgc_room_events");
    private final String schema = SharedServices.unique("pgc_coord");

    private List<String> flags(String... more) {
        List<String> flags = new ArrayList<>(CliRun.base(services, table, SharedServices.unique("pgc") + ":"));
        for (String s :
                List.of("mover.coordinator=postgres", "coordinator.schema=" + schema, "redis.url=redis://127.0.0.1:1"))
            flags.addAll(List.of("--set", s));
        for (String s : more) flags.addAll(List.of("--set", s));
        return flags;
    }

    @AfterEach
    void drop() throws Exception {
        CutoverTables.drop(services, table);
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    @Test
    void theCommandsThatKeepTheirStateInRedisRefuseNamingTheSetting() {
        for (String[] command :
                List.of(new String[] {"tail"}, new String[] {"cutover", "--dry-run"}, new String[] {"shadow"})) {
            CliRun r = CliRun.of(flags(), command);
            assertThat(r.exitCode()).as(r.err()).isEqualTo(ErrorCode.CONFIG_INVALID.exitCode());
            assertThat(r.err())
                    .contains("rebalance " + command[0] + " keeps")
                    .contains("runs only with mover.coordinator: redis")
                    .contains("copy --no-concurrent-writers")
                    .doesNotContain("Exception");
        }
    }

    /** No tail runs beside such a copy: a copy that does not say nothing writes the table is refused. */
    @Test
    void aCopyThatDoesNotSayNothingWritesTheTableIsRefused() throws Exception {
        try (Connection c = services.postgres()) {
            RoomEventsGenerator.create(c, table, 100, Instant.parse("2024-10-20T00:00:00Z"), 2, 5);
        }
        CliRun copy = CliRun.of(flags(), "copy", "--create-table", "--no-progress");
        assertThat(copy.exitCode()).as(copy.err()).isEqualTo(ErrorCode.NO_CHANGE_STREAM.exitCode());
        assertThat(copy.err())
                .contains("--no-concurrent-writers")
                .contains("mover.coordinator: redis")
                .contains("rebalance tail");
        try (var dynamo = services.dynamoClient()) {
            assertThat(dynamo.listTables().tableNames()).as("nothing created").doesNotContain(table);
        }
    }

    @Test
    void statusNamesTheCoordinatorAndResetForgetsTheRunsRowsOnly() throws Exception {
        try (Connection c = services.postgres()) {
            RoomEventsGenerator.create(c, table, 1_000, Instant.parse("2024-10-20T00:00:00Z"), 4, 5);
        }
        CliRun copy = CliRun.of(flags(), "copy", "--create-table", "--no-concurrent-writers", "--no-progress");
        assertThat(copy.exitCode()).as(copy.out() + copy.err()).isZero();
        assertThat(CliRun.of(flags(), "copy", "--no-concurrent-writers", "--no-progress")
                        .out())
                .contains("run in schema " + schema + " of Postgres at jdbc:postgresql://")
                .contains("is already FINISHED");
        CliRun status = CliRun.of(flags(), "status");
        assertThat(status.out())
                .contains("run " + schema + "  status FINISHED")
                .contains("coordinator postgres: schema " + schema + " of Postgres at")
                .contains("there is no tail and no cutover")
                // commands that would exit 10 for this run are not pointed at
                .doesNotContain("`rebalance tail`")
                .doesNotContain("cutover --prepare")
                .doesNotContain("routing");
        // check does not block on what only a tail and a cutover need: REPLICA IDENTITY, a replication right
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute("ALTER TABLE " + table + " REPLICA IDENTITY NOTHING");
        }
        CliRun check = CliRun.of(flags(), "check");
        assertThat(check.exitCode()).as(check.out() + check.err()).isZero();
        assertThat(check.out()).contains("there is no tail and no cutover").doesNotContain("reverse writes");

        RunState run =
                new PostgresRunState(services::postgres, new CoordinatorSchema(schema), schema, Retrier.standard());
        // another run's rows in the same tables, its name starting like this run's: reset leaves them
        RunState other = new PostgresRunState(
                services::postgres, new CoordinatorSchema(schema), schema + "x", Retrier.standard());
        other.addRowsCopied(7);
        other.event("another run");
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute("INSERT INTO " + schema + ".slots (name, owner, token, lease_until) VALUES ('" + schema
                    + "x/20241020.01', '', 0, '-infinity')");
            st.execute("INSERT INTO " + schema + ".rate_windows VALUES ('" + schema + "x', 1, 5)");
        }
        run.heartbeat("host-a:1:abcd", "{\"slots\":[]}"); // a copy process still running
        CliRun dry = CliRun.of(flags(), "reset");
        assertThat(dry.exitCode()).isZero();
        assertThat(dry.out())
                .containsPattern("would delete \\d+ rows in schema " + schema)
                .contains("host-a:1:abcd");
        CliRun refused = CliRun.of(flags(), "reset", "--yes");
        assertThat(refused.exitCode()).isEqualTo(ErrorCode.RUN_CONFLICT.exitCode());
        assertThat(refused.err()).contains("host-a:1:abcd").contains("rebalance stop");
        run.leave("host-a:1:abcd");

        CliRun done = CliRun.of(flags(), "reset", "--yes");
        assertThat(done.exitCode()).as(done.err()).isZero();
        assertThat(done.out()).containsPattern("deleted [1-9]\\d* rows in schema " + schema);
        assertThat(rowsOfSchema())
                .as("every row of the run is gone, the other run's 4 stay")
                .isEqualTo(4);
        assertThat(other.rowsCopied()).isEqualTo(7);
        assertThat(CliRun.of(flags(), "status").out())
                .contains("status NOT_STARTED")
                .contains("`rebalance copy --no-concurrent-writers` starts one")
                .doesNotContain("`rebalance tail`");
        try (var dynamo = services.dynamoClient()) {
            assertThat(dynamo.scan(b -> b.tableName(table)).count())
                    .as("DynamoDB untouched")
                    .isPositive();
        }
    }

    /** Ready while Postgres answers, and the coordinator's database when it is another; Redis is not asked. */
    @Test
    void aCopysReadinessAsksPostgresAndTheCoordinatorsDatabaseNotRedis() throws Exception {
        try (Connection c = services.postgres()) {
            RoomEventsGenerator.create(c, table, 1_500, Instant.parse("2024-10-20T00:00:00Z"), 3, 5);
        }
        int port = MetricsIT.freePort();
        String elsewhere = services.jdbcUrl + (services.jdbcUrl.contains("?") ? "&" : "?") + "ApplicationName=coord";
        java.util.concurrent.ExecutorService thread = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            var copy = thread.submit(() -> CliRun.of(
                    flags("mover.rateLimit=300", "coordinator.jdbcUrl=" + elsewhere),
                    "copy",
                    "--create-table",
                    "--no-concurrent-writers",
                    "--no-progress",
                    "--metrics-port",
                    Integer.toString(port)));
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            String[] body = new String[1];
            org.awaitility.Awaitility.await()
                    .atMost(java.time.Duration.ofSeconds(30))
                    .ignoreExceptionsMatching(e -> !(e instanceof AssertionError))
                    .until(() -> {
                        if (copy.isDone()) throw new AssertionError("the copy ended first: " + copy.get());
                        var r = http.send(
                                java.net.http.HttpRequest.newBuilder(
                                                java.net.URI.create("http://127.0.0.1:" + port + "/health/ready"))
                                        .build(),
                                java.net.http.HttpResponse.BodyHandlers.ofString());
                        body[0] = r.body();
                        return r.statusCode() == 200;
                    });
            assertThat(body[0])
                    .contains("\"postgres\"")
                    .contains("\"coordinator\"")
                    .doesNotContain("\"redis\"");
            assertThat(copy.get(60, java.util.concurrent.TimeUnit.SECONDS).exitCode())
                    .isZero();
        } finally {
            thread.shutdownNow();
        }
    }

    @Test
    void settingsAUserCanGetWrongAreRefusedNamingTheKey() {
        CliRun kind = CliRun.of(flags("mover.coordinator=mongodb"), "status");
        assertThat(kind.exitCode()).isEqualTo(ErrorCode.CONFIG_INVALID.exitCode());
        assertThat(kind.err())
                .contains("mover.coordinator")
                .contains("mongodb")
                .contains("redis")
                .contains("postgres");

        CliRun name = CliRun.of(flags("coordinator.schema=Bad-Name"), "status");
        assertThat(name.exitCode()).isEqualTo(ErrorCode.CONFIG_INVALID.exitCode());
        assertThat(name.err()).contains("coordinator.schema").contains("Bad-Name");

        CliRun url = CliRun.of(flags("coordinator.jdbcUrl=postgres://x"), "status");
        assertThat(url.exitCode()).isEqualTo(ErrorCode.CONFIG_INVALID.exitCode());
        assertThat(url.err()).contains("coordinator.jdbcUrl").contains("jdbc:postgresql:");

        CliRun away = CliRun.of(
                flags("coordinator.jdbcUrl=jdbc:postgresql://127.0.0.1:1/postgres?password=hunter2"), "status");
        assertThat(away.exitCode()).isEqualTo(ErrorCode.SOURCE_UNREACHABLE.exitCode());
        assertThat(away.err())
                .contains("coordinator.jdbcUrl")
                .contains("127.0.0.1:1")
                .doesNotContain("hunter2");
    }

    private long rowsOfSchema() throws Exception {
        long rows = 0;
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            for (String t : List.of(
                    "runs", "slots", "leases", "processes", "events", "rate_windows", "write_units", "records")) {
                try (ResultSet rs = st.executeQuery("SELECT count(*) FROM " + schema + "." + t)) {
                    rs.next();
                    rows += rs.getLong(1);
                }
            }
        }
        return rows;
    }
}
