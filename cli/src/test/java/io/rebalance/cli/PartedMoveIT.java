package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.client.Blocked;
import io.rebalance.client.GuardSettings;
import io.rebalance.core.source.SourceSession;
import io.rebalance.local.DynamoDbLocalServer;
import io.rebalance.protocol.part.PartMap;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.protocol.route.Target;
import io.rebalance.sim.TenantSimulator;
import io.rebalance.testkit.PrivateRedis;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A table of 20 tenants moved part by part under an application writing 300 writes/s through the guard (one writer
 * per tenant: inserts, seq+1 updates and deletes, each acknowledged write in a ledger) and reading through the
 * router: part a (1 tenant), then b (4), b rolled back and moved again, then c (the other 15), each window closed.
 * Redis (without persistence) is restarted empty in b's window, and every part's route is recovered from its
 * fences. During each part's cutover no write of another part waits (the guard's blocked counter, per part); no read
 * is stale; at the end every row the ledger knows is in DynamoDB exactly as acknowledged.
 */
class PartedMoveIT {
    private static final String PARTS = "[{name: a, values: [1]}, {name: b, values: [2, 3, 4, 5]}, {name: c}]";
    private static final String ALLOW = "--allow-redis-without-aof";
    private static final int TENANTS = 20;

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("partmove");
    private final String prefix = SharedServices.unique("pm") + ":";
    private PrivateRedis redis;
    private DynamoDbLocalServer dynamo;

    private void make(Connection pg) throws Exception {
        try (Statement st = pg.createStatement()) {
            st.execute("CREATE TABLE " + table + " (tenant_id int NOT NULL, id bigint NOT NULL, seq bigint NOT NULL,"
                    + " created_at timestamptz NOT NULL, PRIMARY KEY (tenant_id, id))");
            st.execute("INSERT INTO " + table + " SELECT t, i, 1, timestamptz '2024-10-20 04:00Z' + i * interval"
                    + " '1 minute' FROM generate_series(1, " + TENANTS + ") t, generate_series(1, 40) i");
        }
    }

    private Map<String, String> settings() {
        Map<String, String> s = PartedTables.settings(services, table, prefix, PARTS);
        s.put("redis.url", redis.url);
        s.put("target.endpoint", dynamo.endpoint()); // its own: the shared one serves every other test's tables
        s.put("cutover.maxTailLag", "30s"); // a busy CI machine: the tail's pace is not what this test is about
        return s;
    }

    private CliRun run(String... words) {
        return CliRun.of(TailedTable.args(settings()), words);
    }

    private CliRun ok(String... words) {
        CliRun r = run(words);
        assertThat(r.exitCode())
                .as(String.join(" ", words) + "\n" + r.out() + r.err())
                .isZero();
        return r;
    }

    /**
     * A command retried while it aborts on its write-block budget (32), a tail behind (31 naming the lag) or a reverse
     * stream that has not reported since Redis came back empty (31: a rollback refuses, changing nothing, until its
     * next round reports).
     */
    private CliRun retried(String... words) {
        CliRun r = Awaitility.await()
                .atMost(Duration.ofSeconds(180))
                .until(
                        () -> run(words),
                        x -> x.exitCode() != 32
                                && !(x.exitCode() == 31
                                        && (x.err().contains("cutover.maxTailLag")
                                                || x.out().contains("cutover.maxTailLag")
                                                || x.err()
                                                        .contains("rollback needs the reverse stream, and its state"
                                                                + " is ''"))));
        assertThat(r.exitCode())
                .as(String.join(" ", words) + "\n" + r.out() + r.err())
                .isZero();
        return r;
    }

    @Test
    void partsMoveOneAtATimeUnderLoadWithoutBlockingTheOthers() throws Exception {
        try (PrivateRedis own = PrivateRedis.start("--appendonly", "no", "--save", "");
                DynamoDbLocalServer ownDynamo = SharedServices.ownDynamo()) {
            redis = own;
            dynamo = ownDynamo;
            try (TailedTable t = new TailedTable(services, table, settings(), this::make)) {
                ok("cutover", "--prepare", ALLOW);
                ok("copy", "--no-progress");
                ok("verify", "--all");
                PartMap parts = t.config.cutover().partMap();
                GuardSettings guard = new GuardSettings(
                                prefix,
                                Duration.ofSeconds(5),
                                Duration.ofSeconds(30),
                                t.config.cutover().pgFence(),
                                t.config.cutover().dynamoFence())
                        .withParts(table, parts);
                RoutingTable routes = new RoutingTable(t.redis, t.config.redis().keyspace());
                try (TenantSimulator app = new TenantSimulator(
                                table,
                                t.source,
                                new SourceSession(t.config.source()),
                                table,
                                t.redis,
                                t.dynamo,
                                guard,
                                t.source.codec(t.config.target()),
                                TENANTS)
                        .start(300, 100, 11)) {
                    awaitWrites(app, 300);
                    move(app, "a");
                    onPart(app, "a", "cutover", "--close-window", "--yes", "--part", "a");
                    move(app, "b");
                    awaitWrites(app, 300);

                    redis.restart(); // empty: every route, lock, hold request and key log is gone
                    for (String part : List.of("a", "b", "c")) ok("cutover", "--recover", "--part", part);
                    assertThat(routeOf(routes, "a")).isEqualTo(RouteStatus.FINAL);
                    assertThat(routeOf(routes, "b")).isEqualTo(RouteStatus.TARGET);
                    assertThat(routeOf(routes, "c")).isEqualTo(RouteStatus.SOURCE);
                    awaitWrites(app, 300);

                    onPart(app, "b", "cutover", "--rollback", ALLOW, "--max-write-block", "15s", "--part", "b");
                    assertThat(routeOf(routes, "b")).isEqualTo(RouteStatus.SOURCE);
                    // Redis lost the verifications; part a is left out, Postgres keeps it no more. The tail works off
                    // the writes Postgres took during the outage first: a row it never carries never verifies
                    awaitVerified();
                    move(app, "b");
                    onPart(app, "b", "cutover", "--close-window", "--yes", "--part", "b");
                    move(app, "c");
                    onPart(app, "c", "cutover", "--close-window", "--yes", "--part", "c");
                    awaitWrites(app, 300);
                    app.close();

                    for (String part : List.of("a", "b", "c"))
                        assertThat(routeOf(routes, part)).isEqualTo(RouteStatus.FINAL);
                    assertThat(app.check(tenant -> Target.DYNAMODB))
                            .as("every acknowledged write in DynamoDB, once")
                            .isEmpty();
                    assertThat(app.staleReads()).isEmpty();
                    assertThat(app.reads()).isPositive();
                    assertThat(app.errors())
                            .as("writes and reads fail only while Redis is away or has not got its routes back")
                            .allSatisfy(e -> assertThat(e).containsAnyOf("Jedis", "Redis", "routing entry"));
                }
            }
        }
    }

    /** Cuts {@code part} over under load: no write of another part waits meanwhile. */
    private void move(TenantSimulator app, String part) {
        awaitDryRun(part);
        Map<String, Blocked> before = othersBlocked(app, part);
        CliRun cut = retried("cutover", ALLOW, "--max-write-block", "15s", "--part", part);
        assertThat(cut.out()).contains("scope '" + table + "/" + part + "'");
        assertThat(othersBlocked(app, part))
                .as("the other parts' writes during %s's cutover", part)
                .isEqualTo(before);
        awaitWrites(app, 150);
    }

    /** A command on {@code part}'s window: no write of another part waits meanwhile. */
    private void onPart(TenantSimulator app, String part, String... words) {
        Map<String, Blocked> before = othersBlocked(app, part);
        retried(words);
        assertThat(othersBlocked(app, part))
                .as("the other parts' writes during %s", String.join(" ", words))
                .isEqualTo(before);
    }

    /** Until {@code verify --all} passes (the tail caught up); the last one's output when it never does. */
    private void awaitVerified() {
        java.util.concurrent.atomic.AtomicReference<CliRun> last = new java.util.concurrent.atomic.AtomicReference<>();
        try {
            Awaitility.await().atMost(Duration.ofSeconds(120)).until(() -> {
                last.set(run("verify", "--all"));
                return last.get().exitCode() == 0;
            });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError(
                    "verify --all never passed:\n" + last.get().out()
                            + last.get().err(),
                    e);
        }
    }

    /** Until the part's pre-checks pass; the last dry run's output when they never do. */
    private void awaitDryRun(String part) {
        java.util.concurrent.atomic.AtomicReference<CliRun> last = new java.util.concurrent.atomic.AtomicReference<>();
        try {
            Awaitility.await().atMost(Duration.ofSeconds(120)).until(() -> {
                last.set(run("cutover", "--dry-run", ALLOW, "--part", part));
                return last.get().exitCode() == 0;
            });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError(
                    "the dry run of " + part + " never passed:\n" + last.get().out()
                            + last.get().err(),
                    e);
        }
    }

    private Map<String, Blocked> othersBlocked(TenantSimulator app, String part) {
        Map<String, Blocked> out = new LinkedHashMap<>();
        for (String other : new ArrayList<>(List.of("a", "b", "c"))) {
            if (!other.equals(part)) out.put(other, app.guard().blocked(PartMap.scope(table, other)));
        }
        return out;
    }

    private static void awaitWrites(TenantSimulator app, long more) {
        long target = app.acknowledged() + more;
        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> app.acknowledged() >= target);
    }

    private RouteStatus routeOf(RoutingTable routes, String part) {
        return routes.get(PartMap.scope(table, part)).orElseThrow().status();
    }
}
