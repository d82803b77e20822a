package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.redis.RedisConnector;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.PrivateRedis;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;

/**
 * The cutover commands check the Redis they would keep the route in: on one without an append-only file (a restart
 * loses the route, the journal and the token counter) {@code --prepare}, the cutover and a rollback refuse with the
 * setting, its value and the fix, and write nothing, unless the risk is accepted; an evicting Redis is always
 * refused; {@code cutover --dry-run} shows both checks. {@code copy} warns on such a Redis and says what a restart
 * would cost it. The Redis is the test's own (redis-server on a loopback port), so the shared one is never changed.
 */
class RedisFitnessIT {
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("redisfit");
    private final String prefix = SharedServices.unique("rf") + ":";

    @Test
    void cutoverCommandsRefuseARedisThatCouldLoseTheRouteAndCopyWarns() throws Exception {
        try (PrivateRedis volatileRedis = PrivateRedis.start("--appendonly", "no", "--save", "");
                UnifiedJedis redis = RedisConnector.connect(volatileRedis.url, 2)) {
            try (Connection pg = services.postgres()) {
                RoomEventsGenerator.create(pg, table, 200, Instant.parse("2024-10-20T04:00:00Z"), 2, 3);
            }
            Map<String, String> settings = TailedTable.settings(services, table, prefix);
            settings.put("redis.url", volatileRedis.url);
            List<String> flags = TailedTable.args(settings);

            CliRun prepare = CliRun.of(flags, "cutover", "--prepare");
            assertThat(prepare.exitCode()).as(prepare.err()).isEqualTo(31);
            assertThat(prepare.err())
                    .contains("FAILED redis persistence: Redis keeps no append-only file (aof_enabled:0)")
                    .contains("CONFIG SET appendonly yes")
                    .contains("--allow-redis-without-aof")
                    .contains("Nothing was changed");
            assertThat(redis.dbSize()).as("keys written by a refused --prepare").isZero();
            assertThat(fenceTableExists())
                    .as("the Postgres fence of a refused --prepare")
                    .isFalse();

            CliRun noTarget = CliRun.of(flags, "cutover", "--prepare", "--allow-redis-without-aof");
            assertThat(noTarget.exitCode()).as(noTarget.err()).isEqualTo(17);
            assertThat(noTarget.err())
                    .contains("DynamoDB table '" + table + "' (target.table) does not exist")
                    .contains("rebalance copy --create-table")
                    .contains("Nothing was changed");
            assertThat(fenceTableExists())
                    .as("the Postgres fence of a --prepare without a target")
                    .isFalse();

            CliRun copy = CliRun.of(flags, "copy", "--no-concurrent-writers", "--no-progress", "--create-table");
            assertThat(copy.exitCode()).as(copy.err()).isZero();
            assertThat(copy.err())
                    .contains("warning: Redis keeps no append-only file (aof_enabled:0) and has no replica: if it"
                            + " restarts, the copy's progress is lost")
                    .contains("rebalance verify --all --repair");

            CliRun rollback = CliRun.of(flags, "cutover", "--rollback");
            assertThat(rollback.exitCode()).as(rollback.err()).isEqualTo(31);
            assertThat(rollback.err()).contains("FAILED redis persistence");

            CliRun dry = CliRun.of(flags, "cutover", "--dry-run");
            assertThat(dry.exitCode()).isEqualTo(31);
            assertThat(dry.out())
                    .contains("FAILED redis persistence: Redis keeps no append-only file")
                    .contains("ok     redis eviction: maxmemory-policy noeviction");

            CliRun accepted = CliRun.of(flags, "cutover", "--prepare", "--allow-redis-without-aof");
            assertThat(accepted.exitCode()).as(accepted.err()).isZero();
            assertThat(accepted.err()).contains("warning: RISK ACCEPTED by --allow-redis-without-aof");
            assertThat(accepted.out()).contains("prepared: route: SOURCE");
            assertThat(CliRun.of(flags, "cutover", "--dry-run", "--allow-redis-without-aof")
                            .out())
                    .contains("ok     redis persistence: RISK ACCEPTED by --allow-redis-without-aof");

            redis.configSet("maxmemory-policy", "allkeys-lru");
            CliRun evicting = CliRun.of(flags, "cutover", "--dry-run", "--allow-redis-without-aof");
            assertThat(evicting.out())
                    .contains("FAILED redis eviction: Redis may evict keys to make room (maxmemory-policy allkeys-lru)")
                    .contains("CONFIG SET maxmemory-policy noeviction");
            assertThat(CliRun.of(flags, "cutover", "--rollback", "--allow-redis-without-aof")
                            .err())
                    .as("eviction is never accepted")
                    .contains("FAILED redis eviction");

            redis.configSet("maxmemory-policy", "noeviction");
            redis.configSet("appendonly", "yes");
            CliRun fit = CliRun.of(flags, "cutover", "--dry-run");
            assertThat(fit.out())
                    .contains("ok     redis persistence: append-only file on")
                    .contains("ok     redis eviction: maxmemory-policy noeviction");

        } finally {
            CutoverTables.drop(services, table);
        }
    }

    /**
     * Managed Redis keeps no append-only file and cannot be told to (CONFIG is disabled): a replica that acknowledges
     * writes to the route's node ({@code WAIT}, measured by the check) stands in for it, and so does a store declared
     * durable ({@code redis.durable: true}, for MemoryDB). A replica that stalls (frozen, still connected) does not
     * acknowledge and is refused, as is a Redis with neither, naming every way out; and the check leaves no key.
     */
    @Test
    void anAcknowledgingReplicaOrADeclaredDurableStoreStandsInForTheAppendOnlyFile() throws Exception {
        try (PrivateRedis primary = PrivateRedis.start("--appendonly", "no", "--save", "");
                UnifiedJedis redis = RedisConnector.connect(primary.url, 2)) {
            try (Connection pg = services.postgres()) {
                RoomEventsGenerator.create(pg, table, 200, Instant.parse("2024-10-20T04:00:00Z"), 2, 3);
            }
            Map<String, String> settings = TailedTable.settings(services, table, prefix);
            settings.put("redis.url", primary.url);
            List<String> flags = TailedTable.args(settings);
            try (PrivateRedis replica = PrivateRedis.start(
                    "--appendonly", "no", "--save", "", "--replicaof", "127.0.0.1", Integer.toString(primary.port()))) {
                // online, not only connected: a replica still waiting for its first sync acknowledges nothing
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> redis.info("replication")
                        .contains("state=online"));
                CliRun copy = CliRun.of(flags, "copy", "--no-concurrent-writers", "--no-progress", "--create-table");
                assertThat(copy.exitCode()).as(copy.err()).isZero();
                assertThat(copy.err())
                        .as("a replica to fail over to: no warning")
                        .doesNotContain("append-only");

                CliRun prepared = CliRun.of(flags, "cutover", "--prepare");
                assertThat(prepared.exitCode()).as(prepared.err()).isZero();
                assertThat(prepared.err()).doesNotContain("RISK ACCEPTED");
                CliRun dry = CliRun.of(flags, "cutover", "--dry-run");
                assertThat(dry.out())
                        .containsPattern("ok     redis persistence: no append-only file, but 1 replica\\(s\\)"
                                + " \\(connected_slaves\\) and one acknowledged a write to the route's node in \\d+ ms"
                                + " \\(WAIT 1\\)");
                assertThat(redis.exists(prefix + "{" + table + "}:replica:probe"))
                        .as("the probe's key")
                        .isFalse();

                replica.pause(); // still connected, answering nothing: WAIT times out
                try {
                    CliRun stalled = CliRun.of(flags, "cutover", "--rollback");
                    assertThat(stalled.exitCode()).as(stalled.err()).isEqualTo(31);
                    assertThat(stalled.err())
                            .contains("FAILED redis persistence: Redis keeps no append-only file (aof_enabled:0) and"
                                    + " no replica acknowledged a write within 4 s (WAIT 1)");
                } finally {
                    replica.resume();
                }
            }
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> redis.info("replication")
                    .contains("connected_slaves:0"));
            CliRun neither = CliRun.of(flags, "cutover", "--dry-run");
            assertThat(neither.exitCode()).isEqualTo(31);
            assertThat(neither.out())
                    .contains("FAILED redis persistence: Redis keeps no append-only file (aof_enabled:0) and has no"
                            + " replica (connected_slaves:0)")
                    .contains("turn on the append-only file")
                    .contains("or run a replica with automatic failover")
                    .contains("or set redis.durable: true")
                    .contains("--allow-redis-without-aof");

            List<String> durable = new java.util.ArrayList<>(flags);
            durable.addAll(List.of("--set", "redis.durable=true"));
            assertThat(CliRun.of(durable, "cutover", "--dry-run").out())
                    .contains("ok     redis persistence: redis.durable: true: taken as said");
        } finally {
            CutoverTables.drop(services, table);
        }
    }

    private boolean fenceTableExists() throws Exception {
        try (Connection pg = services.postgres();
                ResultSet rs = pg.createStatement().executeQuery("SELECT to_regclass('public." + table + "_fence')")) {
            rs.next();
            return rs.getString(1) != null;
        }
    }
}
