package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.core.coordinator.CoordinatorSchema;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The coordinator's tables: made once by processes starting together, in a schema whose name needs quoting; left
 * alone when found at this version; refused, untouched, when a newer release made them.
 */
class CoordinatorSchemaIT {
    private static final SharedServices services = SharedServices.get();

    @Test
    void processesStartingTogetherMakeTheTablesOnce() throws Exception {
        String name = "Coord \"" + SharedServices.unique("q") + "\"";
        CoordinatorSchema schema = new CoordinatorSchema(name);
        int processes = 4;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(processes);
        try {
            List<Future<?>> all = new ArrayList<>();
            for (int i = 0; i < processes; i++) {
                all.add(pool.submit(() -> {
                    start.await();
                    try (Connection c = services.postgres()) {
                        schema.ensure(c);
                        assertThat(c.getAutoCommit()).isTrue();
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : all) f.get();
            try (Connection c = services.postgres();
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT count(*), max(version) FROM " + quoted(name) + ".version")) {
                rs.next();
                assertThat(rs.getInt(1)).as("one version row").isEqualTo(1);
                assertThat(rs.getInt(2)).isEqualTo(CoordinatorSchema.VERSION);
            }
        } finally {
            pool.shutdownNow();
            drop(name);
        }
    }

    @Test
    void tablesANewerReleaseMadeAreRefusedAndLeftAlone() throws Exception {
        String name = SharedServices.unique("coord");
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute("CREATE SCHEMA " + name);
            st.execute("CREATE TABLE " + name + ".version (version int NOT NULL)");
            st.execute("INSERT INTO " + name + ".version VALUES (" + (CoordinatorSchema.VERSION + 1) + ")");
            assertThatThrownBy(() -> new CoordinatorSchema(name).ensure(c))
                    .isInstanceOfSatisfying(
                            RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                    .hasMessageContaining("version " + (CoordinatorSchema.VERSION + 1));
            assertThat(c.getAutoCommit()).isTrue();
            try (ResultSet rs = st.executeQuery("SELECT to_regclass('" + name + ".slots') IS NULL")) {
                rs.next();
                assertThat(rs.getBoolean(1)).as("nothing made").isTrue();
            }
        } finally {
            drop(name);
        }
    }

    private static String quoted(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }

    private static void drop(String name) throws Exception {
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute("DROP SCHEMA IF EXISTS " + quoted(name) + " CASCADE");
        }
    }
}
