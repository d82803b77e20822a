package io.rebalance.verifier;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.RoomEventsGenerator;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A fingerprint of many rows groups them by hash into its few hours or parts: it never sorts the rows first. The
 * table's rows lie in random key order (as a table written out of order does), the table is analyzed, and the session's
 * work_mem is small, as a production table's rows are many against a server's work_mem: grouping the table's rows
 * directly, the planner counts a group per key and sorts every row, spilling to disk; the fingerprint queries
 * must not. Each plan is then run and must agree with the hours' fingerprints taken one hour at a time.
 */
class FingerprintPlanIT {
    private static final Instant END = Instant.parse("2024-10-20T00:00:00Z");
    private static final int HOURS = 24;

    @Test
    void fingerprintsHashTheirGroupsInsteadOfSortingTheRows() throws Exception {
        try (VerifierFixture f = new VerifierFixture()) {
            try (Connection c = f.services.postgres()) {
                RoomEventsGenerator.create(c, f.table, 20_000, END, HOURS, 11); // analyzed, in random key order
            }
            SourceTable table = f.sourceTable();
            var fingerprints = new SourceFingerprints(
                    table, new CanonicalSql(f.config().target().forms()), RowHash.TEXT_HASH);
            List<Slot> hours = new ArrayList<>();
            for (Slot s = Slot.containing(END.minusMillis(1)); hours.size() < HOURS; s = s.older()) hours.add(0, s);
            Slot busiest = hours.get(HOURS / 2);
            List<String> splits = new ArrayList<>();
            try (Connection c = f.session();
                    Statement st = c.createStatement()) {
                try (ResultSet rs =
                        st.executeQuery("SELECT id FROM " + f.table + " ORDER BY id LIMIT 15 OFFSET 9000")) {
                    while (rs.next()) splits.add(rs.getString(1));
                }
                st.execute("SET work_mem = '64kB'");

                try (PreparedStatement ps = c.prepareStatement("EXPLAIN " + fingerprints.hoursSql())) {
                    fingerprints.bindHours(c, ps, hours);
                    assertThat(plan(ps)).contains("HashAggregate").doesNotContain("Sort");
                }
                KeyRange all = KeyRange.ALL;
                try (PreparedStatement ps =
                        c.prepareStatement("EXPLAIN " + fingerprints.partsSql(busiest, all, splits.size()))) {
                    fingerprints.bindParts(ps, busiest, all, splits);
                    assertThat(plan(ps)).contains("HashAggregate").doesNotContain("Sort");
                }

                var byHour = fingerprints.hours(c, hours.get(0), hours.get(HOURS - 1));
                for (Slot hour : hours) {
                    assertThat(byHour.getOrDefault(hour, Fingerprint.EMPTY))
                            .as("hour %s", hour)
                            .isEqualTo(fingerprints.slot(c, hour));
                }
                List<Fingerprint> parts = fingerprints.parts(c, busiest, all, splits);
                assertThat(parts).hasSize(splits.size() + 1);
                assertThat(parts.stream().reduce(Fingerprint.EMPTY, Fingerprint::add))
                        .isEqualTo(fingerprints.slot(c, busiest));
                assertThat(parts.stream().mapToLong(Fingerprint::count).sum()).isPositive();
            }
        }
    }

    private static String plan(PreparedStatement explain) throws Exception {
        StringBuilder out = new StringBuilder();
        try (ResultSet rs = explain.executeQuery()) {
            while (rs.next()) out.append(rs.getString(1)).append('\n');
        }
        return out.toString();
    }
}
