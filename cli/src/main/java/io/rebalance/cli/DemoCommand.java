package io.rebalance.cli;

import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.redis.RedisScan;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceSession;
import io.rebalance.local.LocalServices;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.mover.MoverProcess;
import io.rebalance.mover.PhaseHooks;
import io.rebalance.mover.RunPlanner;
import io.rebalance.mover.RunState;
import io.rebalance.mover.RunStatus;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * {@code rebalance demo}: a realistic migration end to end on local defaults. It generates a room_events table
 * (ULID ids over many hours), copies it into DynamoDB Local running in this process, checks the result, and shows
 * the run's status. Postgres and Redis come from the configuration (localhost by default) or, when absent and a
 * Docker engine runs, from Testcontainers. It grows with the project: verify, tail and cutover join it as they land.
 */
@Command(name = "demo", description = "Generate a room_events table and migrate it into DynamoDB Local, end to end.")
final class DemoCommand implements Callable<Integer> {
    static final String TABLE = "demo_room_events";

    @Mixin
    ConfigOptions options;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--rows", description = "Rows to generate (default 200000).")
    long rows = 200_000;

    @Option(names = "--hours", description = "Hours the rows spread over, one slot each (default 120).")
    int hours = 120;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        MigrationConfig base = options.load();
        out.println("1. services");
        String jdbc = LocalServices.postgres(base.source().jdbcUrl(), out::println);
        String redis = LocalServices.redis(base.redis().url(), out::println);
        Map<String, String> demo = new HashMap<>(options.overrides);
        demo.put("source.jdbcUrl", jdbc);
        demo.put("source.table", TABLE);
        demo.put("target.table", TABLE);
        demo.put("redis.url", redis);
        demo.put("redis.prefix", "demo:");
        options.overrides = demo;
        MigrationConfig config = options.load();
        out.println("   postgres " + io.rebalance.core.config.Redact.url(jdbc) + ", redis "
                + io.rebalance.core.config.Redact.url(redis) + ", dynamodb "
                + (config.target().embedded()
                        ? "embedded (DynamoDB Local in this process)"
                        : config.target().endpoint()));

        out.printf("2. generating %,d room_events rows over %d hours into %s%n", rows, hours, TABLE);
        long t0 = System.nanoTime();
        try (Connection c = new SourceSession(config.source()).openForPreflight();
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + TABLE);
            RoomEventsGenerator.create(c, TABLE, rows, Instant.now().truncatedTo(ChronoUnit.HOURS), hours, 7);
        }
        out.printf("   done in %.1f s%n", (System.nanoTime() - t0) / 1e9);

        try (Connections c = new Connections(config, config.mover().workers() + 6)) {
            RunState run = c.runState();
            for (String k : RedisScan.keys(c.redis(), config.redis().prefix()))
                c.redis().del(k); // a fresh demo run
            out.println("3. copying with " + config.mover().workers() + " workers (state in Redis under demo:)");
            var prepared = new RunPlanner(config).prepare(run, c.dynamo(), c.dynamoWhere(), true);
            run.compareAndSet(RunStatus.NOT_STARTED, RunStatus.TO_START);
            MoverProcess process =
                    new MoverProcess(config, prepared.table(), prepared.plan(), c.redis(), c.dynamo(), PhaseHooks.NONE);
            long t1 = System.nanoTime();
            RunStatus end;
            try (ProgressReporter progress = ProgressReporter.start(run, out, true)) {
                end = process.run();
                progress.finish(end);
            }
            double seconds = (System.nanoTime() - t1) / 1e9;
            out.printf("   %s in %.1f s, %,.0f rows/s%n", end, seconds, rows / seconds);

            out.println("4. checking DynamoDB against Postgres");
            long items = io.rebalance.core.dynamo.TargetTable.countItems(c.dynamo(), TABLE, 4);
            int sampled = sampleCheck(config, prepared, c);
            out.printf("   %,d items for %,d rows; %d sampled rows identical to their items%n", items, rows, sampled);
            out.println("   (`rebalance verify` will prove every slot by fingerprint once it lands)");

            out.println("5. status");
            StatusCommand.render(StatusCommand.view(config, c), out);
            int keys = RedisScan.keys(c.redis(), config.redis().prefix()).size();
            out.println("   " + keys + " Redis keys remain for "
                    + prepared.plan().range().count() + " slots (finished slots are compacted)");
            return items == rows && end == RunStatus.FINISHED ? 0 : io.rebalance.core.ErrorCode.INTERNAL.exitCode();
        }
    }

    /** Re-reads random pages and compares each row's item with what DynamoDB holds. @return rows compared */
    private static int sampleCheck(MigrationConfig config, RunPlanner.Prepared prepared, Connections c)
            throws Exception {
        var table = prepared.table();
        String pk = new RunPlanner(config).partitionKey(table);
        RowCodec codec = table.codec(config.target());
        PageReader reader = new PageReader(table);
        Random random = new Random();
        var range = prepared.plan().range();
        int compared = 0;
        try (Connection pg = new SourceSession(config.source()).open()) {
            for (int i = 0; i < 10; i++) {
                var slot = range.newest();
                for (int k = random.nextInt((int) range.count()); k > 0; k--) slot = slot.older();
                List<SourceRow> page = reader.page(pg, slot, null, 100);
                for (SourceRow row : page) {
                    Map<String, AttributeValue> want = codec.encode(row);
                    Map<String, AttributeValue> got = c.dynamo()
                            .getItem(b -> b.tableName(TABLE)
                                    .key(Map.of(pk, want.get(pk)))
                                    .consistentRead(true))
                            .item();
                    if (!want.equals(got)) {
                        throw new IllegalStateException("row " + row.key() + " differs from its DynamoDB item: " + got);
                    }
                    compared++;
                }
            }
        }
        return compared;
    }
}
