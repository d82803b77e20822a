package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.sim.AppSimulator;
import io.rebalance.sim.CutoverCycles;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.awaitility.Awaitility;

/** What a cutover test leaves in Postgres, all named after its table: the slot, publication, table and fence. */
final class CutoverTables {
    private CutoverTables() {}

    /** Fails unless every Postgres session the simulated application opened has ended (its close closes them). */
    static void assertSimulatorSessionsClosed(SharedServices services) throws Exception {
        try (Connection pg = services.postgres();
                PreparedStatement ps =
                        pg.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?")) {
            ps.setString(1, AppSimulator.APPLICATION_NAME);
            // a closed connection's backend leaves pg_stat_activity a moment after the client's goodbye
            Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertThat(rs.getLong(1))
                            .as("Postgres sessions the simulated application left open")
                            .isZero();
                }
            });
        }
    }

    /** Fails unless the cycle's cutover and rollback both succeeded with no write of the application failing. */
    static void assertCleanCycle(CutoverCycles.Cycle c, AppSimulator app) {
        assertThat(c.cutover().exitCode())
                .as("cutover %d: %s", c.number(), c.cutover().output())
                .isZero();
        assertThat(c.rollback().exitCode())
                .as("rollback %d: %s", c.number(), c.rollback().output())
                .isZero();
        assertThat(c.failedWrites())
                .as("failed writes in cycle %d: %s", c.number(), app.errors())
                .isZero();
        assertThat(c.writesToDynamo()).isGreaterThanOrEqualTo(250);
    }

    /** Fails unless both stores hold what the application was acknowledged after the cycle. */
    static void assertConsistentAfter(CutoverCycles.Cycle c) {
        assertThat(c.postgresProblems())
                .as("Postgres after cycle %d", c.number())
                .isEmpty();
        assertThat(c.dynamoProblems()).as("DynamoDB after cycle %d", c.number()).isEmpty();
    }

    /** Ends the tail's replication connection, then drops them. */
    static void drop(SharedServices services, String table) throws Exception {
        services.dropSlot(table);
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            st.execute("DROP PUBLICATION IF EXISTS " + table);
            st.execute("DROP TABLE IF EXISTS " + table);
            st.execute("DROP FUNCTION IF EXISTS public." + table + "_fence_check() CASCADE"); // its trigger
            st.execute("DROP TABLE IF EXISTS public." + table + "_fence");
            st.execute("DROP TABLE IF EXISTS rebalance_ranges_" + table); // the key ranges, where it has them
        }
    }
}
