package io.rebalance.ops.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.CopyStatus;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.ops.Connections;
import io.rebalance.protocol.handoff.ReverseStatus;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.testkit.TestMigration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.SetParams;

/**
 * The status view, read directly from what each part publishes in Redis: the keeper's progress, the tail's status
 * and lease, the reverse stream's report and the route; each field typed as docs/cli.md documents it.
 */
class StatusViewIT {
    @Test
    void eachPartsPublishedStateReachesTheViewTyped() throws Exception {
        try (TestMigration m = new TestMigration("status")) {
            MigrationConfig config = m.config();
            Keyspace keys = m.keyspace();
            UnifiedJedis redis = m.redis();
            try (Connections c = new Connections(config, 2)) {
                c.runState().setStatus(RunStatus.IN_PROGRESS);
                // a copy process beating: with none left, status shows no rate and no ETA (StatusTruthIT)
                c.runState().heartbeat("host:1:ab", "{\"host\": \"host\", \"pid\": 1, \"workers\": 4, \"rows\": 1200}");
                c.runState()
                        .writeProgress(new CopyStatus(
                                true,
                                RunStatus.IN_PROGRESS.name(),
                                1_200,
                                300,
                                40,
                                24,
                                6,
                                4,
                                "20241019.20",
                                "host:1:ab",
                                System.currentTimeMillis()));
                redis.hset(
                        keys.tail().status(),
                        Map.of(
                                "updated_ms", Long.toString(System.currentTimeMillis()),
                                "lag_ms", "35",
                                "events_per_sec", "12.5",
                                "retention_warning", "false",
                                "applied_lsn", "0/16B3748"));
                redis.set(
                        keys.tail().lease(),
                        "tail-host:1:cd#3",
                        SetParams.setParams().px(30_000));
                new RoutingTable(redis, keys).create(config.cutover().scope(), RouteStatus.TARGET, 2);
                new ReverseStatus(redis, keys.handoff()).round(ReverseStatus.STREAMING, 120, 9, 1, 2, "");

                Map<String, Object> v = StatusView.of(config, c);

                assertThat(v.get("status")).isEqualTo("IN_PROGRESS");
                Map<?, ?> rows = (Map<?, ?>) v.get("rows");
                assertThat(rows.get("perSecond")).isEqualTo(300L);
                assertThat(rows.get("etaSeconds")).isEqualTo(40L);
                assertThat(((Map<?, ?>) v.get("slots")).get("watermark")).isEqualTo("20241019.20");
                Map<?, ?> tail = (Map<?, ?>) v.get("tail");
                assertThat(tail.get("running")).isEqualTo(true);
                assertThat(tail.get("leaseHolder")).isEqualTo("tail-host:1:cd#3");
                assertThat(tail.get("lag_ms")).isEqualTo(35L);
                assertThat(tail.get("events_per_sec")).isEqualTo(12.5);
                assertThat(tail.get("retention_warning")).isEqualTo(false);
                Map<?, ?> reverse = (Map<?, ?>) ((Map<?, ?>) v.get("routing")).get("reverseStream");
                assertThat(reverse.get("state")).isEqualTo("streaming");
                assertThat(reverse.get("lagMs")).isEqualTo(120L);
                assertThat(reverse.get("applied")).isEqualTo(9L);
                assertThat(reverse.get("lastError")).isEqualTo("");

                new ReverseStatus(redis, keys.handoff()).failed("DynamoDbException: throttled");
                Map<?, ?> failing =
                        (Map<?, ?>) ((Map<?, ?>) StatusView.of(config, c).get("routing")).get("reverseStream");
                assertThat(failing.get("state")).isEqualTo("failing");
                assertThat(failing.get("lastError")).isEqualTo("DynamoDbException: throttled");

                redis.del(keys.tail().lease()); // the tail stopped: its last status stays, but it no longer runs
                assertThat(((Map<?, ?>) StatusView.of(config, c).get("tail")).get("running"))
                        .isEqualTo(false);
            } finally {
                for (String k : redis.keys(keys.prefix() + "*")) redis.del(k);
            }
        }
    }
}
