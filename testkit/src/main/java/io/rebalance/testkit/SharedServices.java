package io.rebalance.testkit;

import io.rebalance.local.DynamoDbLocalServer;
import io.rebalance.local.LocalServices;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * One set of real services per test JVM, started once: Postgres and Redis in containers when a Docker engine
 * runs (the convention for developers who have one), otherwise the machine's own services on 127.0.0.1 (as on
 * CI here), and DynamoDB Local in this process. Tests never skip for lack of a service: if neither is there, the
 * first test fails saying which is missing. Tests keep apart by unique names ({@link #unique}), not restarts.
 */
public final class SharedServices {
    private static volatile SharedServices instance;
    private static final AtomicInteger COUNTER = new AtomicInteger();

    public final String jdbcUrl;
    public final String redisUrl;
    public final DynamoDbLocalServer dynamo;
    public final String mode;

    private SharedServices(String jdbcUrl, String redisUrl, DynamoDbLocalServer dynamo, String mode) {
        this.jdbcUrl = jdbcUrl;
        this.redisUrl = redisUrl;
        this.dynamo = dynamo;
        this.mode = mode;
    }

    public static SharedServices get() {
        if (instance == null) {
            synchronized (SharedServices.class) {
                if (instance == null) instance = start();
            }
        }
        return instance;
    }

    private static SharedServices start() {
        String jdbc;
        String redis;
        String mode;
        if (LocalServices.dockerAvailable() && !"local".equals(System.getenv("REBALANCE_TEST_SERVICES"))) {
            PostgreSQLContainer pg = LocalServices.startPostgresContainer();
            GenericContainer<?> r = LocalServices.startRedisContainer();
            jdbc = LocalServices.withPassword(pg.getJdbcUrl(), pg.getPassword()) + "&user=postgres";
            redis = "redis://" + r.getHost() + ":" + r.getMappedPort(6379);
            mode = "testcontainers";
        } else {
            jdbc = System.getenv().getOrDefault("REBALANCE_TEST_JDBC_URL", "jdbc:postgresql://127.0.0.1:5432/postgres");
            redis = System.getenv().getOrDefault("REBALANCE_TEST_REDIS_URL", "redis://127.0.0.1:6379");
            mode = "local";
        }
        try (Connection c = DriverManager.getConnection(jdbc, "postgres", "")) {
            c.isValid(2);
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "tests need Postgres at " + jdbc + " (no Docker engine to start one): " + e.getMessage()
                            + "; run `sudo scripts/services.sh` first",
                    e);
        }
        try (UnifiedJedis j = RedisClient.create(URI.create(redis))) {
            j.ping();
        } catch (RuntimeException e) {
            throw new IllegalStateException(
                    "tests need Redis at " + redis + ": " + e.getMessage() + "; run `sudo scripts/services.sh` first",
                    e);
        }
        DynamoDbLocalServer dynamo = DynamoDbLocalServer.start(0);
        System.out.println(
                "[SharedServices] mode=" + mode + " postgres=" + jdbc.replaceAll("password=[^&]*", "password=***")
                        + " redis=" + redis + " dynamodb=" + dynamo.endpoint());
        return new SharedServices(jdbc, redis, dynamo, mode);
    }

    /**
     * A DynamoDB Local of the caller's own, for a test that writes many items to tables with a stream. DynamoDB Local
     * keeps every stream record of the server for 24 hours in one SQLite table without an index on the shard, and
     * scans it on each write to a table with a stream: after one such test, every later streamed write in the shared
     * server is several times slower (seen: a tail at 500 writes/s fell minutes behind).
     */
    public static DynamoDbLocalServer ownDynamo() {
        return DynamoDbLocalServer.start(0);
    }

    /** A short name nobody else in this run uses: {@code prefix_<n>_<random>}, valid in SQL, Redis and DynamoDB. */
    public static String unique(String prefix) {
        return prefix + "_" + COUNTER.incrementAndGet() + "_"
                + UUID.randomUUID().toString().substring(0, 8);
    }

    public Connection postgres() throws SQLException {
        return DriverManager.getConnection(jdbcUrl, "postgres", "");
    }

    /**
     * Drops a replication slot a test's tail used, if it exists. A tail process killed (not stopped) leaves its
     * walsender until Postgres notices the socket closed (or wal_sender_timeout): its backend is ended first, and the
     * slot dropped once nothing reads it.
     */
    public void dropSlot(String slot) throws SQLException {
        try (Connection pg = postgres();
                Statement st = pg.createStatement()) {
            st.execute("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '" + slot
                    + "' AND active_pid IS NOT NULL");
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> !slotActive(st, slot));
            st.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + slot
                    + "'");
        }
    }

    private static boolean slotActive(Statement st, String slot) throws SQLException {
        try (ResultSet rs = st.executeQuery(
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot + "' AND active")) {
            rs.next();
            return rs.getLong(1) > 0;
        }
    }

    public UnifiedJedis redis() {
        return RedisClient.create(URI.create(redisUrl));
    }

    public DynamoDbClient dynamoClient() {
        return dynamoClient(dynamo.endpoint());
    }

    /** A client of a DynamoDB Local at this endpoint: the shared one, or a test's own ({@link #ownDynamo}). */
    public static DynamoDbClient dynamoClient(String endpoint) {
        return DynamoDbClient.builder()
                .endpointOverride(URI.create(endpoint))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .build();
    }
}
