package io.rebalance.cli;

import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Map;

/** What the part-by-part ITs share: a tenants' table keyed (tenant_id, id), its slots by created_at, and its parts. */
final class PartedTables {
    private PartedTables() {}

    /** {@link TailedTable#settings}, slotted by {@code created_at}, moved by {@code parts} ({@code cutover.parts}). */
    static Map<String, String> settings(SharedServices services, String table, String prefix, String parts) {
        Map<String, String> s = TailedTable.settings(services, table, prefix);
        s.put("slots.timeFrom", "column");
        s.put("slots.timeColumn", "created_at");
        s.put("cutover.parts", parts);
        return s;
    }

    /** 20 tenants of 30 rows each, a minute apart on 2024-10-20 from 04:00, every row's kind 'k'. */
    static void make(Connection pg, String table) throws Exception {
        try (Statement st = pg.createStatement()) {
            st.execute("CREATE TABLE " + table + " (tenant_id int NOT NULL, id bigint NOT NULL, kind text NOT NULL,"
                    + " created_at timestamptz NOT NULL, PRIMARY KEY (tenant_id, id))");
            st.execute("INSERT INTO " + table + " SELECT t, i, 'k', timestamptz '2024-10-20 04:00Z' + i * interval"
                    + " '1 minute' FROM generate_series(1, 20) t, generate_series(1, 30) i");
        }
    }
}
