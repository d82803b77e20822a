package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.redis.RedisScan;
import io.rebalance.core.retry.Retrier;
import io.rebalance.mover.RunState;
import io.rebalance.mover.redis.RedisRunState;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.lock.SharedExclusiveLock;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.SetParams;

/** The small commands: config prints what is in force with secrets masked; reset forgets a run, carefully. */
class CommandsIT {
    private final SharedServices services = SharedServices.get();
    private final String prefix = SharedServices.unique("cmd") + ":";

    private CliRun run(String... words) {
        List<String> args = new ArrayList<>(List.of(words));
        args.addAll(CliRun.base(services, "t_cmd", prefix));
        return CliRun.of(args.toArray(String[]::new));
    }

    @Test
    void configShowsEveryLayerAndNeverASecret() throws Exception {
        List<String> args = new ArrayList<>(List.of("config"));
        args.addAll(CliRun.base(services, "t_cmd", prefix)); // first, so the flags below win
        args.addAll(List.of(
                "--set",
                "source.password=hunter2",
                "--set",
                "redis.url=redis://u:s3cret@127.0.0.1:6379",
                "--set",
                "source.jdbcUrl=jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres&password=jdbcpw9",
                "--set",
                "target.accessKeyId=AKIDEXAMPLE",
                "--set",
                "target.secretAccessKey=awsSecret7",
                "--set",
                "verify.jdbcUrl=jdbc:postgresql://replica:5432/postgres?password=standbyPw3",
                "--set",
                "coordinator.jdbcUrl=jdbc:postgresql://u:coordPw4@coord:5432/postgres",
                "--set",
                "mover.workers=5"));
        CliRun r = CliRun.of(args.toArray(String[]::new));
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out())
                .contains("workers: 5")
                .contains("prefix: \"" + prefix + "\"")
                .contains("password: \"***\"")
                .contains("password=***")
                .contains("secretAccessKey: \"***\"")
                .doesNotContain("hunter2")
                .doesNotContain("s3cret")
                .doesNotContain("jdbcpw9")
                .doesNotContain("standbyPw3")
                .doesNotContain("coordPw4")
                .doesNotContain("awsSecret7");
        assertThat(run("config", "--env").out()).contains("REBALANCE_SOURCE_JDBC_URL  (source.jdbcUrl)");
        args.add("--json");
        CliRun json = CliRun.of(args.toArray(String[]::new));
        assertThat(json.exitCode()).as(json.err()).isZero();
        JsonSchemas.assertValid("config", json.out());
        var tree = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json.out());
        assertThat(tree.path("mover").path("workers").isInt()).as(json.out()).isTrue();
        assertThat(tree.path("mover").path("workers").asInt()).isEqualTo(5);
        assertThat(tree.path("source").path("password").asText()).isEqualTo("***");
        assertThat(json.out())
                .doesNotContain("s3cret")
                .doesNotContain("jdbcpw9")
                .doesNotContain("standbyPw3")
                .doesNotContain("coordPw4")
                .doesNotContain("awsSecret7");
    }

    @Test
    void resetSaysWhatItWouldDeleteThenDeletesAndRefusesWhileProcessesRun() {
        try (UnifiedJedis redis = services.redis()) {
            RunState state = new RedisRunState(redis, new Keyspace(prefix).run(), Retrier.standard());
            state.setRateLimit(10);
            state.addRowsCopied(5);

            CliRun dry = run("reset");
            assertThat(dry.exitCode()).isZero();
            assertThat(dry.out()).contains("would delete 2 keys");
            assertThat(RedisScan.keys(redis, prefix)).hasSize(2);

            state.heartbeat("host:1:abcd", "{\"slots\":[]}"); // a live process
            assertThat(run("reset").out()).contains("would delete").contains("host:1:abcd");
            CliRun refused = run("reset", "--yes");
            assertThat(refused.exitCode()).isEqualTo(ErrorCode.RUN_CONFLICT.exitCode());
            assertThat(refused.err()).contains("host:1:abcd").contains("rebalance stop");
            state.leave("host:1:abcd");

            CliRun done = run("reset", "--yes");
            assertThat(done.exitCode()).isZero();
            assertThat(RedisScan.keys(redis, prefix)).isEmpty();
        }
    }

    @Test
    void resetRefusesWhileARouteExistsOrATailRunsUnlessToldWhatToForget() {
        try (UnifiedJedis redis = services.redis()) {
            new RedisRunState(redis, new Keyspace(prefix).run(), Retrier.standard()).addRowsCopied(5);
            RoutingTable routes = new RoutingTable(redis, new Keyspace(prefix));
            routes.create("room_events", RouteStatus.TARGET, 3);
            String otherRun = prefix + "xtra:status"; // a run under the prefix "<prefix>xtra:"
            redis.set(otherRun, "FINISHED");
            try {
                CliRun refused = run("reset", "--yes");
                assertThat(refused.exitCode()).isEqualTo(ErrorCode.RUN_CONFLICT.exitCode());
                assertThat(refused.err())
                        .contains("'room_events' has a route (TARGET")
                        .contains("rollback window is open")
                        .contains("--forget copy");
                assertThat(routes.get("room_events")).as("nothing deleted").isPresent();
                assertThat(RedisScan.keys(redis, prefix))
                        .contains(new Keyspace(prefix).run().rowsCopied());

                CliRun copyOnly = run("reset", "--forget", "copy", "--yes");
                assertThat(copyOnly.exitCode()).as(copyOnly.err()).isZero();
                assertThat(copyOnly.out())
                        .contains("deleted 1 keys")
                        .contains("(copy 1)")
                        .contains("1 keys under it");
                assertThat(RedisScan.keys(redis, prefix))
                        .doesNotContain(new Keyspace(prefix).run().rowsCopied());
                assertThat(routes.get("room_events")).as("the route stays").isPresent();

                String lease = new Keyspace(prefix).tail().lease();
                redis.set(lease, "tail-host:1:ab", SetParams.setParams().px(30_000)); // a tail runs
                // the dry run only counts, whatever runs (it was refused while a tail ran), and says --yes would not
                CliRun dryWhileTail = run("reset");
                assertThat(dryWhileTail.exitCode()).as(dryWhileTail.err()).isZero();
                assertThat(dryWhileTail.out())
                        .contains("would delete")
                        .contains("--yes is refused while")
                        .contains("a tail runs");
                CliRun tailRuns = run("reset", "--forget", "tail,route", "--yes");
                assertThat(tailRuns.exitCode()).isEqualTo(ErrorCode.RUN_CONFLICT.exitCode());
                assertThat(tailRuns.err()).contains("a tail runs").contains("tail-host:1:ab");
                redis.del(lease);

                CliRun told = run("reset", "--forget", "tail,route", "--yes");
                assertThat(told.exitCode()).as(told.err()).isZero();
                assertThat(routes.get("room_events")).isEmpty();
                assertThat(routes.scopes()).isEmpty();
                assertThat(redis.get(otherRun)).as("another run's key stays").isEqualTo("FINISHED");
            } finally {
                redis.del(otherRun);
            }
        }
    }

    @Test
    void rateSetsTheLimitAndSaysSoInJson() throws Exception {
        CliRun r = run("rate", "--json", "1500");
        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonSchemas.assertValid("rate", r.out());
        var tree = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out());
        assertThat(tree.path("rateLimit").isIntegralNumber()).isTrue();
        assertThat(tree.path("rateLimit").asLong()).isEqualTo(1500);
        assertThat(tree.path("prefix").asText()).isEqualTo(prefix);
        try (UnifiedJedis redis = services.redis()) {
            assertThat(new RedisRunState(redis, new Keyspace(prefix).run(), Retrier.standard()).rateLimit())
                    .isEqualTo(1500);
        }
        // --units sets the write-unit budget and leaves the rows/s limit as it is
        CliRun units = run("rate", "--json", "--units", "8000");
        assertThat(units.exitCode()).as(units.err()).isZero();
        JsonSchemas.assertValid("rate", units.out());
        var both = new com.fasterxml.jackson.databind.ObjectMapper().readTree(units.out());
        assertThat(both.path("rateLimit").asLong()).isEqualTo(1500);
        assertThat(both.path("writeUnits").asLong()).isEqualTo(8000);
        assertThat(run("rate", "--units", "0").out()).contains("write-unit budget removed");
        CliRun neither = run("rate");
        assertThat(neither.exitCode()).isEqualTo(10);
        assertThat(neither.err()).contains("rate needs ROWS_PER_SECOND, --units N or both");
        CliRun negative = run("rate", "--units", "-5");
        assertThat(negative.exitCode()).isEqualTo(10);
        assertThat(negative.err()).contains("--units -5 is negative");
    }

    @Test
    void statusOfAPrefixWithoutARunSaysHowToStartOne() {
        JsonSchemas.assertValid("status", run("status", "--json").out());
        CliRun r = run("status");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("status NOT_STARTED").contains("`rebalance copy` starts one");
    }

    @Test
    void statusShowsEachRouteAndWhoHoldsOrAwaitsItsLock() {
        try (UnifiedJedis redis = services.redis()) {
            assertThat(run("status").out()).contains("routing    no scope prepared for cutover");

            new RoutingTable(redis, new Keyspace(prefix)).create("room_events", RouteStatus.SOURCE, 1);
            SharedExclusiveLock lock = new SharedExclusiveLock(redis, new Keyspace(prefix).scope("room_events"));
            lock.tryShared("app-host:42:ab12/writer-1", Duration.ofSeconds(30));
            lock.tryExclusive("cutover-host:7:cd34/main", Duration.ofSeconds(30));

            CliRun r = run("status");
            assertThat(r.exitCode()).isZero();
            assertThat(r.out())
                    .contains("routing    room_events: SOURCE, read postgres, write postgres (epoch 1")
                    .contains("waiting    cutover-host:7:cd34/main")
                    .contains("1 holding a shared lease")
                    .contains("app-host:42:ab12/writer-1#");
            assertThat(run("status", "--json").out()).contains("\"routing\"").contains("\"sharedHolders\" : 1");
        }
    }
}
