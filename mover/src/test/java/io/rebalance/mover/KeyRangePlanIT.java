package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.KeyRangePlanner;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.core.source.TableSurvey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Key ranges ({@code slots.timeFrom: none}) cut a table whose rows tell no time into slots of about {@code
 * slots.rowsPerSlot} rows, in the key's own order: every row is in exactly one range (its predicate, as copy, check
 * and verify run it, counts each row once, so a plan cut in one order and read in another would count rows twice or
 * not at all), and keys that come later have a range too. Tables of four kinds of key: random uuids, text in a
 * collation that is not C (ICU's root: {@code a < B < c}, where C says {@code B < a < c}), an integer sequence, and a
 * composite key.
 */
class KeyRangePlanIT {
    private static final long PER_SLOT = 4_000;

    @Test
    void randomUuidsAreCutIntoRangesOfTheRowsPerSlotExactly() throws Exception {
        check(
                "id uuid PRIMARY KEY, n int",
                "SELECT gen_random_uuid(), g FROM generate_series(1, 30000) g",
                30_000,
                "INSERT INTO %s VALUES ('00000000-0000-0000-0000-000000000000', -1),"
                        + " ('ffffffff-ffff-ffff-ffff-ffffffffffff', -2)");
    }

    @Test
    void textKeysAreCutInTheirColumnsCollation() throws Exception {
        check(
                "id text COLLATE \"und-x-icu\" PRIMARY KEY, n int",
                // mixed case and punctuation: their order in ICU's root collation is not their order in C
                "SELECT (ARRAY['a','B','c','D','_e','F'])[1 + g % 6] || '-' || md5(g::text), g"
                        + " FROM generate_series(1, 30000) g",
                30_000,
                "INSERT INTO %s VALUES ('', -1), ('ZZZZ', -2), ('~', -3), ('Ω', -4)");
    }

    @Test
    void aSequenceKeyWithoutATimeColumnIsCutAndItsNewKeysLandInTheLastRange() throws Exception {
        check(
                "id bigint PRIMARY KEY, n int",
                "SELECT g, g FROM generate_series(1, 30000) g",
                30_000,
                "INSERT INTO %s VALUES (30001, -1), (9000000000, -2), (-5, -3)");
    }

    @Test
    void aCompositeKeyIsCutAsAWholeFirstColumnThenTheRest() throws Exception {
        // three tenants of very different sizes: cut on the first column alone, one range would hold most rows
        check(
                "tenant int, id text, n int, PRIMARY KEY (tenant, id)",
                "SELECT CASE WHEN g % 10 = 0 THEN 1 WHEN g % 10 = 1 THEN 2 ELSE 3 END, md5(g::text), g"
                        + " FROM generate_series(1, 30000) g",
                30_000,
                "INSERT INTO %s VALUES (0, 'x', -1), (3, '', -2), (99, 'z', -3)");
    }

    /** Above the exact limit the plan cuts a sample of the table's pages at its quantiles: within 2x, far closer. */
    @Test
    void aSampledPlanHoldsAboutTheRowsPerSlotInEachRange() throws Exception {
        try (MoverFixture f = new MoverFixture().set("slots.timeFrom", "none")) {
            try (Connection c = new SourceSession(f.config().source()).open();
                    Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + f.table + " (id uuid PRIMARY KEY, n int)");
                st.execute("INSERT INTO " + f.table + " SELECT gen_random_uuid(), g FROM generate_series(1, 200000) g");
                st.execute("ANALYZE " + f.table);
                SourceTable table = SourceTable.inspect(c, f.config());
                KeyRanges sampled = KeyRangePlanner.plan(c, table.name(), table.key(), 20_000, 0);
                assertThat(sampled.count()).isEqualTo(10);
                List<Long> counts = counts(c, table, sampled);
                assertThat(counts.stream().mapToLong(Long::longValue).sum()).isEqualTo(200_000);
                assertThat(counts).allSatisfy(n -> assertThat(n).isBetween(10_000L, 40_000L));
            }
        }
    }

    /**
     * The default (0) plans ranges of 100,000 rows, fewer on a small table so that it has 64 of at least 1,000: a
     * 200,000-row table gets 64 of 3,125 (its statistics' estimate), a 20,000-row one 20 of 1,000.
     */
    @Test
    void theDefaultGivesASmallTableEnoughRangesForEveryWorker() throws Exception {
        try (MoverFixture f = new MoverFixture().set("slots.timeFrom", "none")) {
            assertThat(f.config().slots().rowsPerSlot()).isZero();
            try (Connection c = new SourceSession(f.config().source()).open();
                    Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + f.table + " (id uuid PRIMARY KEY, n int)");
                st.execute("INSERT INTO " + f.table + " SELECT gen_random_uuid(), g FROM generate_series(1, 200000) g");
                st.execute("ANALYZE " + f.table);
                KeyRanges ranges =
                        (KeyRanges) SourceTable.inspect(c, f.config()).keyspace();
                assertThat(ranges.count()).isEqualTo(64);
                assertThat(ranges.rowsPerSlot()).isEqualTo(3_125);
                st.execute("DELETE FROM " + f.table + " WHERE n > 20000");
                st.execute("VACUUM ANALYZE " + f.table);
                ranges = (KeyRanges) SourceTable.inspect(c, f.config()).keyspace();
                assertThat(ranges.count()).isEqualTo(20);
                assertThat(ranges.rowsPerSlot()).isEqualTo(1_000);
            }
        }
    }

    private void check(String columns, String rows, long count, String later) throws Exception {
        try (MoverFixture f =
                new MoverFixture().set("slots.timeFrom", "none").set("slots.rowsPerSlot", Long.toString(PER_SLOT))) {
            try (Connection c = new SourceSession(f.config().source()).open();
                    Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + f.table + " (" + columns + ")");
                st.execute("INSERT INTO " + f.table + " " + rows);
                st.execute("ANALYZE " + f.table);
                SourceTable table = SourceTable.inspect(c, f.config());
                KeyRanges ranges = (KeyRanges) table.keyspace();
                assertThat(ranges.count()).isEqualTo((int) ((count + PER_SLOT - 1) / PER_SLOT));
                List<Long> counts = counts(c, table, ranges);
                for (int i = 0; i < counts.size() - 1; i++)
                    assertThat(counts.get(i)).as("rows in " + Slot.range(i)).isEqualTo(PER_SLOT);
                assertThat(counts.stream().mapToLong(Long::longValue).sum()).isEqualTo(count);

                // keys below the first cut, above the last, and in between: each in exactly one range
                st.execute(String.format(later, f.table));
                long now = count(c, "SELECT count(*) FROM " + table.name());
                assertThat(counts(c, table, ranges).stream()
                                .mapToLong(Long::longValue)
                                .sum())
                        .as("rows counted once across the ranges")
                        .isEqualTo(now);

                // check's survey reads the ranges as the copy will
                TableSurvey survey = new TableSurvey(table, f.config().target());
                long surveyed = 0;
                for (Slot s : ranges.range()) surveyed += survey.slot(c, s).rows();
                assertThat(surveyed).isEqualTo(now);
            }
        }
    }

    private static List<Long> counts(Connection c, SourceTable table, KeyRanges ranges) throws Exception {
        List<Long> counts = new ArrayList<>();
        for (int i = 0; i < ranges.count(); i++) {
            Slot s = Slot.range(i);
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT count(*) FROM " + table.name() + " AS src WHERE " + ranges.predicate(s))) {
                Object[] bounds = ranges.bounds(s);
                for (int b = 0; b < bounds.length; b++) ps.setObject(b + 1, bounds[b]);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    counts.add(rs.getLong(1));
                }
            }
        }
        return counts;
    }

    private static long count(Connection c, String sql) throws Exception {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
