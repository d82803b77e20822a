package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.coordinator.CoordinatorSchema;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.retry.Retrier;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.mover.RunState;
import io.rebalance.mover.postgres.PostgresRunState;
import io.rebalance.mover.redis.RedisRunState;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.RoomEventsComparison;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * With either coordinator, the global controls reach every process: stop makes each one release its slots and wait,
 * start resumes them, a rate change is applied by each within seconds, SIGTERM releases a process's leases at once, and
 * status --json describes it all. Real `rebalance copy` processes (the shaded jar), commands run as a user runs them.
 */
class ControlIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("ctl_room_events");
    private final String prefix = SharedServices.unique("ctl") + ":";
    private final String schema = SharedServices.unique("ctl_coord");
    private final List<Process> processes = new ArrayList<>();
    /** Settings every command and process gets: none for Redis; for Postgres, its schema and a Redis never there. */
    private final List<String> coordinatorFlags = new ArrayList<>();

    private CliRun command(String... words) {
        List<String> args = new ArrayList<>(List.of(words));
        args.addAll(CliRun.base(services, table, prefix));
        args.addAll(coordinatorFlags);
        return CliRun.of(args.toArray(String[]::new));
    }

    /** The run's state as a test reads it beside the processes, through the coordinator {@code kind}. */
    private RunState coordinatedBy(String kind, UnifiedJedis redis) {
        if (kind.equals("redis")) return new RedisRunState(redis, new Keyspace(prefix).run(), Retrier.standard());
        coordinatorFlags.addAll(CliRun.coordinatedByPostgres(schema));
        try (Connection c = services.postgres()) {
            new CoordinatorSchema(schema).ensure(c); // read before a process made them; the processes find them made
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        return new PostgresRunState(services::postgres, new CoordinatorSchema(schema), schema, Retrier.standard());
    }

    @AfterEach
    void dropSchema() throws Exception {
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    private Process copy(String name, String... settings) throws Exception {
        List<String> flags = CopyProcesses.settings(
                "mover.workers=2", "mover.pageSize=100", "mover.keeperInterval=500ms", "mover.slotRetryDelay=500ms");
        flags.addAll(CopyProcesses.settings(settings));
        flags.addAll(CliRun.base(services, table, prefix));
        flags.addAll(coordinatorFlags);
        Process p = CopyProcesses.start(prefix.replace(":", "") + "-" + name, flags);
        processes.add(p);
        return p;
    }

    private void prepare(int rows, int hours) throws Exception {
        try (Connection c = services.postgres()) {
            RoomEventsGenerator.create(c, table, rows, Instant.parse("2024-10-20T00:00:00Z"), hours, 5);
        }
        CopyProcesses.createTarget(services, table);
    }

    private static long rateLimitOf(String processInfo) {
        try {
            return JSON.readTree(processInfo).path("rateLimit").asLong();
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void stopRateAndStartReachEveryProcess(String coordinator) throws Exception {
        prepare(30_000, 30);
        try (UnifiedJedis redis = services.redis()) {
            RunState run = coordinatedBy(coordinator, redis);
            assertThat(command("rate", "1500").exitCode()).isZero();
            Process a = copy("a");
            Process b = copy("b");
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> run.rowsCopied() > 1_000
                            && run.liveProcesses(60_000).size() == 2);

            // a new limit reaches both processes within seconds
            assertThat(command("rate", "1234").out()).contains("1234 rows/s");
            await().atMost(Duration.ofSeconds(5)).until(() -> run.liveProcesses(60_000).values().stream()
                    .allMatch(info -> rateLimitOf(info) == 1234));

            CliRun stop = command("stop", "--timeout", "30s");
            assertThat(stop.exitCode()).as(stop.err()).isZero();
            assertThat(stop.out()).contains("STOPPED");
            assertThat(run.status()).isEqualTo(RunStatus.STOPPED);
            assertThat(run.heldSlotLeases())
                    .as("no slot lease is held while stopped")
                    .isEmpty();
            assertThat(a.isAlive() && b.isAlive())
                    .as("processes wait for a start")
                    .isTrue();
            for (String info : run.liveProcesses(60_000).values())
                assertThat(JSON.readTree(info).path("slots")).isEmpty();

            JsonNode status = JSON.readTree(command("status", "--json").out());
            assertThat(status.path("status").asText()).isEqualTo("STOPPED");
            assertThat(status.path("coordinator").path("kind").asText()).isEqualTo(coordinator);
            assertThat(status.path("slots").path("total").asLong()).isEqualTo(30);
            assertThat(status.path("processes")).hasSize(2);
            assertThat(status.path("rows").path("copied").asLong()).isBetween(1_000L, 29_999L);

            assertThat(command("rate", "0").exitCode()).isZero();
            assertThat(command("start").out()).contains("TO_START");
            assertThat(a.waitFor(120, TimeUnit.SECONDS) && b.waitFor(120, TimeUnit.SECONDS))
                    .isTrue();
            assertThat(a.exitValue()).isZero();
            assertThat(b.exitValue()).isZero();
            assertThat(run.status()).isEqualTo(RunStatus.FINISHED);
            try (Connection c = services.postgres();
                    DynamoDbClient d = services.dynamoClient()) {
                assertThat(RoomEventsComparison.differences(c, table, d, table)).isEmpty();
            }
        } finally {
            processes.forEach(Process::destroyForcibly);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void sigtermReleasesLeasesAtOnceAndKeepsProgress(String coordinator) throws Exception {
        prepare(20_000, 20);
        try (UnifiedJedis redis = services.redis()) {
            RunState run = coordinatedBy(coordinator, redis);
            // a long lease TTL, so that leases gone right after the exit were released, not expired
            Process p = copy("term", "mover.leaseTtl=60s", "mover.rateLimit=2000");
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> !run.heldSlotLeases().isEmpty() && run.rowsCopied() >= 2_000);

            p.destroy(); // SIGTERM
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(run.heldSlotLeases()).isEmpty();
            assertThat(run.liveProcesses(60_000)).isEmpty();
            long copied = run.rowsCopied();
            assertThat(copied).isBetween(2_000L, 19_999L);

            Process q = copy("after", "mover.leaseTtl=60s");
            assertThat(q.waitFor(120, TimeUnit.SECONDS)).isTrue();
            assertThat(q.exitValue()).isZero();
            assertThat(run.events(1000)).anyMatch(e -> e.contains("resume slot="));
            assertThat(run.rowsCopied()).as("resumed, not started over").isLessThan(20_000L + 2L * 2 * 100);
            try (Connection c = services.postgres();
                    DynamoDbClient d = services.dynamoClient()) {
                assertThat(RoomEventsComparison.differences(c, table, d, table)).isEmpty();
            }
        } finally {
            processes.forEach(Process::destroyForcibly);
        }
    }
}
