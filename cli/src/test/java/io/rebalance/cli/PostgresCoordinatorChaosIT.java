package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rebalance.core.coordinator.CoordinatorSchema;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.retry.Retrier;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.mover.RunState;
import io.rebalance.mover.postgres.PostgresRunState;
import io.rebalance.testkit.RoomEventsComparison;
import io.rebalance.testkit.SharedServices;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The copy coordinated by Postgres alone (no Redis anywhere), through the worst a fleet meets: of two `rebalance copy`
 * processes (the shaded jar), one is killed with SIGKILL and the other frozen (SIGSTOP) while it holds slots, for
 * longer than its claims last. A third finishes the run. Then the rows of the frozen process's slots are deleted from
 * both stores, and it is thawed (SIGCONT) with pages in hand: a write it made now would bring an item back that no row
 * has. The copy ends exact, row by row and by `verify --all`.
 */
class PostgresCoordinatorChaosIT {
    private static final int ROWS = 16_000;
    private static final int HOURS = 16;

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("chaos_room_events");
    private final String schema = SharedServices.unique("chaos_coord");
    private final List<Process> processes = new ArrayList<>();

    private List<String> flags() {
        List<String> flags = new ArrayList<>(CliRun.base(services, table, SharedServices.unique("chaos") + ":"));
        for (String s :
                List.of("mover.coordinator=postgres", "coordinator.schema=" + schema, "redis.url=redis://127.0.0.1:1"))
            flags.addAll(List.of("--set", s));
        return flags;
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (Process p : processes) {
            signal("CONT", p); // a stopped process ignores SIGKILL's exit until it runs again
            p.destroyForcibly();
        }
        CutoverTables.drop(services, table);
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    @Test
    void oneKilledOneFrozenPastItsClaimsTheCopyEndsExactWithNoLateWrite() throws Exception {
        try (Connection c = services.postgres()) {
            RoomEventsGenerator.create(c, table, ROWS, Instant.parse("2024-10-20T00:00:00Z"), HOURS, 13);
            new CoordinatorSchema(schema).ensure(c);
        }
        CopyProcesses.createTarget(services, table);
        RunState run =
                new PostgresRunState(services::postgres, new CoordinatorSchema(schema), schema, Retrier.standard());
        Process killed = copy("killed", "mover.rateLimit=3000");
        Process frozen = copy("frozen", "mover.rateLimit=3000");
        await().atMost(Duration.ofSeconds(120))
                .until(() ->
                        run.rowsCopied() > 6_000 && run.liveProcesses(60_000).size() == 2);

        killed.destroyForcibly(); // SIGKILL: no shutdown hook, its claims left to lapse
        assertThat(killed.waitFor(30, TimeUnit.SECONDS)).isTrue();
        Set<String> held = freezeHoldingSlots(frozen);

        // a third process takes every slot over once the claims lapse, and finishes the run
        Process third = copy("third");
        assertThat(third.waitFor(240, TimeUnit.SECONDS))
                .as("the third process finished")
                .isTrue();
        assertThat(third.exitValue()).isZero();
        assertThat(run.status()).isEqualTo(RunStatus.FINISHED);
        assertThat(frozen.isAlive()).isTrue();

        int deleted = deleteRowsOfSlots(held);
        assertThat(deleted)
                .as("rows of the frozen process's slots, deleted from both stores")
                .isPositive();
        signal("CONT", frozen); // it wakes with pages read and claims long gone
        assertThat(frozen.waitFor(120, TimeUnit.SECONDS))
                .as("the thawed process ended")
                .isTrue();

        try (Connection c = services.postgres();
                DynamoDbClient d = services.dynamoClient()) {
            assertThat(RoomEventsComparison.differences(c, table, d, table))
                    .as(
                            "no item the thawed process could have written back; held %s; its log after the thaw:%n%s",
                            held, warnings(Path.of("target", schema + "-frozen.log")))
                    .isEmpty();
        }
        CliRun verify = CliRun.of(flags(), "verify", "--all");
        assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();
        assertThat(verify.out()).containsPattern("16 slots: 16 MATCH, 0 MISMATCH, 0 ERROR");
    }

    /** Stops {@code p} at a moment it holds live claims. @return the slots it holds, as the coordinator names them */
    private Set<String> freezeHoldingSlots(Process p) throws Exception {
        for (int attempt = 0; attempt < 50; attempt++) {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> !liveClaimsOf(p.pid()).isEmpty());
            signal("STOP", p);
            Set<String> held = liveClaimsOf(p.pid()); // it changes nothing from here on
            if (!held.isEmpty()) return held;
            signal("CONT", p); // it gave its slots up between the look and the stop: look again
        }
        throw new AssertionError("the process never held a slot when stopped");
    }

    private Set<String> liveClaimsOf(long pid) throws Exception {
        Set<String> out = new HashSet<>();
        try (Connection c = services.postgres();
                PreparedStatement ps = c.prepareStatement("SELECT name FROM " + schema + ".slots WHERE owner LIKE ?"
                        + " AND status <> 'FINISHED' AND lease_until > clock_timestamp()")) {
            ps.setString(1, "%:" + pid + ":%");
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next())
                    out.add(rs.getString(1).substring(rs.getString(1).indexOf('/') + 1));
            }
        }
        return out;
    }

    /** Deletes the rows of {@code slots} from Postgres and their items from DynamoDB. @return how many */
    private int deleteRowsOfSlots(Set<String> slots) throws Exception {
        List<String> ids = new ArrayList<>();
        try (DynamoDbClient d = services.dynamoClient()) {
            d.scanPaginator(b -> b.tableName(table)).items().stream()
                    .filter(item -> item.containsKey("_slot")
                            && slots.contains(item.get("_slot").s()))
                    .forEach(item -> ids.add(item.get("id").s()));
            for (String id : ids) d.deleteItem(b -> b.tableName(table).key(Map.of("id", AttributeValue.fromS(id))));
        }
        try (Connection c = services.postgres();
                PreparedStatement ps = c.prepareStatement("DELETE FROM " + table + " WHERE id = ANY (?)")) {
            ps.setArray(1, c.createArrayOf("text", ids.toArray()));
            assertThat(ps.executeUpdate()).isEqualTo(ids.size());
        }
        return ids.size();
    }

    /** The log's warnings and errors, to tell what the thawed process did should it write. */
    private static String warnings(Path log) throws Exception {
        try (var lines = Files.lines(log)) {
            return String.join(
                    "\n",
                    lines.filter(l -> l.contains(" WARN ") || l.contains(" ERROR "))
                            .toList());
        }
    }

    private static void signal(String name, Process p) throws Exception {
        if (!p.isAlive()) return;
        new ProcessBuilder("kill", "-" + name, Long.toString(p.pid()))
                .inheritIO()
                .start()
                .waitFor(10, TimeUnit.SECONDS);
    }

    private Process copy(String name, String... settings) throws Exception {
        List<String> flags = CopyProcesses.settings(
                "mover.workers=3",
                "mover.pageSize=100",
                "mover.leaseTtl=3s",
                "mover.slotRetryDelay=500ms",
                "mover.keeperInterval=500ms");
        flags.addAll(CopyProcesses.settings(settings));
        flags.addAll(flags());
        Process p = CopyProcesses.start(schema + "-" + name, flags);
        processes.add(p);
        return p;
    }
}
