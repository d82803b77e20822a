package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.slot.KeyType;
import io.rebalance.local.CapacityModel;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.Select;

/**
 * The copy paced to DynamoDB's write capacity: two copy processes write through the capacity model (1,000 write
 * units/s, DynamoDB's throttling answers). Without a budget the model throttles them; with {@code mover.writeUnits}
 * at the capacity they are (almost) never throttled, and the units they report consumed are exactly those the model
 * charged; with a budget above the capacity, throttling lowers the rate. {@code target.warmWriteUnits} reaches the
 * table, and the on-demand ramp starts from it.
 */
class PacedCopyIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int ROWS = 4_000;
    private static final long CAPACITY = 1_000;
    private final SharedServices services = SharedServices.get();
    private final String source = SharedServices.unique("paced_src");

    /** What one copy did, as the model counted it and as `status` reports it. */
    private record Copied(CapacityModel.Counts model, JsonNode writeUnits, long warm, long items) {
        double throttledShare() {
            return (double) model.throttledRequests() / Math.max(1, model.writeRequests());
        }
    }

    @Test
    void twoProcessesKeepToTheUnitsAllowedAndThrottlingLowersABudgetAboveThem() throws Exception {
        try (Connection c = services.postgres()) {
            RoomEventsGenerator.create(c, source, ROWS, Instant.parse("2024-10-20T04:00:00Z"), 4, 7);
        }
        Copied unpaced = copy(0);
        assertThat(unpaced.items()).isEqualTo(ROWS);
        assertThat(unpaced.throttledShare())
                .as("without a budget the model throttles the copy (%s)", unpaced.model())
                .isGreaterThan(0.05);

        Copied paced = copy(CAPACITY, "target.warmWriteUnits=12000");
        assertThat(paced.items()).isEqualTo(ROWS);
        assertThat(paced.throttledShare())
                .as("with mover.writeUnits at the capacity (%s)", paced.model())
                .isLessThan(0.02);
        assertThat(paced.writeUnits().path("ceiling").asLong()).isEqualTo(CAPACITY);
        assertThat(paced.writeUnits().path("consumed").asLong())
                .as("the units the processes report consumed are those DynamoDB (the model) charged")
                .isEqualTo(paced.model().consumedUnits());
        assertThat(paced.warm()).as("the table's warm throughput").isEqualTo(12_000);
        assertThat(paced.writeUnits().path("onDemandCap").asLong())
                .as("the on-demand ramp starts from the warm throughput")
                .isEqualTo(12_000);

        Copied above = copy(3 * CAPACITY);
        assertThat(above.items()).isEqualTo(ROWS);
        assertThat(above.writeUnits().path("cuts").asLong())
                .as("throttling lowered the rate (%s)", above.writeUnits())
                .isPositive();
    }

    private Copied copy(long writeUnits, String... sets) throws Exception {
        String table = SharedServices.unique("paced");
        String prefix = SharedServices.unique("paced") + ":";
        try (DynamoDbClient direct = services.dynamoClient()) {
            TargetTable.create(direct, table, "id", KeyType.TEXT, new SlotIndex("by_slot", "_slot"));
        }
        try (CapacityModel model = CapacityModel.start(services.dynamo.endpoint(), CAPACITY)) {
            List<String> flags = new ArrayList<>(CliRun.base(services, source, prefix));
            for (String kv : List.of(
                    "target.table=" + table,
                    "target.endpoint=" + model.endpoint(),
                    "mover.workers=4",
                    "mover.writeUnits=" + writeUnits)) {
                flags.add("--set");
                flags.add(kv);
            }
            for (String kv : sets) {
                flags.add("--set");
                flags.add(kv);
            }
            List<CompletableFuture<CliRun>> processes = new ArrayList<>();
            for (int p = 0; p < 2; p++)
                processes.add(CompletableFuture.supplyAsync(
                        () -> CliRun.of(flags, "copy", "--no-progress", "--no-concurrent-writers")));
            for (CompletableFuture<CliRun> p : processes) {
                CliRun done = p.get();
                assertThat(done.exitCode()).as(done.out() + done.err()).isZero();
            }
            CliRun status = CliRun.of(flags, "status", "--json");
            JsonSchemas.assertValid("status", status.out());
            long items;
            try (DynamoDbClient direct = services.dynamoClient()) {
                items = direct.scanPaginator(b -> b.tableName(table).select(Select.COUNT)).stream()
                        .mapToLong(r -> r.count())
                        .sum();
            }
            return new Copied(
                    model.counts(), JSON.readTree(status.out()).path("writeUnits"), model.warmWriteUnits(table), items);
        }
    }
}
