package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.cdc.TailPreflight;
import io.rebalance.core.slot.Ulid;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.RoomEventsComparison;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * {@code rebalance tail} end to end through the CLI: copy, then tail while rows change; status shows the tail;
 * {@code --drop-slot} is refused while a tail runs and cleans up after it stopped.
 */
class TailCommandIT {
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("tailcli");
    private final String prefix = SharedServices.unique("tc") + ":";

    private CliRun run(String... words) {
        List<String> args = new ArrayList<>(List.of(words));
        args.addAll(CliRun.base(services, table, prefix));
        args.addAll(List.of("--set", "tail.slotName=" + table, "--set", "tail.publication=" + table));
        return CliRun.of(args.toArray(String[]::new));
    }

    @Test
    void tailStreamsChangesShowsInStatusAndDropsItsSlot() throws Exception {
        Instant end = Instant.parse("2024-10-20T06:00:00Z");
        try (Connection pg = services.postgres()) {
            RoomEventsGenerator.create(pg, table, 3_000, end, 6, 7);
        }
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try (var dynamo = services.dynamoClient()) {
            Future<CliRun> tail = thread.submit(() -> run("tail", "--create-table"));
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
                try (Connection pg = services.postgres()) {
                    return TailPreflight.slot(pg, table).active();
                }
            });
            // the tail runs first (it created the table), then the copy backfills while rows change
            assertThat(run("copy", "--no-progress").exitCode()).isZero();
            String id = Ulid.of(end.toEpochMilli() - 1000, 1, 1);
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement()) {
                st.execute("UPDATE " + table + " SET kind = 'edited' WHERE seq % 7 = 0");
                st.execute("DELETE FROM " + table + " WHERE seq % 11 = 0");
                st.execute("INSERT INTO " + table + " VALUES ('" + id + "', gen_random_uuid(), 'marker', NULL,"
                        + " now(), 0)");
            }
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> !dynamo.getItem(b -> b.tableName(table)
                            .key(Map.of("id", AttributeValue.fromS(id)))
                            .consistentRead(true))
                    .item()
                    .isEmpty());
            try (Connection pg = services.postgres()) {
                assertThat(RoomEventsComparison.differences(pg, table, dynamo, table))
                        .isEmpty();
            }
            Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                            run("status").out())
                    .containsPattern("tail       \\S+: applied [0-9A-F]+/[0-9A-F]+, lag"));
            // status --json types the tail's numbers as docs/cli.md says
            String statusJson = run("status", "--json").out();
            JsonSchemas.assertValid("status", statusJson);
            var tailJson = new com.fasterxml.jackson.databind.ObjectMapper()
                    .readTree(statusJson)
                    .path("tail");
            assertThat(tailJson.path("running").isBoolean())
                    .as("running: %s", tailJson)
                    .isTrue();
            for (String n : List.of("lag_ms", "events", "updated_ms", "stream_restarts", "lag_bytes", "retained_bytes"))
                assertThat(tailJson.path(n).isIntegralNumber())
                        .as("%s: %s", n, tailJson)
                        .isTrue();
            assertThat(tailJson.path("events_per_sec").isNumber()).isTrue();
            assertThat(tailJson.path("retention_warning").isBoolean()).isTrue();
            assertThat(tailJson.path("applied_lsn").isTextual()).isTrue();

            // with the tail running, verify waits on its applied position and repairs through it
            dynamo.deleteItem(b -> b.tableName(table).key(Map.of("id", AttributeValue.fromS(id))));
            CliRun repaired = run("verify", "--all", "--repair");
            assertThat(repaired.exitCode()).as(repaired.out() + repaired.err()).isZero();
            assertThat(repaired.out()).contains("repairing differences through the running tail");
            try (Connection pg = services.postgres()) {
                assertThat(RoomEventsComparison.differences(pg, table, dynamo, table))
                        .isEmpty();
            }

            CliRun refused = run("tail", "--drop-slot");
            assertThat(refused.exitCode()).isEqualTo(26);
            assertThat(refused.err()).contains("holds the lease").contains("stop it first");

            tail.cancel(true); // like Ctrl-C: the tail stops, releases its lease and frees the slot
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                try (Connection pg = services.postgres()) {
                    return !TailPreflight.slot(pg, table).active()
                            && run("tail", "--drop-slot").exitCode() == 0;
                }
            });
            try (Connection pg = services.postgres()) {
                assertThat(TailPreflight.slot(pg, table).exists()).isFalse();
            }
        } finally {
            thread.shutdownNow();
            services.dropSlot(table);
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement()) {
                st.execute("DROP PUBLICATION IF EXISTS " + table);
                st.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }
}
