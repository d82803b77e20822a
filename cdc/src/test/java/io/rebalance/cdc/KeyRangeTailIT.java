package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.SourceTable;
import io.rebalance.testkit.RoomEventsComparison;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The tail on key ranges ({@code slots.timeFrom: none}): each change lands with the range Postgres puts its key in
 * (the stored ranges, compared in the key's own order) as its slot, inserts, updates and deletes alike, and the keys
 * it wrote wait in the run's one bucket for the copy's end, since Java cannot tell a key's range.
 */
class KeyRangeTailIT {
    @Test
    void changesLandWithTheRangePostgresPutsTheirKeyIn() throws Exception {
        try (TailFixture f = new TailFixture().set("slots.timeFrom", "none").set("slots.rowsPerSlot", "1000")) {
            // 3,000 rows planned into 3 ranges, kept, then gone: the tail's changes are all there is to compare
            try (Connection c = f.postgres()) {
                for (int i = 1; i <= 3000; i++) f.insert(c, ChangeKindsIT.id(i * 7 % 3001), "message", null, i);
            }
            f.sql("ANALYZE " + f.table);
            KeyRanges ranges = (KeyRanges) f.sourceTable().keyspace();
            assertThat(ranges.stored()).isTrue();
            assertThat(ranges.count()).isEqualTo(3);
            f.sql("DELETE FROM " + f.table);

            List<Future<?>> outcomes = new ArrayList<>();
            Tail tail = f.startTail("tail-a", outcomes);
            f.awaitStreaming();
            try (Connection c = f.postgres()) { // each insert still its own transaction, so its own change
                for (int i = 1; i <= 600; i++) f.insert(c, ChangeKindsIT.id(i * 5), "message", "{\"i\":" + i + "}", i);
            }
            f.sql("UPDATE " + f.table + " SET seq = seq + 1000 WHERE seq % 3 = 0");
            f.sql("DELETE FROM " + f.table + " WHERE seq % 7 = 0");
            f.insert(ChangeKindsIT.id(9999), "marker", null, 0);
            f.awaitItem(ChangeKindsIT.id(9999), true);

            try (Connection pg = f.services.postgres()) {
                assertThat(RoomEventsComparison.differences(pg, f.table, f.dynamo, f.table))
                        .isEmpty();
                SourceTable table = f.sourceTable();
                Map<String, String> ranged = new HashMap<>();
                try (Statement st = pg.createStatement();
                        ResultSet rs = st.executeQuery(
                                "SELECT id, " + ranges.slotSql("src.") + " FROM " + table.name() + " AS src")) {
                    while (rs.next())
                        ranged.put(rs.getString(1), Slot.range(rs.getInt(2)).name());
                }
                assertThat(ranged.values()).as("rows in every range").contains("r000000", "r000001", "r000002");
                String attribute = f.config().target().slotAttribute();
                ranged.forEach((id, slot) -> {
                    Map<String, AttributeValue> item = f.item(id);
                    assertThat(item.get(attribute).s()).as("slot of " + id).isEqualTo(slot);
                });
            }
            assertThat(f.redis.smembers(tail.keys().touchedSlots())).containsExactly(TouchedKeys.RUN_BUCKET);
        }
    }
}
