package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.redis.RedisScan;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.mover.RunState;
import io.rebalance.mover.redis.RedisRunState;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.RoomEventsComparison;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The acceptance run: 200,000 rows over 120 hourly slots copied by three separate `rebalance copy` processes
 * (the shaded jar, as a user runs it), one of them killed with SIGKILL while it is in the middle of a slot. The
 * other two finish the run; every item equals its row; the killed slot resumes from its saved last_id; and
 * compaction leaves a handful of Redis keys.
 */
class MultiProcessCopyIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int ROWS = 200_000;
    private static final int HOURS = 120;
    private static final int PAGE = 100;

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("mp_room_events");
    private final String prefix = SharedServices.unique("mp") + ":";

    @Test
    void threeProcessesOneKilledMidSlotFinishExactly() throws Exception {
        try (Connection c = services.postgres()) {
            RoomEventsGenerator.create(c, table, ROWS, Instant.parse("2024-10-20T00:00:00Z"), HOURS, 11);
        }
        CopyProcesses.createTarget(services, table);
        List<Process> processes = new ArrayList<>();
        try (UnifiedJedis redis = services.redis()) {
            RunState run = new RedisRunState(redis, new Keyspace(prefix).run(), Retrier.standard());
            for (int i = 0; i < 3; i++) processes.add(copyProcess(i));
            Process victim = processes.get(0);

            // Wait until the victim holds a slot with saved progress that is not finished: the middle of a slot.
            String[] slotInFlight = new String[1];
            await().atMost(Duration.ofSeconds(120))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> {
                        slotInFlight[0] = inProgressSlotOf(run, redis, victim.pid());
                        return slotInFlight[0] != null;
                    });
            victim.destroyForcibly(); // SIGKILL: no shutdown hook, leases left to expire
            assertThat(victim.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(victim.exitValue()).isEqualTo(137);

            // Its progress is frozen now; pick the slot it left unfinished and remember where it stopped.
            Slot killed = Slot.parse(slotInFlight[0]);
            Map<String, String> state = redis.hgetAll(new Keyspace(prefix).run().slotState(killed.name()));
            String lastIdAtKill = state.get("last_id");
            long rowsAtKill = Long.parseLong(state.get("rows"));

            for (Process p : processes.subList(1, 3)) {
                assertThat(p.waitFor(240, TimeUnit.SECONDS))
                        .as("survivor finished")
                        .isTrue();
                assertThat(p.exitValue()).isZero();
            }
            assertThat(run.status()).isEqualTo(RunStatus.FINISHED);

            // the killed slot was resumed from the last_id its killed owner saved, not started over
            assertThat(run.events(1000))
                    .anyMatch(e -> e.contains("resume slot=" + killed.name() + " last_id=" + lastIdAtKill
                            + " rows_before=" + rowsAtKill));
            // rows copied twice are at most the page the victim wrote but did not record, per slot it held
            assertThat(run.rowsCopied()).isBetween((long) ROWS, (long) ROWS + 8L * PAGE);

            try (Connection c = services.postgres();
                    DynamoDbClient d = services.dynamoClient()) {
                assertThat(RoomEventsComparison.differences(c, table, d, table)).isEmpty();
            }
            List<String> keys = RedisScan.keys(redis, prefix);
            assertThat(keys).noneMatch(k -> k.startsWith(prefix + "{"));
            assertThat(keys.size()).isLessThan(15);
        } finally {
            processes.forEach(Process::destroyForcibly);
        }
    }

    /** A slot the process with this pid holds whose state has progress but is not finished, or null. */
    private String inProgressSlotOf(RunState run, UnifiedJedis redis, long pid) throws Exception {
        for (String info : run.liveProcesses(60_000).values()) {
            JsonNode n = JSON.readTree(info);
            if (n.path("pid").asLong() != pid) continue;
            for (JsonNode s : n.path("slots")) {
                String slot = s.asText().split(" ")[0];
                Map<String, String> state = redis.hgetAll(
                        new Keyspace(prefix).run().slotState(Slot.parse(slot).name()));
                if ("IN_PROGRESS".equals(state.get("status"))
                        && Long.parseLong(state.getOrDefault("rows", "0")) >= 3L * PAGE) {
                    return slot;
                }
            }
        }
        return null;
    }

    private Process copyProcess(int n) throws Exception {
        List<String> flags = CopyProcesses.settings(
                "mover.workers=3",
                "mover.pageSize=" + PAGE,
                "mover.leaseTtl=3s",
                "mover.slotRetryDelay=500ms",
                "mover.keeperInterval=500ms");
        flags.addAll(CliRun.base(services, table, prefix));
        return CopyProcesses.start(prefix.replace(":", "") + "-copy-" + n, flags);
    }
}
