package io.rebalance.cutover;

import static io.rebalance.cutover.CutoverIT.MATCH;
import static io.rebalance.cutover.CutoverIT.PASS;
import static io.rebalance.cutover.CutoverIT.item;
import static io.rebalance.cutover.CutoverIT.kind;
import static io.rebalance.cutover.CutoverIT.route;
import static io.rebalance.cutover.CutoverIT.skippedWhileHeld;
import static io.rebalance.cutover.CutoverIT.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.rebalance.cdc.ChangedSlots;
import io.rebalance.client.WriteGuard;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceSession;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.fence.FenceTrigger;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.BypassedWrites;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.route.RouteStatus;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

/**
 * Every writer fenced, not only the guard's: once the route leaves SOURCE, Postgres itself refuses a write to the
 * moved table that bypasses {@code WriteGuard} (a cron job, a console session, a service never adopted), through
 * every statement that writes, for a role with no grant on the fence and for a superuser, while guarded writes and
 * the reverse stream go on; after a rollback plain writes work again and reach DynamoDB.
 */
class BypassingWritesIT {
    private static final Duration BOUND = Duration.ofSeconds(30);
    /** The slot of every id written here (a ULID of 2024-10-20T02). */
    private static final String SLOT = "20241020.02";

    @Test
    void everyWriteThatBypassesTheGuardIsRefusedWhileTheRouteIsTarget() throws Exception {
        try (CutoverFixture f = new CutoverFixture();
                WriteGuard guard = f.guard();
                PlainRole cron = new PlainRole(f)) {
            f.startTail();
            String existing = write(f, guard);
            String other = write(f, guard);
            f.cutover("first").cutover(PASS, MATCH);
            assertThat(route(f).status()).isEqualTo(RouteStatus.TARGET);
            long rows = count(f);
            String inserted = newId();

            Map<String, String> writes = new LinkedHashMap<>();
            writes.put("INSERT", insert(f, inserted));
            writes.put("UPDATE", "UPDATE " + f.table + " SET seq = seq + 1 WHERE id = '" + existing + "'");
            writes.put("DELETE", "DELETE FROM " + f.table + " WHERE id = '" + existing + "'");
            writes.put(
                    "UPDATE ... FROM",
                    "UPDATE " + f.table + " t SET seq = t.seq + v.n FROM (VALUES ('" + existing + "', 1), ('" + other
                            + "', 2)) v(id, n) WHERE t.id = v.id");
            writes.put(
                    "INSERT ... ON CONFLICT",
                    insert(f, existing) + " ON CONFLICT (id) DO UPDATE SET seq = " + f.table + ".seq + 1");
            writes.put("TRUNCATE", "TRUNCATE " + f.table);
            for (Map.Entry<String, String> w : writes.entrySet()) {
                assertRefused(() -> cron.execute(w.getValue()), "the plain role's " + w.getKey());
                assertRefused(() -> superuser(f, w.getValue()), "a superuser's " + w.getKey());
            }
            assertRefused(() -> cron.copy(inserted), "the plain role's COPY");
            assertRefused(
                    () -> superuser(f, "SET session_replication_role = replica; " + insert(f, inserted)),
                    "a superuser's INSERT as a replica (the trigger is enabled ALWAYS)");

            assertThat(count(f)).as("nothing was written").isEqualTo(rows);
            assertThat(seq(f, existing)).isEqualTo(1);
            assertThat(item(f, inserted)).isEmpty();

            String during = write(f, guard);
            assertThat(item(f, during)).as("a guarded write, to DynamoDB").isNotEmpty();
            await().atMost(BOUND)
                    .alias("the reverse stream writes past the trigger")
                    .until(() -> "guarded".equals(kind(f, during)));

            f.cutover("back").rollback(f.proof());
            assertThat(route(f).status()).isEqualTo(RouteStatus.SOURCE);
            cron.execute(insert(f, inserted));
            cron.execute("UPDATE " + f.table + " SET seq = seq + 1 WHERE id = '" + existing + "'");
            String copied = newId();
            cron.copy(copied);
            await().atMost(BOUND)
                    .alias("plain writes are taken again after the rollback, and the tail carries them")
                    .untilAsserted(() -> {
                        assertThat(item(f, inserted)).isNotEmpty();
                        assertThat(item(f, copied)).isNotEmpty();
                        assertThat(item(f, existing).get("seq").n()).isEqualTo("2");
                    });
        }
    }

    @Test
    void aWriteMadeWithTheTriggerDisabledIsCountedMarkedChangedAndHoldsTheWindowOpenUntilARollbackCarriesIt()
            throws Exception {
        try (CutoverFixture f = new CutoverFixture();
                WriteGuard guard = f.guard()) {
            f.startTail();
            write(f, guard);
            f.cutover("first").cutover(PASS, MATCH);
            ChangedSlots changed = new ChangedSlots(f.redis, new Keyspace(f.prefix).tail(), null);
            String during = write(f, guard);
            await().atMost(BOUND)
                    .alias("the reverse stream's write, passed over by the held tail")
                    .until(() -> "guarded".equals(kind(f, during)) && skippedWhileHeld(f) > 0);
            long slotBefore = changed.positions().bySlot().getOrDefault(SLOT, 0L);

            String bypass = newId();
            bypassTheTrigger(f, insert(f, bypass));

            BypassedWrites bypassed = f.parts.bypassed();
            await().atMost(BOUND)
                    .alias("the held tail records the write that bypassed the fence, and only that one")
                    .untilAsserted(() -> assertThat(bypassed.read().keys()).containsOnlyKeys(bypass));
            await().atMost(BOUND) // published once a second
                    .untilAsserted(() ->
                            assertThat(tailStatus(f, "bypassed_while_held")).isEqualTo(1));
            assertThat(changed.positions().bySlot().get(SLOT))
                    .as("its slot is marked changed, so the next cutover verifies it")
                    .isGreaterThan(slotBefore);

            assertThatThrownBy(() -> f.cutover("close").closeWindow(f.closing()))
                    .isInstanceOf(RebalanceException.class)
                    .hasMessageContaining(bypass)
                    .hasMessageContaining("--rollback")
                    .hasMessageContaining("Nothing was changed")
                    .extracting(e -> ((RebalanceException) e).code())
                    .isEqualTo(ErrorCode.CUTOVER_REFUSED);
            assertThat(route(f).status()).as("the window stays open").isEqualTo(RouteStatus.TARGET);
            assertThat(bypassed.read().keys()).containsOnlyKeys(bypass);

            f.cutover("back").rollback(f.proof());
            await().atMost(BOUND)
                    .alias("once the hold is lifted the tail writes it to DynamoDB, and forgets it")
                    .untilAsserted(() -> {
                        assertThat(item(f, bypass)).isNotEmpty();
                        assertThat(bypassed.read().isEmpty()).isTrue();
                    });
        }
    }

    @Test
    void aBypassingWriteTheApplicationWroteAgainIsReconciledAndTheWindowCloses() throws Exception {
        try (CutoverFixture f = new CutoverFixture();
                WriteGuard guard = f.guard()) {
            f.startTail();
            String existing = write(f, guard);
            f.cutover("first").cutover(PASS, MATCH);
            bypassTheTrigger(f, "UPDATE " + f.table + " SET seq = 7 WHERE id = '" + existing + "'");
            BypassedWrites bypassed = f.parts.bypassed();
            await().atMost(BOUND)
                    .untilAsserted(() -> assertThat(bypassed.read().keys()).containsOnlyKeys(existing));

            // the application writes the key again: DynamoDB has it, and the reverse stream makes Postgres agree
            guard.run(f.table, permit -> permit.writeDynamo(f.dynamo, CutoverIT.guardedPut(f, existing)));
            await().atMost(BOUND).until(() -> seq(f, existing) == 1 && "guarded".equals(kind(f, existing)));

            f.cutover("close").closeWindow(f.closing());
            assertThat(route(f).status()).isEqualTo(RouteStatus.FINAL);
            assertThat(bypassed.read().isEmpty()).as("reconciled, so dropped").isTrue();
            assertRefused(() -> superuser(f, insert(f, newId())), "a write after the window closed", "route FINAL");
        }
    }

    @Test
    void aRepeatableReadWriterWhoseSnapshotPredatesTheFlipIsRefused() throws Exception {
        try (CutoverFixture f = new CutoverFixture();
                PlainRole cron = new PlainRole(f);
                Connection rr = cron.open()) {
            f.startTail();
            rr.setAutoCommit(false);
            rr.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            try (Statement st = rr.createStatement()) {
                st.executeQuery("SELECT count(*) FROM " + f.table).close(); // its snapshot: the fence open
                f.cutover("first").cutover(PASS, MATCH);
                String id = newId();
                // its snapshot would read the fence open: the row lock fails it, the write is not taken
                assertThatThrownBy(() -> st.execute(insert(f, id)))
                        .isInstanceOf(SQLException.class)
                        .satisfies(e ->
                                assertThat(((SQLException) e).getSQLState()).isEqualTo("40001"));
                rr.rollback();
                assertThat(count(f)).isZero();
            }
        }
    }

    @Test
    void prepareRefusesARoleThatCannotInstallTheTriggerNamingTheGrantAndInstallsNothing() throws Exception {
        try (CutoverFixture f = new CutoverFixture();
                PlainRole stranger = new PlainRole(f)) {
            superuser(f, "GRANT CREATE ON SCHEMA public TO " + stranger.name);
            try {
                MigrationConfig.Source own = f.config().source();
                MigrationConfig.Source asStranger = new MigrationConfig.Source(
                        own.jdbcUrl(), stranger.name, "", own.table(), own.keyColumns(), own.columns());
                String fence = f.pgFence + "_other";
                CutoverParts parts = new CutoverParts(
                        new CutoverSettings(
                                f.table,
                                f.table,
                                f.table,
                                Duration.ofSeconds(5),
                                CutoverFixture.LEASE,
                                List.of(),
                                Duration.ofSeconds(30),
                                1),
                        f.redis,
                        new Keyspace(f.prefix + "other:"),
                        new SourceSession(asStranger),
                        f.dynamo,
                        fence,
                        f.dynamoFence);
                assertThatThrownBy(parts::prepare)
                        .isInstanceOf(RebalanceException.class)
                        .hasMessageContaining("does not own " + f.table)
                        .hasMessageContaining("GRANT ")
                        .hasMessageContaining(" TO " + stranger.name)
                        .hasMessageContaining("Nothing was changed")
                        .extracting(e -> ((RebalanceException) e).code())
                        .isEqualTo(ErrorCode.CUTOVER_REFUSED);
                try (Connection c = f.services.postgres();
                        Statement st = c.createStatement();
                        ResultSet rs = st.executeQuery("SELECT to_regclass('" + fence + "') IS NULL")) {
                    rs.next();
                    assertThat(rs.getBoolean(1)).as("no fence installed").isTrue();
                }
            } finally {
                superuser(f, "REVOKE CREATE ON SCHEMA public FROM " + stranger.name);
            }
        }
    }

    /** As an owner could: the trigger disabled, a write, the trigger enabled again, in one transaction. */
    private static void bypassTheTrigger(CutoverFixture f, String write) throws SQLException {
        String trigger = new PostgresFence(f.pgFence).trigger().name();
        superuser(
                f,
                "BEGIN; ALTER TABLE " + f.table + " DISABLE TRIGGER " + trigger + "; " + write + "; ALTER TABLE "
                        + f.table + " ENABLE ALWAYS TRIGGER " + trigger + "; COMMIT");
    }

    private static long tailStatus(CutoverFixture f, String field) {
        String n = f.redis.hget(new Keyspace(f.prefix).tail().status(), field);
        return n == null ? 0 : Long.parseLong(n);
    }

    /** A refusal by the fence's trigger: its SQLSTATE, and a message that names the route and the way on. */
    private static void assertRefused(SqlAction write, String what) {
        assertRefused(write, what, "route TARGET");
    }

    private static void assertRefused(SqlAction write, String what, String route) {
        assertThatThrownBy(write::run)
                .as(what)
                .isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo(FenceTrigger.REFUSED))
                .hasMessageContaining("refused")
                .hasMessageContaining(route)
                .hasMessageContaining("nothing was written")
                .hasMessageContaining(route.endsWith("TARGET") ? "WriteGuard" : "DynamoDB is the store of record");
    }

    @FunctionalInterface
    interface SqlAction {
        void run() throws Exception;
    }

    static String newId() {
        return String.format("01JAKTE879%016d", Math.abs(UUID.randomUUID().getLeastSignificantBits() % 10_000_000));
    }

    static String insert(CutoverFixture f, String id) {
        return "INSERT INTO " + f.table + " VALUES ('" + id + "', '" + UUID.randomUUID()
                + "'::uuid, 'plain', '{\"n\": 1}'::jsonb, '2024-10-20T02:00:00Z', 1)";
    }

    static void superuser(CutoverFixture f, String sql) throws SQLException {
        try (Connection c = f.services.postgres();
                Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    static long count(CutoverFixture f) throws SQLException {
        try (Connection c = f.services.postgres();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM " + f.table)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    static long seq(CutoverFixture f, String id) throws SQLException {
        try (Connection c = f.services.postgres();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT seq FROM " + f.table + " WHERE id = '" + id + "'")) {
            return rs.next() ? rs.getLong(1) : -1;
        }
    }

    /**
     * A login role that writes the table plainly, as a cron job would: privileges on the table, none on the fence
     * table, no guard.
     */
    static final class PlainRole implements AutoCloseable {
        private final CutoverFixture f;
        private final String name =
                "cron_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

        PlainRole(CutoverFixture f) throws SQLException {
            this.f = f;
            superuser(
                    f,
                    "CREATE ROLE " + name + " LOGIN; GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON " + f.table
                            + " TO " + name);
        }

        Connection open() throws SQLException {
            try (Connection c = f.services.postgres()) {
                String url = c.getMetaData().getURL().replaceAll("([?&])user=[^&]*&?", "$1");
                java.util.Properties p = new java.util.Properties();
                p.setProperty("user", name);
                return DriverManager.getConnection(url, p);
            }
        }

        void execute(String sql) throws SQLException {
            try (Connection c = open();
                    Statement st = c.createStatement()) {
                st.execute(sql);
            }
        }

        /** One row through {@code COPY ... FROM STDIN}. */
        void copy(String id) throws Exception {
            try (Connection c = open()) {
                c.unwrap(PGConnection.class)
                        .getCopyAPI()
                        .copyIn(
                                "COPY " + f.table + " FROM STDIN",
                                new StringReader(id + "\t" + UUID.randomUUID()
                                        + "\tplain\t{\"n\": 1}\t2024-10-20 02:00:00+00\t1\n"));
            }
        }

        @Override
        public void close() throws SQLException {
            superuser(f, "REVOKE ALL ON " + f.table + " FROM " + name + "; DROP ROLE " + name);
        }
    }
}
