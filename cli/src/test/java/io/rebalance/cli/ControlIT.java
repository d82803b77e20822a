package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.redis.RedisScan;
import io.rebalance.core.retry.Retrier;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.mover.RedisRunState;
import io.rebalance.mover.RunState;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.RoomEventsComparison;
import io.rebalance.testkit.SharedServices;
import java.io.File;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The global controls reach every process: stop makes each one release its slots and wait, start resumes them, a
 * rate change is applied by each within seconds, SIGTERM releases a process's leases at once, and status --json
 * describes it all. Real `rebalance copy` processes (the shaded jar), commands run as a user runs them.
 */
class ControlIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("ctl_room_events");
    private final String prefix = SharedServices.unique("ctl") + ":";
    private final List<Process> processes = new ArrayList<>();

    private CliRun command(String... words) {
        List<String> args = new ArrayList<>(List.of(words));
        args.addAll(CliRun.base(services, table, prefix));
        return CliRun.of(args.toArray(String[]::new));
    }

    private Process copy(String name, String... settings) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m",
                "-jar",
                "target/rebalance.jar",
                "copy",
                "--no-progress",
                "--no-concurrent-writers",
                "--set",
                "mover.workers=2",
                "--set",
                "mover.pageSize=100",
                "--set",
                "mover.keeperInterval=500ms",
                "--set",
                "mover.slotRetryDelay=500ms"));
        for (String s : settings) {
            cmd.add("--set");
            cmd.add(s);
        }
        cmd.addAll(CliRun.base(services, table, prefix));
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(new File("target/" + prefix.replace(":", "") + "-" + name + ".log"))
                .start();
        processes.add(p);
        return p;
    }

    private void prepare(int rows, int hours) throws Exception {
        try (Connection c = services.postgres()) {
            RoomEventsGenerator.create(c, table, rows, Instant.parse("2024-10-20T00:00:00Z"), hours, 5);
        }
        try (DynamoDbClient d = services.dynamoClient()) {
            io.rebalance.core.dynamo.TargetTable.create(
                    d,
                    table,
                    "id",
                    io.rebalance.core.slot.KeyType.TEXT,
                    new io.rebalance.core.dynamo.SlotIndex("by_slot", "_slot"));
        }
    }

    private static long rateLimitOf(String processInfo) {
        try {
            return JSON.readTree(processInfo).path("rateLimit").asLong();
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<String> leases(UnifiedJedis redis, String prefix) {
        return RedisScan.keys(redis, prefix).stream()
                .filter(k -> k.endsWith(":worker"))
                .toList();
    }

    @Test
    void stopRateAndStartReachEveryProcess() throws Exception {
        prepare(30_000, 30);
        try (UnifiedJedis redis = services.redis()) {
            RunState run = new RedisRunState(redis, new Keyspace(prefix).run(), Retrier.standard());
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
            assertThat(leases(redis, prefix))
                    .as("no slot lease is held while stopped")
                    .isEmpty();
            assertThat(a.isAlive() && b.isAlive())
                    .as("processes wait for a start")
                    .isTrue();
            for (String info : run.liveProcesses(60_000).values())
                assertThat(JSON.readTree(info).path("slots")).isEmpty();

            JsonNode status = JSON.readTree(command("status", "--json").out());
            assertThat(status.path("status").asText()).isEqualTo("STOPPED");
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

    @Test
    void sigtermReleasesLeasesAtOnceAndKeepsProgress() throws Exception {
        prepare(20_000, 20);
        try (UnifiedJedis redis = services.redis()) {
            RunState run = new RedisRunState(redis, new Keyspace(prefix).run(), Retrier.standard());
            // a long lease TTL, so that leases gone right after the exit were released, not expired
            Process p = copy("term", "mover.leaseTtl=60s", "mover.rateLimit=2000");
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> !leases(redis, prefix).isEmpty() && run.rowsCopied() >= 2_000);

            p.destroy(); // SIGTERM
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(leases(redis, prefix)).isEmpty();
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
