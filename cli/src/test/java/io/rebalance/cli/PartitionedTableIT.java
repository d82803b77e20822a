package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.cdc.ChangedSlots;
import io.rebalance.local.DynamoDbLocalServer;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.route.Target;
import io.rebalance.sim.AppSimulator;
import io.rebalance.sim.CutoverCycles;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A room_events table partitioned by month (primary key {@code (id, created_at)}, as Postgres requires of a
 * partitioned table) goes through what a plain one does: the tail streams it through a publication that publishes via
 * the partition root, copy and verify read the parent, and with an application writing through the guard, cutover and
 * rollback lose nothing and serve no stale read. Partitions come during the run: one created empty (its rows arrive
 * as changes) and one attached with rows already in it, which no change carried: the tail marks its slots changed, so
 * verify finds the rows missing and repairs them before any cutover.
 */
class PartitionedTableIT {
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("parted");
    private final String prefix = SharedServices.unique("pt") + ":";

    private DynamoDbLocalServer dynamo;

    private Map<String, String> settings() {
        Map<String, String> s = TailedTable.settings(services, table, prefix);
        s.put("target.endpoint", dynamo.endpoint());
        s.put("source.keyColumns", "id"); // the primary key holds the partition key too: the key is named
        // the plan covers August 31st, whose partition is attached later
        s.put("slots.from", "2024-08-31T00:00:00Z");
        s.put("slots.to", "2024-10-02T00:00:00Z");
        return s;
    }

    private List<String> args() {
        return TailedTable.args(settings());
    }

    private void make(Connection pg) throws Exception {
        String staging = table + "_gen";
        RoomEventsGenerator.create(pg, staging, 2_000, Instant.parse("2024-10-02T00:00:00Z"), 48, 11);
        LocalDate month = LocalDate.now(ZoneOffset.UTC).withDayOfMonth(1);
        try (Statement st = pg.createStatement()) {
            st.execute("CREATE TABLE " + table + " (id text NOT NULL, room_id uuid NOT NULL, kind text NOT NULL,"
                    + " data jsonb, created_at timestamptz NOT NULL, seq bigint NOT NULL, PRIMARY KEY (id, created_at))"
                    + " PARTITION BY RANGE (created_at)");
            partition(st, "2024_09", "2024-09-01", "2024-10-01");
            partition(st, "2024_10", "2024-10-01", "2024-11-01");
            partition(st, "now", month.toString(), month.plusMonths(1).toString()); // the application's inserts
            st.execute("INSERT INTO " + table + " SELECT * FROM " + staging);
            st.execute("DROP TABLE " + staging);
        }
    }

    private void partition(Statement st, String name, String from, String to) throws Exception {
        st.execute("CREATE TABLE " + table + "_" + name + " PARTITION OF " + table + " FOR VALUES FROM ('" + from
                + "') TO ('" + to + "')");
    }

    @Test
    void copiedTailedVerifiedCutAndRolledBackWithPartitionsAddedDuringTheRun() throws Exception {
        try (DynamoDbLocalServer own = SharedServices.ownDynamo()) {
            dynamo = own;
            cutAndRolledBack();
        }
    }

    private void cutAndRolledBack() throws Exception {
        try (TailedTable t = new TailedTable(services, table, settings(), this::make)) {
            CutoverCycles setup = new CutoverCycles(args(), null, System.out, RebalanceCommand::execute);
            assertThat(setup.command(List.of("cutover", "--prepare")).exitCode())
                    .isZero();
            assertThat(setup.command(List.of("copy", "--no-progress")).exitCode())
                    .isZero();
            CliRun verified = CliRun.of(args(), "verify", "--all");
            assertThat(verified.exitCode()).as(verified.out() + verified.err()).isZero();

            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement()) {
                partition(st, "2024_11", "2024-11-01", "2024-12-01"); // created empty
                String august = table + "_2024_08";
                RoomEventsGenerator.create(pg, august, 200, Instant.parse("2024-09-01T00:00:00Z"), 24, 13);
                st.execute("ALTER TABLE " + august + " DROP CONSTRAINT " + august + "_pkey,"
                        + " ADD PRIMARY KEY (id, created_at)");
                st.execute("ALTER TABLE " + table + " ATTACH PARTITION " + august
                        + " FOR VALUES FROM ('2024-08-01') TO ('2024-09-01')");
            }
            ChangedSlots changed = new ChangedSlots(t.redis, new Keyspace(prefix).tail(), t.source.keyspace());
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> changed.positions().lastChange("20240831.12").isPresent());

            CliRun missing = CliRun.of(args(), "verify", "--all");
            assertThat(missing.exitCode()).as(missing.out() + missing.err()).isEqualTo(1);
            assertThat(missing.out()).contains("20240831.");
            CliRun repaired = CliRun.of(args(), "verify", "--all", "--repair");
            assertThat(repaired.exitCode()).as(repaired.out() + repaired.err()).isZero();
            CliRun match = CliRun.of(args(), "verify", "--all");
            assertThat(match.exitCode()).as(match.out() + match.err()).isZero();
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> setup.command(List.of("cutover", "--dry-run")).exitCode() == 0);

            try (AppSimulator app = new AppSimulator(t.config, t.source, t.redis, t.dynamo, t.guard())) {
                app.start(AppSimulator.Load.acceptance().withUpdateShare(0.9), 3);
                List<CutoverCycles.Cycle> cycles =
                        new CutoverCycles(args(), app, System.out, RebalanceCommand::execute).run(3, 250);
                assertThat(cycles).hasSize(3);
                for (CutoverCycles.Cycle c : cycles) {
                    CutoverTables.assertCleanCycle(c, app);
                    CutoverTables.assertConsistentAfter(c);
                }
                assertThat(app.staleReads()).isEmpty();
                assertThat(app.reads(Target.DYNAMODB)).isPositive();
            }
            CutoverTables.assertSimulatorSessionsClosed(services);
        }
    }
}
