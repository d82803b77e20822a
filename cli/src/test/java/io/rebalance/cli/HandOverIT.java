package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rebalance.cdc.TailPreflight;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Ulid;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.mover.RunState;
import io.rebalance.mover.redis.RedisRunState;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.RoomEventsComparison;
import io.rebalance.testkit.SharedServices;
import java.io.File;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * SIGTERM is a hand-over, as a rolling update or a scale-down sends it: a copy process stops claiming, lets its
 * in-flight batch land and gives its slots back, so a process already running takes them at once, not after the
 * lease TTL; an active tail lets its batch land, saves its offsets and gives its lease up, so the standby streams at
 * once. Both exit 143 (128 + SIGTERM). Real processes from the shaded jar, leases set far longer than the bound.
 */
class HandOverIT {
    /** How soon after the SIGTERM another process must hold the work: far under the lease TTLs below. */
    private static final Duration HAND_OVER = Duration.ofSeconds(2);

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("handover");
    private final String prefix = table + ":";
    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void cleanUp() throws Exception {
        processes.forEach(Process::destroyForcibly);
        for (Process p : processes) p.waitFor(10, TimeUnit.SECONDS);
        services.dropSlot(table);
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute("DROP PUBLICATION IF EXISTS " + table);
        }
    }

    @Test
    void aRateLimitedCopyGivesItsSlotsBackOnSigtermAndARunningProcessTakesThemAtOnce() throws Exception {
        try (Connection c = services.postgres()) {
            RoomEventsGenerator.create(c, table, 3_000, Instant.parse("2024-10-20T00:00:00Z"), 3, 7);
        }
        CopyProcesses.createTarget(services, table);
        try (UnifiedJedis redis = services.redis()) {
            RunState run = new RedisRunState(redis, new Keyspace(prefix).run(), Retrier.standard());
            // eight workers on three slots, at 20 rows/s for the whole run: every worker waits on the rate limit
            Process a = copy("a", "mover.workers=8", "mover.rateLimit=20");
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> run.heldSlotLeases().size() == 3 && run.rowsCopied() >= 100);
            String aId = only(run.liveProcesses(60_000).keySet());
            // b finds every slot leased for two minutes; without a word from a it would look again in 10 s
            Process b = copy("b", "mover.workers=2", "mover.slotRetryDelay=10s");
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> run.liveProcesses(60_000).size() == 2);
            String bId = run.liveProcesses(60_000).keySet().stream()
                    .filter(id -> !id.equals(aId))
                    .findFirst()
                    .orElseThrow();
            assertThat(holders(redis, run)).allMatch(h -> h.startsWith(aId + "/"));

            long sent = System.nanoTime();
            a.destroy(); // SIGTERM
            await().atMost(HAND_OVER).pollInterval(Duration.ofMillis(50)).until(() -> holders(redis, run).stream()
                    .anyMatch(h -> h.startsWith(bId + "/")));
            long handedOverMs = (System.nanoTime() - sent) / 1_000_000;
            assertThat(a.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(a.exitValue()).as("asked to stop: 128 + SIGTERM").isEqualTo(143);
            assertThat(holders(redis, run)).as("a holds nothing").noneMatch(h -> h.startsWith(aId + "/"));
            assertThat(run.liveProcesses(60_000).keySet())
                    .as("a left the run as it stopped")
                    .containsExactly(bId);
            assertThat(run.events(1000))
                    .as("the hand-over is on record")
                    .anyMatch(e -> e.contains("given-back") && e.contains(aId));

            // nothing lost: b, unlimited, copies the rest from a's saved progress
            assertThat(CliRun.of(args("rate", "0")).exitCode()).isZero();
            assertThat(b.waitFor(120, TimeUnit.SECONDS)).isTrue();
            assertThat(b.exitValue()).isZero();
            try (Connection c = services.postgres();
                    DynamoDbClient d = services.dynamoClient()) {
                assertThat(RoomEventsComparison.differences(c, table, d, table)).isEmpty();
            }
            System.out.printf("copy hand-over: b held a slot %d ms after the SIGTERM%n", handedOverMs);
        }
    }

    @Test
    void anActiveTailGivesItsLeaseUpOnSigtermAndTheStandbyAppliesTheNextChangeAtOnce() throws Exception {
        try (Connection c = services.postgres()) {
            RoomEventsGenerator.create(c, table, 100, Instant.parse("2024-10-20T00:00:00Z"), 2, 7);
        }
        CopyProcesses.createTarget(services, table);
        String lease = new Keyspace(prefix).tail().lease();
        try (UnifiedJedis redis = services.redis();
                DynamoDbClient dynamo = services.dynamoClient()) {
            Process a = tail("a");
            await().atMost(Duration.ofSeconds(60)).until(() -> redis.get(lease) != null && slotActive());
            String aMember = redis.get(lease);
            insert(1);
            await().atMost(Duration.ofSeconds(60)).until(() -> present(dynamo, 1));
            Process b = tail("b");
            await().atMost(Duration.ofSeconds(60)).until(() -> log("b").contains("standing by"));

            long sent = System.nanoTime();
            a.destroy(); // SIGTERM
            assertThat(a.waitFor(30, TimeUnit.SECONDS)).isTrue();
            long exitedMs = (System.nanoTime() - sent) / 1_000_000;
            assertThat(a.exitValue()).as("asked to stop: 128 + SIGTERM").isEqualTo(143);
            insert(2); // made once a is gone: b's to apply
            await().atMost(HAND_OVER.minusMillis(Math.min(exitedMs, HAND_OVER.toMillis() - 1)))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> present(dynamo, 2));
            long appliedMs = (System.nanoTime() - sent) / 1_000_000;
            assertThat(redis.get(lease)).isNotEqualTo(aMember).doesNotStartWith(aMember.split("#")[0]);
            assertThat(b.isAlive()).isTrue();
            System.out.printf(
                    "tail hand-over: a exited %d ms and b applied the next change %d ms after the SIGTERM%n",
                    exitedMs, appliedMs);
        }
    }

    private Process copy(String name, String... settings) throws Exception {
        List<String> flags = CopyProcesses.settings("mover.pageSize=100", "mover.leaseTtl=120s");
        flags.addAll(CopyProcesses.settings(settings));
        flags.addAll(CliRun.base(services, table, prefix));
        Process p = CopyProcesses.start(table + "-" + name, flags);
        processes.add(p);
        return p;
    }

    private Process tail(String name) throws Exception {
        List<String> cmd = ShadedJar.java("384m");
        cmd.add("tail");
        cmd.addAll(CopyProcesses.settings(
                "tail.slotName=" + table, "tail.publication=" + table, "tail.leaseTtl=60s", "tail.heartbeat=1s"));
        cmd.addAll(CliRun.base(services, table, prefix));
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(new File("target/" + table + "-" + name + ".log"))
                .start();
        processes.add(p);
        return p;
    }

    private boolean slotActive() throws Exception {
        try (Connection c = services.postgres()) {
            return TailPreflight.slot(c, table).active();
        }
    }

    private String log(String name) throws Exception {
        return java.nio.file.Files.readString(java.nio.file.Path.of("target/" + table + "-" + name + ".log"));
    }

    private String[] args(String... words) {
        List<String> all = new ArrayList<>(List.of(words));
        all.addAll(CliRun.base(services, table, prefix));
        return all.toArray(String[]::new);
    }

    /** The members holding the run's slot leases ({@code processId/seq#token}). */
    private static List<String> holders(UnifiedJedis redis, RunState run) {
        return run.heldSlotLeases().stream()
                .map(redis::get)
                .filter(java.util.Objects::nonNull)
                .collect(Collectors.toList());
    }

    private static String only(java.util.Set<String> ids) {
        assertThat(ids).hasSize(1);
        return ids.iterator().next();
    }

    private static String id(int i) {
        return Ulid.of(Instant.parse("2024-10-19T23:30:00Z").toEpochMilli() + i, 0, i);
    }

    private void insert(int i) throws Exception {
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute("INSERT INTO " + table + " VALUES ('" + id(i) + "', gen_random_uuid(), 'message', NULL,"
                    + " '2024-10-19T23:30:00Z', " + i + ")");
        }
    }

    private boolean present(DynamoDbClient dynamo, int i) {
        return dynamo.getItem(b -> b.tableName(table)
                        .key(Map.of("id", AttributeValue.fromS(id(i))))
                        .consistentRead(true))
                .hasItem();
    }
}
