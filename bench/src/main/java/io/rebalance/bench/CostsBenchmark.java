package io.rebalance.bench;

import com.sun.management.OperatingSystemMXBean;
import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.slot.KeyType;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.local.RoomEventsWriter;
import io.rebalance.testkit.PrivateRedisCluster;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import redis.clients.jedis.Jedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * What a unit of work costs, each beside its baseline, for docs/capacity.md: per 1,000 rows copied, the copy
 * processes' CPU (against the seed note's single loop, a raw SDK copy in this JVM), Redis commands (and per slot),
 * Postgres statements and Postgres CPU; the WAL the copy writes, and the WAL an application's writes add per hour at
 * a given rate (what a stopped tail's slot retains); verify's source CPU per 1,000 rows (against one md5 of every
 * row); and how the coordination load grows with N = 1, 2, 4, 8 copy processes coordinated by one Redis, by a
 * 3-primary Redis Cluster, and by Postgres. Medians of the repetitions.
 *
 * <p>Usage: {@code CostsBenchmark <dynamodb-endpoint> <rows> <hours> <reps> <writes-per-second> <launcher>}
 */
public final class CostsBenchmark {
    private static final int[] PROCESSES = {1, 2, 4, 8};
    private static final int WORKERS_EACH = 2;
    private static final String SOURCE = "bench_costs";
    private static final String WRITTEN = "bench_costs_written";

    /** One measured phase: its rows, slots, seconds and what each counter moved by. */
    record Phase(
            long rows,
            int slots,
            double seconds,
            double clientCpu,
            long redisCommands,
            long statements,
            double postgresCpu,
            long walBytes) {
        double per1000(double x) {
            return x * 1000.0 / rows;
        }
    }

    public static void main(String[] args) throws Exception {
        String endpoint = args[0];
        int rows = Integer.parseInt(args[1]);
        int hours = Integer.parseInt(args[2]);
        int reps = Integer.parseInt(args[3]);
        int writesPerSecond = Integer.parseInt(args[4]);
        String launcher = args[5];
        MigrationConfig config = new ConfigLoader(System.getenv())
                .load(null, Map.of("source.table", SOURCE, "target.endpoint", endpoint));
        System.out.printf("generating %,d rows over %d hours in %s%n", rows, hours, SOURCE);
        try (Connection c = new SourceSession(config.source()).open();
                Statement st = c.createStatement()) {
            st.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); // loaded by bench/lib.sh
            st.execute("DROP TABLE IF EXISTS " + SOURCE);
            RoomEventsGenerator.create(c, SOURCE, rows, Instant.parse("2024-10-20T00:00:00Z"), hours, 5);
            st.execute("VACUUM ANALYZE " + SOURCE);
            // the application's writes go to a table of their own: the copied one must stay as copied for verify
            st.execute("DROP TABLE IF EXISTS " + WRITTEN);
            RoomEventsGenerator.create(c, WRITTEN, 10_000, Instant.parse("2024-10-20T00:00:00Z"), hours, 6);
        }
        Map<String, List<Phase>> phases = new LinkedHashMap<>();
        List<Double> walPerWrite = new ArrayList<>();
        try (DynamoDbClient dynamo = DynamoClients.create(config.target(), endpoint, 16, List.of());
                PrivateRedisCluster cluster = PrivateRedisCluster.start(3, 0, "--save", "", "--appendonly", "no");
                Connection pg = new SourceSession(config.source()).open()) {
            SourceTable table = SourceTable.inspect(pg, config);
            RowCodec codec = table.codec(config.target());
            for (int rep = 1; rep <= reps; rep++) {
                String target = SOURCE + "_naive_" + rep;
                create(dynamo, target, config);
                Counters before = Counters.read(pg, List.of());
                double own = ownCpu();
                long t0 = System.nanoTime();
                CopyBenchmark.naiveLoop(config, codec, dynamo, SOURCE, target);
                double seconds = (System.nanoTime() - t0) / 1e9;
                phases.computeIfAbsent("raw SDK loop (one thread, this JVM)", k -> new ArrayList<>())
                        .add(Counters.read(pg, List.of()).since(before, rows, hours, seconds, ownCpu() - own));
                for (String coordinator : List.of("redis", "cluster", "postgres")) {
                    for (int n : PROCESSES) {
                        String name = coordinator + ", " + n + " process" + (n == 1 ? "" : "es");
                        phases.computeIfAbsent(name, k -> new ArrayList<>())
                                .add(copy(
                                        pg,
                                        dynamo,
                                        config,
                                        cluster,
                                        coordinator,
                                        n,
                                        rep,
                                        rows,
                                        hours,
                                        launcher,
                                        endpoint));
                    }
                }
                walPerWrite.add(walPerWrite(pg, config, writesPerSecond, hours));
                phases.computeIfAbsent("verify --all", k -> new ArrayList<>())
                        .add(verify(pg, launcher, endpoint, rep, rows, hours));
                phases.computeIfAbsent("md5(row::text) of every row", k -> new ArrayList<>())
                        .add(md5Scan(pg, rows, hours));
                System.out.printf("rep %d of %d done%n", rep, reps);
            }
        }
        CostsReport.print(phases, walPerWrite, writesPerSecond, rows, hours, WORKERS_EACH);
    }

    /** A run's prefix of its own: Redis keeps what earlier invocations left. */
    private static String prefix(String target) {
        return "bench:" + STARTED + ":" + target + ":";
    }

    private static final long STARTED = System.currentTimeMillis();

    private static void create(DynamoDbClient dynamo, String table, MigrationConfig config) {
        TargetTable.create(dynamo, table, "id", KeyType.TEXT, SlotIndex.of(config.target()));
    }

    /** {@code n} copy processes of the source into a fresh table, coordinated by {@code coordinator}. */
    private static Phase copy(
            Connection pg,
            DynamoDbClient dynamo,
            MigrationConfig config,
            PrivateRedisCluster cluster,
            String coordinator,
            int n,
            int rep,
            int rows,
            int hours,
            String launcher,
            String endpoint)
            throws Exception {
        String target = SOURCE + "_" + coordinator + "_" + n + "_" + rep;
        String prefix = prefix(target);
        String schema = "bench_costs_" + n + "_" + rep;
        create(dynamo, target, config);
        List<String> flags = new ArrayList<>();
        List<String> redisUrls = new ArrayList<>();
        switch (coordinator) {
            case "redis" -> {
                flags.addAll(List.of("--set", "redis.url=redis://127.0.0.1:6379"));
                redisUrls.add("redis://127.0.0.1:6379");
            }
            case "cluster" -> {
                flags.addAll(List.of("--set", "redis.url=" + cluster.url, "--set", "redis.mode=cluster"));
                cluster.nodes.forEach(node -> redisUrls.add(node.url));
            }
            default ->
                flags.addAll(List.of(
                        "--set", "mover.coordinator=postgres",
                        "--set", "coordinator.schema=" + schema,
                        "--set", "redis.url=redis://127.0.0.1:1"));
        }
        Counters before = Counters.read(pg, redisUrls);
        long t0 = System.nanoTime();
        List<Process> processes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            List<String> cmd = CopyBenchmark.copyCommand(launcher, endpoint, SOURCE, target, prefix, WORKERS_EACH);
            cmd.addAll(flags);
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.environment().put("REBALANCE_JAVA_OPTS", "-Xmx512m");
            processes.add(pb.redirectErrorStream(true)
                    .redirectOutput(new File("bench/results/" + target + "-" + i + ".log"))
                    .start());
        }
        double[] cpu = new double[n];
        for (int i = 0; i < n; i++) {
            Process p = processes.get(i);
            while (!p.waitFor(200, TimeUnit.MILLISECONDS))
                for (int j = 0; j < n; j++)
                    cpu[j] = Math.max(
                            cpu[j], CopyBenchmark.cpuSeconds(processes.get(j).pid()));
            if (p.exitValue() != 0)
                throw new IllegalStateException(
                        "rebalance copy exited " + p.exitValue() + "; see bench/results/" + target + "-" + i + ".log");
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        double clientCpu = 0;
        for (double c : cpu) clientCpu += c;
        Phase phase = Counters.read(pg, redisUrls).since(before, rows, hours, seconds, clientCpu);
        if (coordinator.equals("postgres")) {
            try (Statement st = pg.createStatement()) {
                st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            }
        }
        return phase;
    }

    /**
     * WAL bytes per application write: 20 seconds' worth of inserts, updates and deletes at {@code perSecond},
     * nothing else running, the WAL position before and after.
     */
    private static double walPerWrite(Connection pg, MigrationConfig config, int perSecond, int hours)
            throws Exception {
        long before = Counters.wal(pg);
        long writes;
        try (RoomEventsWriter writer = new RoomEventsWriter(
                config.source().jdbcUrl(),
                config.source().user(),
                config.source().password(),
                WRITTEN,
                Instant.parse("2024-10-20T00:00:00Z"),
                hours)) {
            writer.start(2, perSecond, 11);
            // a window of 20 seconds' writes at the rate asked, counted rather than timed
            long window = 20L * perSecond;
            Awaitility.await()
                    .atMost(Duration.ofSeconds(120))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> writer.writes() >= window);
            writer.stop();
            writes = writer.writes();
        }
        return (double) (Counters.wal(pg) - before) / writes;
    }

    /** {@code rebalance verify --all} of the Redis-coordinated single process's copy: the source's side. */
    private static Phase verify(Connection pg, String launcher, String endpoint, int rep, int rows, int hours)
            throws Exception {
        String target = SOURCE + "_redis_1_" + rep;
        Counters before = Counters.read(pg, List.of());
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(
                        launcher,
                        "verify",
                        "--all",
                        "--set",
                        "source.table=" + SOURCE,
                        "--set",
                        "target.table=" + target,
                        "--set",
                        "target.endpoint=" + endpoint,
                        "--set",
                        "redis.prefix=" + prefix(target))
                .redirectErrorStream(true)
                .redirectOutput(new File("bench/results/" + target + "-verify.log"))
                .start();
        double cpu = 0;
        while (!p.waitFor(200, TimeUnit.MILLISECONDS)) cpu = Math.max(cpu, CopyBenchmark.cpuSeconds(p.pid()));
        if (p.exitValue() != 0)
            throw new IllegalStateException(
                    "verify exited " + p.exitValue() + "; see bench/results/" + target + "-verify.log");
        return Counters.read(pg, List.of()).since(before, rows, hours, (System.nanoTime() - t0) / 1e9, cpu);
    }

    /** The baseline of verify's source cost: one md5 of every row's text, in one statement. */
    private static Phase md5Scan(Connection pg, int rows, int hours) throws Exception {
        Counters before = Counters.read(pg, List.of());
        long t0 = System.nanoTime();
        try (Statement st = pg.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(md5(t::text)) FROM " + SOURCE + " t")) {
            rs.next();
        }
        return Counters.read(pg, List.of()).since(before, rows, hours, (System.nanoTime() - t0) / 1e9, 0);
    }

    private static double ownCpu() {
        return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e9;
    }

    /** The counters read before and after a phase: Redis commands, Postgres statements, Postgres CPU, WAL. */
    record Counters(long redisCommands, long statements, double postgresCpu, long wal) {
        static Counters read(Connection pg, List<String> redisUrls) throws Exception {
            long commands = 0;
            for (String url : redisUrls) {
                try (Jedis j = new Jedis(URI.create(url))) {
                    for (String line : j.info("stats").split("\r?\n"))
                        if (line.startsWith("total_commands_processed:"))
                            commands += Long.parseLong(
                                    line.substring(line.indexOf(':') + 1).trim());
                }
            }
            long statements;
            try (Statement st = pg.createStatement();
                    ResultSet rs = st.executeQuery("SELECT coalesce(sum(calls), 0)::int8 FROM pg_stat_statements")) {
                rs.next();
                statements = rs.getLong(1);
            }
            return new Counters(
                    commands, statements, CpuMeter.sample().seconds().get("Postgres"), wal(pg));
        }

        static long wal(Connection pg) throws Exception {
            try (Statement st = pg.createStatement();
                    ResultSet rs = st.executeQuery("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::int8")) {
                rs.next();
                return rs.getLong(1);
            }
        }

        Phase since(Counters before, long rows, int slots, double seconds, double clientCpu) {
            return new Phase(
                    rows,
                    slots,
                    seconds,
                    clientCpu,
                    redisCommands - before.redisCommands,
                    statements - before.statements,
                    postgresCpu - before.postgresCpu,
                    wal - before.wal);
        }
    }

    private CostsBenchmark() {}
}
