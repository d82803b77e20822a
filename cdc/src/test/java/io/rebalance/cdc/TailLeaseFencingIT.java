package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.dynamo.FencedWrites;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.testkit.Paused;
import io.rebalance.testkit.TcpProxy;
import java.net.URI;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;

/**
 * ADR 6's bound for the tail: a tail paused inside a write, past its lease, writes nothing over its successor. Tail A
 * reads a changed row and stalls right before its write is sent; meanwhile its process is cut off (its Postgres and
 * Redis connections go through proxies the test cuts, so its lease is not renewed and its replication connection
 * dies, as in a long pause or a partition). Standby B takes the lease and the slot, applies the same change and a newer
 * one. When A wakes up, its write of the older row must not be sent: it would overwrite B's newer item for good.
 */
class TailLeaseFencingIT {
    @Test
    void aTailPausedPastItsLeaseWritesNothingOverItsSuccessor() throws Exception {
        try (TailFixture f = new TailFixture()) {
            URI pg = URI.create(f.services.jdbcUrl.substring("jdbc:".length()));
            URI redis = URI.create(f.services.redisUrl);
            StallArmed stall = new StallArmed();
            try (TcpProxy pgProxy = new TcpProxy(pg.getHost(), pg.getPort());
                    TcpProxy redisProxy = new TcpProxy(redis.getHost(), redis.getPort());
                    DynamoDbClient stalling = pausedClient(f, stall)) {
                f.set(
                        "source.jdbcUrl",
                        f.services.jdbcUrl.replace(pg.getHost() + ":" + pg.getPort(), "127.0.0.1:" + pgProxy.port()));
                f.set("redis.url", "redis://127.0.0.1:" + redisProxy.port());
                MigrationConfig cutOff = f.config();
                f.set("source.jdbcUrl", f.services.jdbcUrl);
                f.set("redis.url", f.services.redisUrl);
                UnifiedJedis aRedis = RedisConnector.connect(cutOff.redis().url(), 8);

                List<Future<?>> outcomes = new ArrayList<>();
                Tail a = new Tail(cutOff, f.sourceTable(), stalling, aRedis, "tail-a");
                f.tails.add(a);
                outcomes.add(f.threads.submit(() -> {
                    a.run();
                    return null;
                }));
                f.awaitStreaming();
                String k = ChangeKindsIT.id(1);
                f.insert(k, "message", null, 1);
                f.awaitItem(k, true);
                f.startTail("tail-b", outcomes); // stands by

                stall.arm();
                f.sql("UPDATE " + f.table + " SET seq = 2 WHERE id = '" + k + "'");
                assertThat(stall.stalled.await(30, TimeUnit.SECONDS)).isTrue(); // A read seq 2 and is about to write
                redisProxy.cut();
                pgProxy.cut();
                terminateWalSenders(f);

                // B takes the lease within one TTL, and the slot once A's walsender is gone; its engine then waits out
                // the JMX name A's stuck engine still holds in this JVM (a minute; separate processes do not share it)
                Awaitility.await().atMost(Duration.ofSeconds(150)).until(() -> seq(f, k) == 2);
                f.sql("UPDATE " + f.table + " SET seq = 3 WHERE id = '" + k + "'");
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> seq(f, k) == 3);

                stall.release.countDown(); // A wakes up holding seq 2 and a lease that is B's now
                assertThat(stall.ended.await(60, TimeUnit.SECONDS)).isTrue();
                assertThat(stall.sent.get())
                        .as("attempts A sent after its pause")
                        .isZero();
                assertThat(seq(f, k)).as("B's newer item stands").isEqualTo(3);
                aRedis.close();
            } finally {
                stall.release.countDown();
            }
        }
    }

    /**
     * A client like every other (its stall interceptor first, {@link FencedWrites} last) but whose own timeouts are
     * far longer than the stall: in a paused process the SDK's timers stop too, so they cannot be what saves it.
     */
    private static DynamoDbClient pausedClient(TailFixture f, StallArmed stall) {
        return DynamoDbClient.builder()
                .region(DynamoClients.region(f.config().target(), f.services.dynamo.endpoint()))
                .endpointOverride(URI.create(f.services.dynamo.endpoint()))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .httpClientBuilder(ApacheHttpClient.builder())
                .overrideConfiguration(o -> o.apiCallTimeout(Duration.ofMinutes(10))
                        .apiCallAttemptTimeout(Duration.ofMinutes(10))
                        .addExecutionInterceptor(stall)
                        .addExecutionInterceptor(new FencedWrites()))
                .build();
    }

    private static long seq(TailFixture f, String id) {
        var item = f.item(id);
        return item.isEmpty() ? -1 : Long.parseLong(item.get("seq").n());
    }

    /** A's walsender notices its cut client only at its next send: end it, as Postgres would in time. */
    private static void terminateWalSenders(TailFixture f) throws Exception {
        try (Connection c = f.postgres();
                Statement st = c.createStatement()) {
            st.execute("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '"
                    + f.slotName + "' AND active_pid IS NOT NULL");
        }
    }

    /**
     * Once armed, stalls the next BatchWriteItem before it is sent until released, ignoring interrupts as a paused
     * process would; then counts the attempts of that call that were sent, and notes when the call ended.
     */
    static final class StallArmed implements ExecutionInterceptor {
        final CountDownLatch stalled = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch ended = new CountDownLatch(1);
        final AtomicInteger sent = new AtomicInteger();
        private volatile boolean armed;
        private volatile Thread stalledThread;

        void arm() {
            armed = true;
        }

        @Override
        public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            if (!armed || !(context.request() instanceof BatchWriteItemRequest)) return;
            synchronized (this) {
                if (stalledThread != null) return;
                stalledThread = Thread.currentThread();
            }
            stalled.countDown();
            Paused.until(release);
        }

        @Override
        public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
            if (Thread.currentThread() == stalledThread) sent.incrementAndGet();
        }

        @Override
        public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
            if (Thread.currentThread() == stalledThread) ended.countDown();
        }

        @Override
        public void onExecutionFailure(Context.FailedExecution context, ExecutionAttributes attributes) {
            if (Thread.currentThread() == stalledThread) ended.countDown();
        }
    }
}
