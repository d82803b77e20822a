package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.sim.AppSimulator;
import io.rebalance.sim.CutoverCycles;
import io.rebalance.testkit.PrivateRedis;
import io.rebalance.testkit.PrivateRedisCluster;
import io.rebalance.testkit.RoomEventsComparison;
import io.rebalance.testkit.SharedServices;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.ScanParams;

/**
 * The whole migration on a Redis Cluster of three primaries ({@code redis.mode: cluster}, the URL listing seed
 * nodes): the tail streams, {@code cutover --prepare}, {@code copy}, {@code verify --all}, two cutovers and
 * rollbacks with an application writing through the guard and reading through the router, {@code status}, and
 * {@code reset}. The run's keys spread over the primaries (every script's keys in one slot, or the cluster would
 * refuse it with CROSSSLOT), the stores end equal row by row with every acknowledged write, and reset leaves no key
 * of the run on any node.
 *
 * <p>The table's name is chosen so that its scope's hash tag lives on another primary than the tail's {@code {cdc}}:
 * which primaries hold a run's keys once the keeper has compacted the slots' keys away must not hang on the hash
 * of a random name.
 */
class RedisClusterIT {
    private final SharedServices services = SharedServices.get();
    private final String prefix = SharedServices.unique("cl") + ":";

    @Test
    void copyTailVerifyCutoverRollbackAndResetOnThreePrimaries() throws Exception {
        try (PrivateRedisCluster cluster = PrivateRedisCluster.start(3, 0, "--appendonly", "yes")) {
            String table = nameOnAnotherPrimaryThan(cluster, "cdc");
            Map<String, String> settings = TailedTable.settings(services, table, prefix);
            settings.put("redis.url", cluster.url);
            settings.put("redis.mode", "cluster");
            // three primaries, the tail and the application share two cores: after the first cycle's PRE_VERIFY
            // (50-100 s under the application's writes) the tail's catch-up and the window's compare can pass 5 s.
            // What this test proves is the cluster's keyspace; the write-block bound is CutoverCyclesIT's.
            settings.put("cutover.maxWriteBlock", "15s");
            List<String> args = TailedTable.args(settings);
            try (TailedTable t = new TailedTable(services, table, settings, 2_000, 11)) {
                CutoverCycles setup = new CutoverCycles(args, null, System.out, RebalanceCommand::execute);
                CutoverCycles.Command prepared = setup.command(List.of("cutover", "--prepare"));
                assertThat(prepared.exitCode()).as(prepared.output()).isZero();
                CutoverCycles.Command copied = setup.command(List.of("copy", "--no-progress"));
                assertThat(copied.exitCode()).as(copied.output()).isZero();
                CutoverCycles.Command verified = setup.command(List.of("verify", "--all"));
                assertThat(verified.exitCode()).as(verified.output()).isZero();
                Awaitility.await()
                        .atMost(Duration.ofSeconds(30))
                        .until(() ->
                                setup.command(List.of("cutover", "--dry-run")).exitCode() == 0);
                assertThat(keysPerNode(cluster))
                        .as("the run's keys on each primary")
                        .filteredOn(n -> n > 0)
                        .hasSizeGreaterThanOrEqualTo(2);

                try (AppSimulator app = new AppSimulator(t.config, t.source, t.redis, t.dynamo, t.guard());
                        PrintStream report =
                                new PrintStream(new FileOutputStream("target/redis-cluster-cycles.txt"), true)) {
                    app.start(AppSimulator.Load.acceptance().withUpdateShare(0.9), 13);
                    List<CutoverCycles.Cycle> cycles =
                            new CutoverCycles(args, app, report, RebalanceCommand::execute).run(2, 250);
                    assertThat(cycles).hasSize(2);
                    for (CutoverCycles.Cycle c : cycles) {
                        CutoverTables.assertCleanCycle(c, app);
                        CutoverTables.assertConsistentAfter(c);
                    }
                    assertThat(app.staleReads()).isEmpty();
                }
                CliRun status = CliRun.of(args, "status");
                assertThat(status.exitCode()).as(status.err()).isZero();
                assertThat(status.out()).contains(table + ": SOURCE, read postgres, write postgres");
                CutoverCycles.Command again = setup.command(List.of("verify", "--all"));
                assertThat(again.exitCode()).as(again.output()).isZero();
                try (Connection pg = services.postgres()) {
                    assertThat(RoomEventsComparison.differences(pg, table, t.dynamo, table))
                            .isEmpty();
                }
                t.stopTail();
                CliRun reset = CliRun.of(args, "reset", "--forget", "copy,tail,route", "--yes");
                assertThat(reset.exitCode()).as(reset.out() + reset.err()).isZero();
                assertThat(keysPerNode(cluster))
                        .as("keys left after reset: %s", reset.out())
                        .allSatisfy(n -> assertThat(n).isZero());
            }
        }
    }

    /** A fresh table name whose hash slot a different primary serves than {@code tag}'s. */
    private static String nameOnAnotherPrimaryThan(PrivateRedisCluster cluster, String tag) {
        long taken = primaryPort(cluster, tag);
        while (true) {
            String name = SharedServices.unique("cluster");
            if (primaryPort(cluster, name) != taken) return name;
        }
    }

    /** The port of the primary serving {@code tag}'s hash slot, from the cluster's own slot map. */
    private static long primaryPort(PrivateRedisCluster cluster, String tag) {
        try (Jedis j = new Jedis("127.0.0.1", cluster.nodes.get(0).port())) {
            long slot = j.clusterKeySlot(tag);
            for (Object range : j.clusterSlots()) {
                List<?> r = (List<?>) range;
                if ((Long) r.get(0) <= slot && slot <= (Long) r.get(1)) return (Long) ((List<?>) r.get(2)).get(1);
            }
            throw new IllegalStateException("no primary serves slot " + slot);
        }
    }

    /** How many of the run's keys each primary holds, by SCAN on each node itself. */
    private List<Long> keysPerNode(PrivateRedisCluster cluster) {
        return cluster.nodes.stream().map(n -> count(n, prefix)).toList();
    }

    private static long count(PrivateRedis node, String prefix) {
        try (Jedis j = new Jedis("127.0.0.1", node.port())) {
            long n = 0;
            String cursor = ScanParams.SCAN_POINTER_START;
            ScanParams match =
                    new ScanParams().match(prefix.replace("{", "\\{") + "*").count(1000);
            do {
                var r = j.scan(cursor, match);
                n += r.getResult().size();
                cursor = r.getCursor();
            } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
            return n;
        }
    }
}
