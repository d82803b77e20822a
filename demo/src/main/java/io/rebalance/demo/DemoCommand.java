package io.rebalance.demo;

import io.rebalance.cdc.Tail;
import io.rebalance.cdc.TailPreflight;
import io.rebalance.cdc.TailProgress;
import io.rebalance.cdc.TailStatus;
import io.rebalance.cli.ConfigOptions;
import io.rebalance.cli.ProgressReporter;
import io.rebalance.cli.StatusCommand;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.config.Redact;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.redis.RedisScan;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.SourceSession;
import io.rebalance.local.DynamoDbLocalServer;
import io.rebalance.local.LocalServices;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.local.RoomEventsWriter;
import io.rebalance.mover.MoverProcess;
import io.rebalance.mover.RunPlanner;
import io.rebalance.mover.RunState;
import io.rebalance.ops.Connections;
import io.rebalance.ops.status.StatusView;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.verifier.InFlight;
import io.rebalance.verifier.SlotResult;
import io.rebalance.verifier.VerificationStore;
import io.rebalance.verifier.Verifier;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/**
 * {@code rebalance-demo demo}: a realistic migration end to end on local defaults. It generates a room_events table
 * (ULID ids over many hours), starts the change stream, lets an application write to the table while it copies
 * it into DynamoDB Local running in this process, waits for the stream to catch up, verifies every slot by
 * fingerprint, shows a corruption pinpointed and repaired, then runs the cutover's whole lifecycle under an
 * application that writes through WriteGuard and reads through Router ({@link CutoverLifecycle}), and shows the
 * status. Postgres and Redis come from the configuration (localhost by default) or, when absent and a Docker engine
 * runs, from Testcontainers.
 */
@Command(
        name = "demo",
        description = "Generate a room_events table and migrate it into DynamoDB Local, end to end: copy, tail,"
                + " verify, repair, then cutover, rollback, cutover and close-window under a guarded application.",
        footerHeading = "%nExamples:%n",
        footer = {"  rebalance-demo demo", "  rebalance-demo demo --rows 20000 --hours 24"})
final class DemoCommand implements Callable<Integer> {
    static final String TABLE = "demo_room_events";
    /** The application's write rate while the demo copies: enough to race the backfill in every slot. */
    private static final int WRITES_PER_SECOND = 200;

    @Mixin
    ConfigOptions options;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--rows", paramLabel = "N", description = "Rows to generate (default ${DEFAULT-VALUE}).")
    long rows = 200_000;

    @Option(
            names = "--hours",
            paramLabel = "N",
            description = "Hours the rows spread over, one slot each (default ${DEFAULT-VALUE}).")
    int hours = 120;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        MigrationConfig base = options.loadAllowingEmbedded(Map.of("source.table", TABLE)); // the demo names its table
        out.println("1. services");
        String jdbc = LocalServices.postgres(base.source().jdbcUrl(), out::println);
        String redis = LocalServices.redis(base.redis().url(), out::println);
        // the demo's DynamoDB lives and dies with it, unless one was given
        boolean inProcess = base.target().endpoint().isEmpty() || base.target().embedded();
        try (DynamoDbLocalServer local = inProcess ? DynamoDbLocalServer.start(0) : null) {
            Map<String, String> demo = new LinkedHashMap<>();
            demo.put("source.jdbcUrl", jdbc);
            demo.put("source.table", TABLE);
            demo.put("target.table", TABLE);
            demo.put(
                    "target.endpoint",
                    inProcess ? local.endpoint() : base.target().endpoint());
            demo.put("redis.url", redis);
            demo.put("redis.prefix", "demo:");
            // its own slot, publication and fences, so that it never touches a real migration's on the same services
            demo.put("tail.slotName", TABLE);
            demo.put("tail.publication", TABLE);
            demo.put("cutover.pgFence", "public." + TABLE + "_fence");
            demo.put("cutover.dynamoFence", TABLE + "_fence");
            MigrationConfig config = options.loadAllowingEmbedded(demo);
            out.println("   postgres " + Redact.url(jdbc) + ", redis " + Redact.url(redis) + ", dynamodb "
                    + config.target().endpoint() + (inProcess ? " (DynamoDB Local in this process)" : ""));
            return migrate(config, options.args(demo), out);
        }
    }

    private int migrate(MigrationConfig config, List<String> configArgs, PrintWriter out) throws Exception {
        String jdbc = config.source().jdbcUrl();
        out.printf("2. generating %,d room_events rows over %d hours into %s%n", rows, hours, TABLE);
        long t0 = System.nanoTime();
        Instant end = Instant.now().truncatedTo(ChronoUnit.HOURS);
        try (Connection c = new SourceSession(config.source()).openForPreflight();
                Statement st = c.createStatement()) {
            forgetLastDemoStream(config, c);
            st.execute("DROP TABLE IF EXISTS " + TABLE);
            // a last demo's: its trigger on the table goes with its function
            st.execute("DROP FUNCTION IF EXISTS " + config.cutover().pgFence() + "_check() CASCADE");
            st.execute("DROP TABLE IF EXISTS " + config.cutover().pgFence()); // a last demo's closed the table
            RoomEventsGenerator.create(c, TABLE, rows, end, hours, 7);
        }
        out.printf("   done in %.1f s%n", (System.nanoTime() - t0) / 1e9);

        try (Connections c = new Connections(config, config.mover().workers() + 6)) {
            RunState run = c.runState();
            for (String k : RedisScan.keys(c.redis(), config.redis().keyspace().prefix()))
                c.redis().del(k); // a fresh demo run
            forgetLastDemoTables(config, c);
            var prepared = new RunPlanner(config).prepare(run, c.dynamo(), c.dynamoWhere(), true);
            out.println("3. the change stream (rebalance tail) starts, then the application starts writing");
            AtomicReference<Exception> tailFailed = new AtomicReference<>();
            Tail tail = new Tail(config, prepared.table(), c.dynamo(), c.redis(), "demo-tail");
            Thread tailThread = new Thread(
                    () -> {
                        try {
                            tail.run();
                        } catch (Exception e) {
                            tailFailed.set(e);
                        }
                    },
                    "demo-tail");
            tailThread.start();
            // whatever fails from here, the writers stop and the tail's slot goes: an unread slot holds WAL for good
            try (RoomEventsWriter app = new RoomEventsWriter(
                    jdbc, config.source().user(), config.source().password(), TABLE, end, hours)) {
                awaitStreaming(config, tailFailed);
                app.start(2, WRITES_PER_SECOND, 7);
                out.printf(
                        "   slot %s streaming; the application writes %d/s (inserts, updates, TOASTed jsonb, deletes)%n",
                        config.tail().slotName(), WRITES_PER_SECOND);

                out.println("4. copying with " + config.mover().workers() + " workers (state in Redis under demo:)");
                run.compareAndSet(RunStatus.NOT_STARTED, RunStatus.TO_START);
                MoverProcess process = c.moverProcess(prepared);
                long t1 = System.nanoTime();
                RunStatus copied;
                try (ProgressReporter progress = ProgressReporter.start(run, out, true)) {
                    copied = process.run();
                    progress.finish(copied);
                }
                double seconds = (System.nanoTime() - t1) / 1e9;
                out.printf("   %s in %.1f s, %,.0f rows/s%n", copied, seconds, rows / seconds);

                out.println(
                        "5. the application stops; the tail applies the rest and re-writes keys the backfill raced");
                app.close();
                boolean caughtUp = awaitCaughtUp(config, c, tail);
                out.printf(
                        "   %,d application writes; the tail applied %,d changes, re-wrote %,d raced keys, and waited"
                                + " %d times for a delivered commit to become visible%s%n",
                        app.writes(),
                        tail.stats().events(),
                        tail.stats().reconciled(),
                        tail.stats().commitWaits(),
                        caughtUp ? "" : " (NOT caught up within 2 minutes)");
                long sourceRows;
                try (Connection pg = new SourceSession(config.source()).openForPreflight();
                        Statement st = pg.createStatement();
                        var rs = st.executeQuery("SELECT count(*) FROM " + TABLE)) {
                    rs.next();
                    sourceRows = rs.getLong(1);
                }

                out.println("6. verifying every slot: Postgres fingerprints against the slots' items");
                long items = TargetTable.countItems(c.dynamo(), TABLE, 4);
                List<Slot> slots = new ArrayList<>();
                prepared.plan().range().forEach(slots::add);
                VerificationStore store =
                        new VerificationStore(c.redis(), config.redis().keyspace());
                Verifier verifier = new Verifier(config, prepared.table(), c.dynamo(), InFlight.settle(Duration.ZERO));
                long t2 = System.nanoTime();
                List<SlotResult> verified =
                        verifier.verify(slots, config.verify().parallel(), false, store::save);
                long matching = verified.stream()
                        .filter(r -> r.verdict() == SlotResult.Verdict.MATCH)
                        .count();
                out.printf(
                        "   %,d items for %,d rows; %d of %d slots MATCH in %.1f s%n",
                        items, sourceRows, matching, slots.size(), (System.nanoTime() - t2) / 1e9);

                for (SlotResult r : verified) {
                    if (r.verdict() == SlotResult.Verdict.MATCH) continue;
                    out.println("   slot " + r.slot() + " " + r.verdict());
                    r.differences().forEach(d -> out.println("     " + d.describe()));
                }

                // nothing writes the table now, so the repair below may write directly (`verify --repair` goes
                // through a running tail, docs/cdc.md)
                out.println("7. a corrupted item and a lost one are pinpointed, then repaired");
                Slot victim = slots.get(slots.size() / 2);
                List<String> damaged = corrupt(
                        c, SlotIndex.of(config.target()), prepared.table().partitionKey(), victim);
                SlotResult found =
                        verifier.verify(List.of(victim), 1, false, r -> {}).get(0);
                found.differences().forEach(d -> out.println("   " + d.describe()));
                SlotResult repaired =
                        verifier.verify(List.of(victim), 1, true, store::save).get(0);
                out.printf(
                        "   slot %s after --repair: %s (%d ids re-copied)%n",
                        victim, repaired.verdict(), repaired.repaired().size());
                boolean pinpointed =
                        found.differences().stream().map(d -> d.id()).toList().equals(damaged);

                out.println(
                        "8. the cutover, with an application writing through WriteGuard and reading through Router");
                boolean cutOver = new CutoverLifecycle(config, configArgs, c, out).run();

                out.println("9. status");
                StatusCommand.render(StatusView.of(config, c), out);
                int keys = RedisScan.keys(c.redis(), config.redis().keyspace().prefix())
                        .size();
                out.println("   " + keys + " Redis keys remain for "
                        + prepared.plan().range().count() + " slots (finished slots are compacted)");
                boolean ok = items == sourceRows
                        && caughtUp
                        && tailFailed.get() == null
                        && copied == RunStatus.FINISHED
                        && matching == slots.size()
                        && pinpointed
                        && repaired.verdict() == SlotResult.Verdict.MATCH
                        && cutOver;
                return ok ? 0 : ErrorCode.INTERNAL.exitCode();
            } finally {
                tail.close();
                tailThread.join(30_000);
                try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
                    // the closed tail's replication connection is ending
                    Poll.until(
                            () -> !TailPreflight.slot(pg, config.tail().slotName())
                                    .active(),
                            Duration.ofMillis(100),
                            Duration.ofSeconds(10));
                    forgetLastDemoStream(config, pg);
                }
            }
        }
    }

    /**
     * Drops the demo's slot and publication: at the start, because the table is made anew and a last demo's slot
     * would replay its changes; at the end, because an unread slot holds WAL.
     */
    private static void forgetLastDemoStream(MigrationConfig config, Connection c) throws Exception {
        try (Statement st = c.createStatement()) {
            st.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '"
                    + config.tail().slotName() + "' AND NOT active");
            st.execute("DROP PUBLICATION IF EXISTS \"" + config.tail().publication() + "\"");
        }
    }

    /** A DynamoDB given with target.endpoint outlives the demo: a last demo's items and closed fence go first. */
    private static void forgetLastDemoTables(MigrationConfig config, Connections c) {
        for (String table : List.of(config.target().table(), config.cutover().dynamoFence())) {
            try {
                c.dynamo().deleteTable(b -> b.tableName(table));
                c.dynamo().waiter().waitUntilTableNotExists(b -> b.tableName(table));
            } catch (ResourceNotFoundException e) {
                // none: DynamoDB Local in this process starts empty
            }
        }
    }

    private static void awaitStreaming(MigrationConfig config, AtomicReference<Exception> failed) throws Exception {
        try (Connection c = new SourceSession(config.source()).openForPreflight()) {
            // Debezium is connecting and creating the slot
            Poll.Condition streaming = () -> {
                if (failed.get() != null) throw failed.get();
                return TailPreflight.slot(c, config.tail().slotName()).active();
            };
            if (!Poll.until(streaming, Duration.ofMillis(100), Duration.ofMinutes(1)))
                throw new IllegalStateException("the tail did not start in 1 min");
        }
    }

    /** Every change committed so far applied, and no key left for reconciliation. */
    private static boolean awaitCaughtUp(MigrationConfig config, Connections c, Tail tail) throws Exception {
        long lsn;
        try (Connection pg = new SourceSession(config.source()).openForPreflight();
                Statement st = pg.createStatement();
                var rs = st.executeQuery("SELECT pg_current_wal_lsn()::text")) {
            rs.next();
            lsn = Lsn.parse(rs.getString(1));
        }
        Duration bound = Duration.ofMinutes(2);
        if (!new TailProgress(c.redis(), tail.keys()).awaitApplied(lsn, bound)) return false;
        // the tail reconciles and publishes every second
        return Poll.until(
                () -> TailStatus.read(c.redis(), tail.keys()).reconcilePending() == 0, Duration.ofMillis(200), bound);
    }

    /** Deletes the first item of {@code slot} and turns the second one's seq into a string. @return their ids */
    private static List<String> corrupt(Connections c, SlotIndex index, String pk, Slot slot) {
        List<Map<String, AttributeValue>> two = c.dynamo()
                .query(b -> b.tableName(TABLE)
                        .indexName(index.name())
                        .keyConditionExpression("#s = :s")
                        .expressionAttributeNames(Map.of("#s", index.attribute()))
                        .expressionAttributeValues(Map.of(
                                ":s", AttributeValue.fromS(index.values(slot).get(0))))
                        .limit(2))
                .items();
        c.dynamo().deleteItem(b -> b.tableName(TABLE).key(Map.of(pk, two.get(0).get(pk))));
        Map<String, AttributeValue> changed = new HashMap<>(two.get(1));
        changed.put("seq", AttributeValue.fromS(changed.get("seq").n()));
        c.dynamo().putItem(b -> b.tableName(TABLE).item(changed));
        return List.of(two.get(0).get(pk).s(), two.get(1).get(pk).s());
    }
}
