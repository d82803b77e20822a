package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The copy on key ranges ({@code slots.timeFrom: none}): two processes share the ranges one of them planned and kept
 * beside the source table, every row lands once with its range as its slot (as Postgres orders the key, which for
 * text in a collation other than C is not Java's order), and the ranges are the same for every later process, rows
 * added since or not. Four kinds of key: random uuids, text in ICU's root collation, an integer sequence, a composite
 * key.
 */
class KeyRangeCopyIT {
    @Test
    void randomUuids() throws Exception {
        copy("id uuid PRIMARY KEY, n int", "SELECT gen_random_uuid(), g FROM generate_series(1, 12000) g");
    }

    @Test
    void textInACollationThatIsNotC() throws Exception {
        copy(
                "id text COLLATE \"und-x-icu\" PRIMARY KEY, n int",
                "SELECT (ARRAY['a','B','c','D','_e','F'])[1 + g % 6] || '-' || md5(g::text), g"
                        + " FROM generate_series(1, 12000) g");
    }

    @Test
    void anIntegerSequence() throws Exception {
        copy("id bigint PRIMARY KEY, n int", "SELECT g, g FROM generate_series(1, 12000) g");
    }

    @Test
    void aCompositeKey() throws Exception {
        copy(
                "tenant int, id text, n int, PRIMARY KEY (tenant, id)",
                "SELECT CASE WHEN g % 10 = 0 THEN 1 WHEN g % 10 = 1 THEN 2 ELSE 3 END, md5(g::text), g"
                        + " FROM generate_series(1, 12000) g");
    }

    private void copy(String columns, String rows) throws Exception {
        try (MoverFixture f = new MoverFixture()
                .set("slots.timeFrom", "none")
                .set("slots.rowsPerSlot", "2000")
                .set("mover.workers", "2")
                .set("mover.pageSize", "500")) {
            MigrationConfig config = f.config();
            try (Connection c = new SourceSession(config.source()).open();
                    Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + f.table + " (" + columns + ")");
                st.execute("INSERT INTO " + f.table + " " + rows);
                st.execute("ANALYZE " + f.table);
            }
            try {
                MoverProcess a = f.process(PhaseHooks.NONE, List.of());
                MoverProcess b = f.process(PhaseHooks.NONE, List.of());
                CompletableFuture<RunStatus> ra = f.start(a);
                CompletableFuture<RunStatus> rb = f.start(b);
                assertThat(ra.get(120, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);
                assertThat(rb.get(120, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);
                try (Connection c = new SourceSession(config.source()).open()) {
                    SourceTable table = SourceTable.inspect(c, config);
                    KeyRanges ranges = (KeyRanges) table.keyspace();
                    assertThat(ranges.stored()).isTrue();
                    assertThat(ranges.count()).isEqualTo(6);
                    Map<String, String[]> source = source(c, table, ranges);
                    Map<String, String[]> target = target(f, table, config);
                    assertThat(target.keySet()).isEqualTo(source.keySet());
                    source.forEach((key, row) -> {
                        assertThat(target.get(key)[0]).as("n of " + key).isEqualTo(row[0]);
                        assertThat(target.get(key)[1]).as("slot of " + key).isEqualTo(row[1]);
                    });

                    // the ranges are the run's for good: more rows and another look give the same cuts
                    try (Statement st = c.createStatement()) {
                        st.execute("INSERT INTO " + f.table + " "
                                + rows.replace("generate_series(1, 12000)", "generate_series(12001, 30000)"));
                    }
                    KeyRanges again = (KeyRanges) SourceTable.inspect(c, config).keyspace();
                    assertThat(again.splits()).isEqualTo(ranges.splits());
                }
            } finally {
                try (Connection c = new SourceSession(config.source()).open();
                        Statement st = c.createStatement()) {
                    st.execute("DROP TABLE IF EXISTS rebalance_ranges_" + f.table);
                }
            }
        }
    }

    /** Each row's key text: its n and the range Postgres puts it in, by the stored ranges. */
    private static Map<String, String[]> source(Connection c, SourceTable table, KeyRanges ranges) throws Exception {
        Map<String, String[]> rows = new HashMap<>();
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT " + table.key().selectText("src.") + ", n::text, "
                        + ranges.slotSql("src.") + " FROM " + table.name() + " AS src")) {
            while (rs.next())
                rows.put(
                        rs.getString(1),
                        new String[] {rs.getString(2), Slot.range(rs.getInt(3)).name()});
        }
        return rows;
    }

    private static Map<String, String[]> target(MoverFixture f, SourceTable table, MigrationConfig config) {
        Map<String, String[]> items = new HashMap<>();
        try (DynamoDbClient d = f.services.dynamoClient()) {
            d.scanPaginator(b -> b.tableName(config.target().table())).items().forEach(item -> {
                AttributeValue slot = item.get(config.target().slotAttribute());
                items.put(table.key().textOf(item), new String[] {item.get("n").n(), slot == null ? null : slot.s()});
            });
        }
        return items;
    }
}
