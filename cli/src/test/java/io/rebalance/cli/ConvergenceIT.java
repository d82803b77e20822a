package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.cdc.TailPreflight;
import io.rebalance.cdc.TailProgress;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.retry.Retrier;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.local.RoomEventsWriter;
import io.rebalance.mover.RunState;
import io.rebalance.mover.redis.RedisRunState;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.RoomEventsComparison;
import io.rebalance.testkit.SharedServices;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Issue 4's acceptance run, once per seed: writers change the table at a steady rate while the tail and two copy
 * processes run (the shaded jar, separate JVMs); at moments the seed picks, the tail and one copy process are
 * killed with SIGKILL and started again, and the other copy process is paused with SIGSTOP for longer than its lease,
 * then resumed. When the copy is FINISHED, the writers stopped and the tail has applied
 * everything and reconciled what it touched, {@code rebalance verify --all} reports MATCH for every slot, and the
 * test kit's row-by-row comparison (independent of the codec) finds no difference. Seeds 1..N, N from
 * {@code -Drebalance.convergence.seeds} (default 3: each seed costs the suite about 55 s here, and the suite must stay
 * under 45 minutes on CI; a soak run raises it, e.g. {@code -Drebalance.convergence.seeds=50}).
 */
class ConvergenceIT {
    // about 10-15 s of copying after the copies join, here; the seed's chaos comes within 11 s of their joining
    private static final int ROWS = 8_000;
    private static final int HOURS = 12;
    private static final Instant END = Instant.parse("2024-10-20T12:00:00Z");

    private final SharedServices services = SharedServices.get();

    static LongStream seeds() {
        return LongStream.rangeClosed(1, Long.getLong("rebalance.convergence.seeds", 3));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void tailAndCopyConvergeUnderWritesAndKills(long seed) throws Exception {
        String table = SharedServices.unique("conv");
        String prefix = table + ":";
        Random random = new Random(seed);
        try (Connection pg = services.postgres()) {
            RoomEventsGenerator.create(pg, table, ROWS, END, HOURS, seed);
        }
        List<Process> processes = new CopyOnWriteArrayList<>();
        ScheduledExecutorService chaos = Executors.newSingleThreadScheduledExecutor();
        AtomicInteger killed = new AtomicInteger();
        try (UnifiedJedis redis = services.redis();
                DynamoDbClient dynamo = services.dynamoClient();
                RoomEventsWriter writers = new RoomEventsWriter(services.jdbcUrl, "postgres", "", table, END, HOURS)) {
            Process[] tail = {start(table, prefix, "tail-0", "tail", "--create-table")};
            processes.add(tail[0]);
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> slot(table)
                    .active());
            writers.start(2, 200, seed);
            Process[] copies = {start(table, prefix, "copy-a", "copy"), start(table, prefix, "copy-b", "copy")};
            processes.addAll(List.of(copies));
            // the chaos is timed from the moment both copies have joined the run, so it lands inside the copy, not in
            // a JVM's start
            Awaitility.await()
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> joined(table, "copy-a") && joined(table, "copy-b"));

            // the seed picks when the tail and copy a die, and how long each stays dead
            chaos.schedule(
                    () -> {
                        tail[0].destroyForcibly(); // SIGKILL: no shutdown hook, the lease is left to expire
                        killed.incrementAndGet();
                        chaos.schedule(
                                () -> processes.add(tail[0] = start(table, prefix, "tail-1", "tail")),
                                random.nextInt(1500),
                                TimeUnit.MILLISECONDS);
                    },
                    1000 + random.nextInt(4000),
                    TimeUnit.MILLISECONDS);
            chaos.schedule(
                    () -> {
                        copies[0].destroyForcibly();
                        killed.incrementAndGet();
                        chaos.schedule(
                                () -> processes.add(copies[0] = start(table, prefix, "copy-a1", "copy")),
                                random.nextInt(1500),
                                TimeUnit.MILLISECONDS);
                    },
                    1000 + random.nextInt(4000),
                    TimeUnit.MILLISECONDS);

            // and when copy b is paused (SIGSTOP: the whole process, as a long GC pause or a suspended VM) for longer
            // than its lease: the others take its slot, and when it wakes its writes must not land (ADR 6)
            AtomicBoolean resumed = new AtomicBoolean();
            chaos.schedule(
                    () -> {
                        signal(copies[1], "STOP");
                        chaos.schedule(
                                () -> {
                                    signal(copies[1], "CONT");
                                    resumed.set(true);
                                },
                                3_500 + random.nextInt(2_000),
                                TimeUnit.MILLISECONDS);
                    },
                    1_500 + random.nextInt(4_000),
                    TimeUnit.MILLISECONDS);

            RunState run = new RedisRunState(redis, new Keyspace(prefix).run(), Retrier.standard());
            Awaitility.await()
                    .atMost(Duration.ofSeconds(180))
                    .until(() -> run.status() == RunStatus.FINISHED && killed.get() == 2 && resumed.get());
            assertThat(copies[1].waitFor(60, TimeUnit.SECONDS))
                    .as("the paused copy woke up and exited")
                    .isTrue();
            chaos.shutdown();
            assertThat(chaos.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
            long writesDuringCopy = writers.writes();
            writers.stop();
            assertThat(writesDuringCopy).as("writes raced the copy").isGreaterThan(200);

            // the tail has applied everything committed, and re-written every key the backfill could overwrite
            TailProgress progress = new TailProgress(redis, new Keyspace(prefix).tail());
            long committed = Lsn.parse(currentLsn());
            Awaitility.await()
                    .atMost(Duration.ofSeconds(90))
                    .until(() -> progress.applied().orElse(0) >= committed
                            && "0".equals(redis.hget(new Keyspace(prefix).tail().status(), "reconcile_pending")));

            List<String> verify = new ArrayList<>(List.of("verify", "--all"));
            verify.addAll(CliRun.base(services, table, prefix));
            CliRun verified = CliRun.of(verify.toArray(String[]::new));
            assertThat(verified.exitCode())
                    .as("verify: " + verified.out() + verified.err())
                    .isZero();
            assertThat(verified.out()).contains(HOURS + " slots: " + HOURS + " MATCH, 0 MISMATCH, 0 ERROR");
            try (Connection pg = services.postgres()) {
                assertThat(RoomEventsComparison.differences(pg, table, dynamo, table))
                        .isEmpty();
            }
        } finally {
            chaos.shutdownNow();
            for (Process p : processes) p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            cleanUp(table);
        }
    }

    /** Whether the copy process {@code name} has said it joins the run. */
    private static boolean joined(String table, String name) throws java.io.IOException {
        Path log = Path.of("target/" + table + "-" + name + ".log");
        return Files.exists(log) && Files.readString(log).contains(" joins run of ");
    }

    /** Sends {@code kill -SIGNAL} to a child process (Java has no SIGSTOP of its own). */
    private static void signal(Process p, String signal) {
        try {
            new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid()))
                    .start()
                    .waitFor(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("kill -" + signal + " " + p.pid() + " failed", e);
        }
    }

    private Process start(String table, String prefix, String name, String... command) {
        List<String> cmd = ShadedJar.java("384m");
        cmd.addAll(List.of(command));
        if (command[0].equals("copy")) cmd.add("--no-progress");
        for (String s : List.of(
                "tail.slotName=" + table,
                "tail.publication=" + table,
                "tail.leaseTtl=3s",
                "tail.heartbeat=1s",
                // small enough that the backlog after a kill drains in full batches, whose writes overlap the next
                // batch's (ChangeHandler): the kills then land between the two as well
                "tail.maxBatch=32",
                "mover.workers=2",
                "mover.pageSize=200",
                "mover.leaseTtl=3s",
                "mover.slotRetryDelay=500ms",
                "mover.keeperInterval=500ms",
                "mover.rateLimit=1500")) {
            cmd.add("--set");
            cmd.add(s);
        }
        cmd.addAll(CliRun.base(services, table, prefix));
        try {
            return new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(new File("target/" + table + "-" + name + ".log"))
                    .start();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private TailPreflight.SlotInfo slot(String table) throws Exception {
        try (Connection c = services.postgres()) {
            return TailPreflight.slot(c, table);
        }
    }

    private String currentLsn() throws Exception {
        try (Connection c = services.postgres();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT pg_current_wal_lsn()::text")) {
            rs.next();
            return rs.getString(1);
        }
    }

    private void cleanUp(String table) throws Exception {
        services.dropSlot(table);
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute("DROP PUBLICATION IF EXISTS " + table);
            st.execute("DROP TABLE IF EXISTS " + table);
        }
        try (DynamoDbClient d = services.dynamoClient()) {
            d.deleteTable(b -> b.tableName(table));
        } catch (RuntimeException ignored) {
            // the tail had not created it
        }
    }
}
