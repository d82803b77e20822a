package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotRange;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The run's range and the planner's look at the table's ends read the keys in their own order. A bigint key selected
 * as text under its own name and ordered by that bare name sorts as text ({@code "10" < "9"}): time-ordered ids of
 * different lengths (the first hours after the layout's epoch have fewer digits) then gave a range that ended before
 * it began ("holds no slot") or one that left rows out.
 */
class RangeOrderIT {
    private static final Instant EPOCH = Instant.parse("2024-01-01T00:00:00Z");

    private static long id(Instant t) {
        return (t.toEpochMilli() - EPOCH.toEpochMilli()) << 23;
    }

    @Test
    void bigintIdsOfDifferentLengthsGiveTheRangeOfTheirTimes() throws Exception {
        Instant early = EPOCH.plus(Duration.ofHours(1)); // 14 digits
        Instant late = EPOCH.plus(Duration.ofDays(30)); // 17 digits
        try (MoverFixture f =
                new MoverFixture().set("slots.snowflake.epochMillis", Long.toString(EPOCH.toEpochMilli()))) {
            MigrationConfig config = f.config();
            try (Connection c = new SourceSession(config.source()).open()) {
                try (Statement st = c.createStatement()) {
                    st.execute("CREATE TABLE " + f.table + " (id bigint PRIMARY KEY, body text)");
                    st.execute("INSERT INTO " + f.table + " VALUES (" + id(early) + ", 'a'), (" + id(late) + ", 'b'),"
                            + " (" + id(early.plus(Duration.ofDays(3))) + ", 'c')");
                }
                assertThat(Long.toString(id(early)).length())
                        .isLessThan(Long.toString(id(late)).length());
                SourceTable table = SourceTable.inspect(c, config);
                SlotRange range = new RunPlanner(config).range(c, table);
                assertThat(range.oldest()).isEqualTo(Slot.containing(early));
                assertThat(range.newest()).isEqualTo(Slot.containing(late));

                List<String> oldestFirst = new ArrayList<>();
                try (PreparedStatement ps =
                                c.prepareStatement(((io.rebalance.core.slot.SlotKeyspace.Hours) table.keyspace())
                                        .extremesQuery(table.name(), table.key().selectText(""), false, 3));
                        ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) oldestFirst.add(rs.getString(1));
                }
                assertThat(oldestFirst)
                        .containsExactly(
                                Long.toString(id(early)),
                                Long.toString(id(early.plus(Duration.ofDays(3)))),
                                Long.toString(id(late)));
            }
        }
    }
}
