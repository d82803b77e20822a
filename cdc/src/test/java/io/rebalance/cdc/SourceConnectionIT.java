package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.read.ListAppender;
import io.rebalance.testkit.PrivatePostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Debezium's replication connection goes where {@code source.jdbcUrl} says, as every other connection does: the
 * primary among the URL's hosts (the first host here has nothing listening, as a failover pair's member that is
 * down), with the URL's TLS settings. On a cluster of this test's own with TLS on, a tail whose URL asks for
 * {@code sslmode=verify-full} against the server's certificate streams over TLS; one whose URL says
 * {@code sslmode=disable} streams in the clear (the driver's default would have chosen TLS). The cluster asks for
 * passwords, as a cloud's does: the password reaches Debezium's connections from the URL and from source.password.
 */
class SourceConnectionIT {
    @Test
    void theReplicationConnectionHonoursTheUrlsHostsAndTls() throws Exception {
        try (PrivatePostgres pg = PrivatePostgres.startWithTls()) {
            pg.requirePassword("tls-secret-9");
            try (TailFixture f = new TailFixture(pg.jdbcUrl + "&password=tls-secret-9")) {
                String hostAndPort =
                        pg.jdbcUrl.substring("jdbc:postgresql://".length(), pg.jdbcUrl.indexOf("/postgres"));
                f.set(
                        "source.jdbcUrl",
                        "jdbc:postgresql://127.0.0.1:1," + hostAndPort + "/postgres?user=postgres"
                                + "&sslmode=verify-full&sslrootcert=" + pg.certificate() + "&password=tls-secret-9");
                List<Future<?>> outcomes = new ArrayList<>();
                Tail tls = f.startTail("tail-tls", outcomes);
                awaitStreaming(f, outcomes.get(0));
                f.insert(ChangeKindsIT.id(1), "message", null, 1);
                f.awaitItem(ChangeKindsIT.id(1), true);
                assertThat(replicationOverTls(f))
                        .as("the walsender's connection uses TLS")
                        .isTrue();

                tls.close();
                outcomes.get(0).get(30, TimeUnit.SECONDS);
                awaitSlotIdle(f);
                // the password from source.password this time
                f.set("source.jdbcUrl", pg.jdbcUrl + "&sslmode=disable");
                f.set("source.password", "tls-secret-9");
                f.startTail("tail-clear", outcomes);
                awaitStreaming(f, outcomes.get(1));
                f.insert(ChangeKindsIT.id(2), "message", null, 2);
                f.awaitItem(ChangeKindsIT.id(2), true);
                assertThat(replicationOverTls(f))
                        .as("sslmode=disable reached the replication connection")
                        .isFalse();
            }
        }
    }

    /**
     * Passwords in the JDBC URL, in source.password and in the Redis URL never reach a log line, whatever the level:
     * every event of a tail's start, stream and stop, at DEBUG from every logger, is searched for them.
     */
    @Test
    void noSecretReachesTheLogs() throws Exception {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        Level level = root.getLevel();
        root.addAppender(events);
        root.setLevel(Level.DEBUG);
        try (TailFixture f = new TailFixture()) {
            // trust authentication ignores the passwords, and Redis's default user takes any
            f.set("source.jdbcUrl", f.jdbcUrl + (f.jdbcUrl.contains("?") ? "&" : "?") + "password=hunter2url");
            f.set("source.password", "hunter2field");
            f.set("redis.url", f.services.redisUrl.replace("redis://", "redis://default:hunter2redis@"));
            List<Future<?>> outcomes = new ArrayList<>();
            Tail tail = f.startTail("tail-secrets", outcomes);
            f.awaitStreaming();
            f.insert(ChangeKindsIT.id(1), "message", null, 1);
            f.awaitItem(ChangeKindsIT.id(1), true);
            tail.close();
            outcomes.get(0).get(30, TimeUnit.SECONDS);
        } finally {
            root.detachAppender(events);
            root.setLevel(level);
        }
        assertThat(events.list).as("log events seen").hasSizeGreaterThan(10);
        for (ILoggingEvent e : events.list) {
            StringBuilder text = new StringBuilder(e.getFormattedMessage());
            for (IThrowableProxy t = e.getThrowableProxy(); t != null; t = t.getCause())
                text.append(' ').append(t.getMessage());
            assertThat(text.toString())
                    .as("a log line of %s", e.getLoggerName())
                    .doesNotContain("hunter2");
        }
    }

    private static boolean replicationOverTls(TailFixture f) throws Exception {
        try (Connection c = f.postgres();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT s.ssl FROM pg_replication_slots r JOIN pg_stat_ssl s"
                        + " ON s.pid = r.active_pid WHERE r.slot_name = '" + f.slotName + "'")) {
            assertThat(rs.next()).as("the slot is read").isTrue();
            return rs.getBoolean(1);
        }
    }

    /** Like {@link TailFixture#awaitStreaming}, failing with the tail's own error when it ended instead. */
    private static void awaitStreaming(TailFixture f, Future<?> tail) throws Exception {
        try {
            f.awaitStreaming();
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            if (tail.isDone()) tail.get();
            throw new AssertionError(
                    "the tail did not stream; its status: "
                            + f.redis.hgetAll(
                                    f.config().redis().keyspace().tail().status()),
                    e);
        }
    }

    private static void awaitSlotIdle(TailFixture f) {
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
            try (Connection c = f.postgres()) {
                return !TailPreflight.slot(c, f.slotName).active();
            }
        });
    }
}
