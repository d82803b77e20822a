package io.rebalance.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.protocol.fence.DynamoFence;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.lock.LockLease;
import io.rebalance.protocol.lock.LockWaitTimeoutException;
import io.rebalance.protocol.lock.SharedExclusiveLock;
import io.rebalance.protocol.part.PartMap;
import io.rebalance.protocol.part.PartSpec;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.protocol.route.Target;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * An application writing a table moved part by part: the guard and the router resolve each row's part from the
 * partition-key value locally and act under that part's scope, so while one part's cutover holds its exclusive lease,
 * writes to every other part are granted at once (the guard's blocked-writes counter stays at zero for them) and only
 * the part's own writes wait.
 */
class PartedWriteGuardIT {
    private static final String TABLE = "room_events";
    private static final Duration LONG = Duration.ofSeconds(30);

    private final SharedServices services = SharedServices.get();
    private final UnifiedJedis redis = services.redis();
    private final DynamoDbClient dynamo = services.dynamoClient();
    private final String prefix = SharedServices.unique("parted") + ":";
    private final PartMap parts =
            PartMap.of(List.of(PartSpec.values("pilot", 42), PartSpec.hash("early", 0, 10), PartSpec.rest("rest")));
    private final GuardSettings settings = new GuardSettings(
                    prefix,
                    Duration.ofSeconds(5),
                    LONG,
                    "public." + SharedServices.unique("fence"),
                    SharedServices.unique("fence"))
            .withParts(TABLE, parts);
    private final RoutingTable routes = new RoutingTable(redis, new Keyspace(prefix));
    private final PostgresFence pgFence = new PostgresFence(settings.postgresFenceTable());
    private final DynamoFence dynamoFence = new DynamoFence(dynamo, settings.dynamoFenceTable());
    private final String pilot = PartMap.scope(TABLE, "pilot");
    private final String rest = PartMap.scope(TABLE, "rest");
    private Connection admin;

    @BeforeEach
    void prepare() throws Exception {
        admin = services.postgres();
        for (String scope : parts.scopes(TABLE)) {
            pgFence.install(admin, scope);
            dynamoFence.install(scope);
            routes.create(scope, RouteStatus.SOURCE, 1);
        }
    }

    @AfterEach
    void close() throws Exception {
        admin.close();
        redis.close();
        dynamo.close();
    }

    private long tenantOf(String part) {
        for (long t = 1; ; t++) if (t != 42 && parts.partOf(t).name().equals(part)) return t;
    }

    @Test
    void eachWriteIsGuardedUnderItsRowsPart() throws Exception {
        try (WriteGuard guard = new WriteGuard(redis, dynamo, settings)) {
            assertThat(guard.<String>write(TABLE, 42L, permit -> permit.route().scope()))
                    .isEqualTo(pilot);
            assertThat(guard.<String>write(
                            TABLE, tenantOf("early"), permit -> permit.route().scope()))
                    .isEqualTo(PartMap.scope(TABLE, "early"));
            assertThat(guard.<String>write(TABLE, "" + tenantOf("rest"), permit -> permit.route()
                            .scope()))
                    .isEqualTo(rest);
            assertThatThrownBy(() -> guard.write(TABLE, permit -> null))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("moves part by part")
                    .hasMessageContaining("write(scope, key, ...)");
        }
    }

    @Test
    void aPartsCutoverBlocksOnlyItsOwnWrites() throws Exception {
        SharedExclusiveLock pilotLock = new SharedExclusiveLock(redis, new Keyspace(prefix).scope(pilot));
        try (WriteGuard guard = new WriteGuard(redis, dynamo, settings.withMaxWait(Duration.ofMillis(300)))) {
            LockLease cutover = ((SharedExclusiveLock.Granted) pilotLock.tryExclusive("cutover", LONG)).lease();
            for (int i = 0; i < 200; i++) {
                long tenant = tenantOf(i % 2 == 0 ? "rest" : "early") + i; // any tenant of the other parts
                String scope =
                        guard.write(TABLE, tenant, permit -> permit.route().scope());
                assertThat(scope).isNotEqualTo(pilot).isEqualTo(parts.scopeOf(TABLE, tenant));
            }
            assertThat(guard.blocked(rest).writes())
                    .as("no write to another part waited")
                    .isZero();
            assertThat(guard.blocked(PartMap.scope(TABLE, "early")).writes()).isZero();
            assertThatThrownBy(() -> guard.write(TABLE, 42, permit -> null))
                    .as("the part's own write waits for its cutover, here past its bound")
                    .isInstanceOf(LockWaitTimeoutException.class);
            assertThat(guard.blocked(pilot).writes()).isEqualTo(1);
            assertThat(guard.blocked(pilot).time()).isGreaterThanOrEqualTo(Duration.ofMillis(300));
            pilotLock.release(cutover);
            assertThat(guard.<String>write(TABLE, 42, permit -> permit.route().scope()))
                    .isEqualTo(pilot);
            assertThat(guard.blocked(pilot).writes())
                    .as("granted at once once the cutover let go")
                    .isEqualTo(1);
        }
    }

    @Test
    void theRouterFollowsEachPart() throws Exception {
        SharedExclusiveLock pilotLock = new SharedExclusiveLock(redis, new Keyspace(prefix).scope(pilot));
        Router router = new Router(redis, settings);
        LockLease ex = ((SharedExclusiveLock.Granted) pilotLock.tryExclusive("cutover", LONG)).lease();
        pgFence.set(admin, pilot, FenceWriter.REVERSE, ex.token(), LONG);
        dynamoFence.set(pilot, FenceWriter.APP, ex.token());
        assertThat(routes.set(ex, RouteStatus.SOURCE, RouteStatus.TARGET, 0)).isInstanceOf(RoutingTable.Changed.class);
        pilotLock.release(ex);
        assertThat(router.readTarget(TABLE, 42L)).isEqualTo(Target.DYNAMODB);
        assertThat(router.readTarget(TABLE, tenantOf("rest"))).isEqualTo(Target.POSTGRES);
        assertThat(router.route(TABLE, tenantOf("early")).status()).isEqualTo(RouteStatus.SOURCE);
        assertThatThrownBy(() -> router.route(TABLE)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new Router(redis, prefix).readTarget(pilot))
                .as("a part's scope by name")
                .isEqualTo(Target.DYNAMODB);
    }
}
