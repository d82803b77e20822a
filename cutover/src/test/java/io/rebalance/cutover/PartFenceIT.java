package io.rebalance.cutover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.fence.FenceTrigger;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.PartFenceTrigger;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.part.PartMap;
import io.rebalance.protocol.part.PartSpec;
import io.rebalance.testkit.SharedServices;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

/**
 * The fence of a table moved part by part, enforced by the table for every writer: while a part's fence is closed
 * (its route TARGET or FINAL, or a cutover blocking it) a plain JDBC write to one of its rows is refused, whatever the
 * statement, and nothing is written; writes to parts still on SOURCE go through; the triggers cost nothing once every
 * part is open again; the parts cannot change while one is away from SOURCE.
 */
class PartFenceIT {
    private static final Duration WAIT = Duration.ofSeconds(5);
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("parted");
    private final String fenceTable = "public." + SharedServices.unique("pfence");
    private final PostgresFence fence = new PostgresFence(fenceTable);
    private final PartFenceTrigger trigger = fence.trigger().parts();
    private final String base = table;
    private final PartMap parts =
            PartMap.of(List.of(PartSpec.values("pilot", 42), PartSpec.hash("early", 0, 10), PartSpec.rest("rest")));

    @AfterEach
    void drop() throws SQLException {
        try (Connection c = services.postgres();
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table + " CASCADE");
            trigger.remove(c, table);
            s.execute("DROP TABLE IF EXISTS " + fenceTable);
        }
    }

    private void create(String ddl) throws SQLException {
        try (Connection c = services.postgres();
                Statement s = c.createStatement()) {
            s.execute(ddl);
            s.execute("INSERT INTO " + table
                    + " SELECT t, i, 'v' FROM generate_series(1, 60) t, generate_series(1, 3) i");
            c.setAutoCommit(false);
            trigger.install(c, table, base, parts, "\"tenant_id\"");
            c.commit();
        }
    }

    private long rest() {
        for (long t = 1; ; t++) if (parts.partOf(t).name().equals("rest")) return t;
    }

    private long early() {
        for (long t = 1; ; t++) if (t != 42 && parts.partOf(t).name().equals("early")) return t;
    }

    @Test
    void aClosedPartRefusesEveryWriteToItsRowsAndOnlyThose() throws Exception {
        create("CREATE TABLE " + table + " (tenant_id bigint, id bigint, body text, PRIMARY KEY (tenant_id, id))");
        try (Connection c = services.postgres()) {
            assertThat(triggersEnabled(c)).as("every part open: disabled").containsOnly("D");
            fence.set(c, PartMap.scope(base, "pilot"), FenceWriter.NONE, 1, WAIT); // as a cutover leaves it: FINAL
            assertThat(triggersEnabled(c)).containsOnly("A");
            long rest = rest();
            for (String write : List.of(
                    "INSERT INTO " + table + " VALUES (42, 100, 'x')",
                    "UPDATE " + table + " SET body = 'y' WHERE tenant_id = 42",
                    "DELETE FROM " + table + " WHERE tenant_id = 42 AND id = 1",
                    "INSERT INTO " + table
                            + " VALUES (42, 1, 'z') ON CONFLICT (tenant_id, id) DO UPDATE SET body = 'z'",
                    "UPDATE " + table + " SET tenant_id = 42, id = 500 WHERE tenant_id = " + rest + " AND id = 1",
                    "UPDATE " + table + " SET tenant_id = " + rest + ", id = 501 WHERE tenant_id = 42 AND id = 2",
                    "TRUNCATE " + table)) {
                assertRefused(c, write, "pilot");
            }
            assertThatThrownBy(() -> ((PGConnection) c.unwrap(PGConnection.class))
                            .getCopyAPI()
                            .copyIn("COPY " + table + " FROM STDIN", new StringReader("42\t900\tc\n")))
                    .as("COPY")
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("'" + base + "/pilot'");
            try (Statement s = c.createStatement()) {
                assertThat(s.executeUpdate("UPDATE " + table + " SET body = 'ok' WHERE tenant_id <> 42"))
                        .as("every other tenant's rows")
                        .isEqualTo(59 * 3);
                s.executeUpdate(
                        "INSERT INTO " + table + " VALUES (" + early() + ", 100, 'e'), (" + rest + ", 100, 'r')");
                s.executeUpdate("DELETE FROM " + table + " WHERE tenant_id = " + rest + " AND id = 100");
            }
            assertThat(rows(c, "tenant_id = 42 AND body = 'v'"))
                    .as("pilot's rows untouched")
                    .isEqualTo(3);

            // the reverse stream writes a part back while its fence admits it
            fence.set(c, PartMap.scope(base, "pilot"), FenceWriter.REVERSE, 2, WAIT);
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("SET LOCAL rebalance.writer = 'reverse'");
                s.executeUpdate("UPDATE " + table + " SET body = 'back' WHERE tenant_id = 42");
            }
            c.commit();
            c.setAutoCommit(true);
            assertRefused(c, "UPDATE " + table + " SET body = 'app' WHERE tenant_id = 42", "pilot");

            // a second part closes and opens: the triggers stay as long as pilot is closed
            fence.set(c, PartMap.scope(base, "early"), FenceWriter.NONE, 1, WAIT);
            assertRefused(c, "DELETE FROM " + table + " WHERE tenant_id = " + early(), "early");
            fence.set(c, PartMap.scope(base, "early"), FenceWriter.APP, 2, WAIT);
            assertThat(triggersEnabled(c)).containsOnly("A");
            try (Statement s = c.createStatement()) {
                assertThat(s.executeUpdate("DELETE FROM " + table + " WHERE tenant_id = " + early()))
                        .isPositive();
            }
            fence.set(c, PartMap.scope(base, "pilot"), FenceWriter.APP, 3, WAIT);
            assertThat(triggersEnabled(c)).as("every part open again: disabled").containsOnly("D");
            try (Statement s = c.createStatement()) {
                assertThat(s.executeUpdate("UPDATE " + table + " SET body = 'open' WHERE tenant_id = 42"))
                        .isEqualTo(3);
            }
        }
    }

    @Test
    void thePartsCannotChangeWhileOneIsAwayFromSource() throws Exception {
        create("CREATE TABLE " + table + " (tenant_id bigint, id bigint, body text, PRIMARY KEY (tenant_id, id))");
        PartMap other = PartMap.of(List.of(PartSpec.values("pilot", 42, 43), PartSpec.rest("rest")));
        try (Connection c = services.postgres()) {
            fence.set(c, PartMap.scope(base, "pilot"), FenceWriter.NONE, 1, WAIT);
            c.setAutoCommit(false);
            assertThatThrownBy(() -> trigger.install(c, table, base, other, "\"tenant_id\""))
                    .isInstanceOfSatisfying(
                            RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PARTS_CHANGED))
                    .hasMessageContaining(parts.written())
                    .hasMessageContaining(base + "/pilot")
                    .hasMessageContaining("Nothing was changed");
            c.rollback();
            assertThat(trigger.recorded(c, base).orElseThrow().parts()).isEqualTo(parts.written());
            assertRefused(c, "DELETE FROM " + table + " WHERE tenant_id = 42", "pilot");
            try (Statement s = c.createStatement()) {
                assertThat(s.executeUpdate("UPDATE " + table + " SET body = 'v' WHERE tenant_id = 43"))
                        .as("the parts prepared still decide: 43 is not pilot's")
                        .isEqualTo(3);
            }
            c.commit();
            c.setAutoCommit(true);
            fence.set(c, PartMap.scope(base, "pilot"), FenceWriter.APP, 2, WAIT);
            c.setAutoCommit(false);
            trigger.install(c, table, base, other, "\"tenant_id\""); // every part on SOURCE: allowed
            c.commit();
            c.setAutoCommit(true);
            assertThat(trigger.recorded(c, base).orElseThrow().parts()).isEqualTo(other.written());
            assertThat(rows(c, "true")).isEqualTo(180);
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT count(*) FROM " + fenceTable)) {
                rs.next();
                assertThat(rs.getInt(1)).as("early's row went with it").isEqualTo(2);
            }
        }
    }

    @Test
    void aPartitionedTableIsFencedInEveryPartition() throws Exception {
        create("CREATE TABLE " + table + " (tenant_id bigint, id bigint, body text, PRIMARY KEY (tenant_id, id))"
                + " PARTITION BY RANGE (tenant_id); CREATE TABLE " + table + "_a PARTITION OF " + table
                + " FOR VALUES FROM (0) TO (40); CREATE TABLE " + table + "_b PARTITION OF " + table
                + " FOR VALUES FROM (40) TO (1000)");
        try (Connection c = services.postgres()) {
            fence.set(c, PartMap.scope(base, "pilot"), FenceWriter.NONE, 1, WAIT);
            assertRefused(c, "UPDATE " + table + "_b SET body = 'p' WHERE tenant_id = 42", "pilot");
            assertRefused(c, "INSERT INTO " + table + " VALUES (42, 7, 'p')", "pilot");
            assertRefused(c, "TRUNCATE " + table + "_a", "pilot");
            try (Statement s = c.createStatement()) {
                assertThat(s.executeUpdate("UPDATE " + table + " SET body = 'ok' WHERE tenant_id <> 42"))
                        .isEqualTo(59 * 3);
            }
        }
    }

    private void assertRefused(Connection c, String sql, String part) throws SQLException {
        boolean auto = c.getAutoCommit();
        try (Statement s = c.createStatement()) {
            if (!auto) s.execute("SAVEPOINT before");
            assertThatThrownBy(() -> s.execute(sql))
                    .as(sql)
                    .isInstanceOfSatisfying(
                            SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo(FenceTrigger.REFUSED))
                    .hasMessageContaining("'" + base + "/" + part + "'");
            if (!auto) s.execute("ROLLBACK TO SAVEPOINT before");
        }
    }

    private int rows(Connection c, String where) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table + " WHERE " + where)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private List<String> triggersEnabled(Connection c) throws SQLException {
        List<String> out = new java.util.ArrayList<>();
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT tgenabled::text FROM pg_trigger WHERE tgrelid = '" + table
                        + "'::regclass AND NOT tgisinternal")) {
            while (rs.next()) out.add(rs.getString(1));
        }
        assertThat(out).hasSize(2);
        return out;
    }
}
