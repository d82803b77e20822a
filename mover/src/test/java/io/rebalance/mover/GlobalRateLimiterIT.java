package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.mover.postgres.PostgresRateWindows;
import io.rebalance.mover.redis.RedisRateWindows;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.UnifiedJedis;

/** The rows limit shared by processes, counted in Redis or in the coordinator's Postgres table. */
class GlobalRateLimiterIT {
    private static final SharedServices services = SharedServices.get();

    @RegisterExtension
    static final CoordinatorTables COORDINATOR = new CoordinatorTables();

    private static RateWindows windows(String kind, String run) {
        return kind.equals("redis")
                ? new RedisRateWindows(services.redis(), new Keyspace(run).run())
                : new PostgresRateWindows(COORDINATOR.sessions(), COORDINATOR.schema, run);
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void limitersSharingARunTogetherNeverGoFasterThanTheLimit(String kind) throws Exception {
        String run = SharedServices.unique("rl") + ":";
        // two processes' limiters, 500 rows/s between them, asked for 1,500 rows in batches of 25
        List<GlobalRateLimiter> limiters =
                List.of(new GlobalRateLimiter(windows(kind, run), 500), new GlobalRateLimiter(windows(kind, run), 500));
        long start = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (GlobalRateLimiter l : limiters) {
            Thread t = new Thread(() -> {
                try {
                    for (int i = 0; i < 30; i++) l.acquire(25);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) t.join();
        double seconds = (System.nanoTime() - start) / 1e9;
        // 1,500 rows at 500/s span at least three one-second windows: more than two seconds minus the first partial one
        assertThat(seconds).isGreaterThan(1.0);
    }

    @Test
    void zeroMeansNoLimitAndANewLimitAppliesToTheNextBatch() throws Exception {
        String prefix = SharedServices.unique("rl") + ":";
        try (UnifiedJedis r = SharedServices.get().redis()) {
            GlobalRateLimiter l = new GlobalRateLimiter(new RedisRateWindows(r, new Keyspace(prefix).run()), 0);
            for (int i = 0; i < 1000; i++) l.acquire(25); // 25,000 rows, no Redis call, no wait
            assertThat(io.rebalance.core.redis.RedisScan.keys(r, prefix)).isEmpty();
            l.setLimit(100);
            l.acquire(25);
            assertThat(io.rebalance.core.redis.RedisScan.keys(r, prefix))
                    .singleElement()
                    .asString()
                    .contains("rate:");
        }
    }

    @Test
    void inPostgresAWindowIsASecondOfTheDatabasesClockAndOldOnesGo() throws Exception {
        String run = SharedServices.unique("rl");
        GlobalRateLimiter l = new GlobalRateLimiter(windows("postgres", run), 0);
        for (int i = 0; i < 100; i++) l.acquire(25);
        assertThat(windowsOf(run)).as("no limit, no statement").isZero();
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute(
                    "INSERT INTO " + COORDINATOR.schema.rateWindows() + " VALUES ('" + run + "', 1, 7)"); // from 1970
        }
        l.setLimit(100);
        l.acquire(25);
        try (Connection c = services.postgres();
                Statement st = c.createStatement();
                ResultSet rs =
                        st.executeQuery("SELECT second, used, floor(extract(epoch FROM clock_timestamp())) - second"
                                + " FROM " + COORDINATOR.schema.rateWindows() + " WHERE run = '" + run + "'")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getLong(2)).isEqualTo(25);
            assertThat(rs.getLong(3)).as("seconds behind the database's clock").isBetween(0L, 1L);
            assertThat(rs.next()).as("the old window was deleted").isFalse();
        }
    }

    private static long windowsOf(String run) throws Exception {
        try (Connection c = services.postgres();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(
                        "SELECT count(*) FROM " + COORDINATOR.schema.rateWindows() + " WHERE run = '" + run + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
