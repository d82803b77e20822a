package io.rebalance.cli;

import io.rebalance.cdc.TailPreflight;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import org.awaitility.Awaitility;

/** What a cutover test leaves in Postgres, all named after its table: the slot, publication, table and fence. */
final class CutoverTables {
    private CutoverTables() {}

    /** Waits for the tail's replication connection to end, then drops them. */
    static void drop(SharedServices services, String table) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> !TailPreflight.slot(pg, table)
                    .active());
            if (TailPreflight.slot(pg, table).exists()) {
                st.execute("SELECT pg_drop_replication_slot('" + table + "')");
            }
            st.execute("DROP PUBLICATION IF EXISTS " + table);
            st.execute("DROP TABLE IF EXISTS " + table);
            st.execute("DROP TABLE IF EXISTS public." + table + "_fence");
        }
    }
}
