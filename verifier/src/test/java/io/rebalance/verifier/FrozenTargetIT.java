package io.rebalance.verifier;

import static io.rebalance.verifier.CorruptionIT.ZOO_SLOTS;
import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.testkit.TypeZoo;
import io.rebalance.verifier.Difference.Kind;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A rollback's comparison while DynamoDB takes no writes: a key's item is read the first time the key is compared,
 * and comparing it again reads only its row. The item stays what was read (DynamoDB changed under it here, which
 * the window rules out, shows that nothing is read again), an item DynamoDB lacked stays lacking, and a row that
 * catches up compares equal.
 */
class FrozenTargetIT {
    @Test
    void keysComparedAgainReadOnlyTheirRows() throws Exception {
        try (VerifierFixture f = new VerifierFixture()) {
            List<String> ids = copiedZoo(f);
            Verifier verifier = f.verifier(SlotVerifier.BeforeRecheck.NONE);
            Connection session = f.session();
            String lacking = ids.get(0);
            String behind = ids.get(1);
            Map<String, AttributeValue> item = f.item(lacking);
            f.dynamo.deleteItem(b -> b.tableName(f.table).key(Map.of("id", AttributeValue.fromS(lacking))));
            String before = text(f, behind);
            setText(f, behind, "not yet written back");

            FrozenTarget frozen = verifier.frozenTarget();
            List<Difference> first = frozen.compare(session, ids, 2);
            assertThat(first).extracting(Difference::id).containsExactly(lacking, behind);
            assertThat(first).extracting(Difference::kind).containsExactly(Kind.MISSING, Kind.DIFFERENT);
            assertThat(first.get(1).attributes())
                    .extracting(Difference.AttributeDifference::attribute)
                    .containsExactly("t");

            f.dynamo.putItem(b -> b.tableName(f.table).item(item)); // not read again
            assertThat(frozen.compare(session, List.of(lacking, behind), 2))
                    .as("the item read as absent stays absent; the row is read again")
                    .extracting(Difference::id, Difference::kind)
                    .containsExactly(
                            org.assertj.core.groups.Tuple.tuple(lacking, Kind.MISSING),
                            org.assertj.core.groups.Tuple.tuple(behind, Kind.DIFFERENT));

            setText(f, behind, before);
            try (Connection c = f.services.postgres();
                    PreparedStatement ps = c.prepareStatement("DELETE FROM " + f.table + " WHERE id = ?")) {
                ps.setString(1, lacking);
                ps.executeUpdate();
            }
            assertThat(frozen.compare(session, List.of(lacking, behind), 2))
                    .as("rows that caught up with the items as read")
                    .isEmpty();
        }
    }

    /**
     * Items read ahead of their rows (a rollback reads them while the reverse stream's last batches end): the compare
     * that follows reads the rows only, against the items as read then, so a row written back after the read
     * compares equal, and an item changed after it (which the window rules out) is not seen.
     */
    @Test
    void itemsReadAheadAreWhatTheRowsAreComparedWith() throws Exception {
        try (VerifierFixture f = new VerifierFixture()) {
            List<String> ids = copiedZoo(f);
            String behind = ids.get(1);
            String before = text(f, behind);
            setText(f, behind, "not yet written back");
            FrozenTarget frozen = f.verifier(SlotVerifier.BeforeRecheck.NONE).frozenTarget();

            frozen.read(ids, 2);
            Map<String, AttributeValue> changed = new java.util.HashMap<>(f.item(behind));
            changed.put("t", AttributeValue.fromS("changed after the read"));
            f.dynamo.putItem(b -> b.tableName(f.table).item(changed)); // not read again
            setText(f, behind, before); // the reverse stream's last batch writes the row back

            assertThat(frozen.compare(f.session(), ids, 2))
                    .as("every row equal to its item as read ahead")
                    .isEmpty();
        }
    }

    /**
     * On key ranges an application writing DynamoDB cannot know a key's range, so its items come without the slot
     * attribute, and the reverse stream sets it after writing the row back, also after DynamoDB closed: such an item
     * is final only once it has its slot. Read ahead without it, the item is read again, so the key compares equal
     * once the slot is set, and not before.
     */
    @Test
    void onKeyRangesAnItemWithoutItsSlotIsReadAgain() throws Exception {
        try (VerifierFixture f = new VerifierFixture()) {
            f.set("slots.timeFrom", "none").set("slots.rowsPerSlot", "1000");
            try (Connection c = f.services.postgres();
                    java.sql.Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + f.table + " (id uuid PRIMARY KEY, note text)");
                st.execute("INSERT INTO " + f.table + " SELECT gen_random_uuid(), 'row ' || n"
                        + " FROM generate_series(1, 2000) n");
                st.execute("ANALYZE " + f.table);
            }
            io.rebalance.core.slot.KeyRanges ranges =
                    (io.rebalance.core.slot.KeyRanges) f.sourceTable().keyspace();
            List<io.rebalance.core.slot.Slot> slots = new java.util.ArrayList<>();
            for (io.rebalance.core.slot.Slot s : ranges.range()) slots.add(s);
            f.copy(slots);
            String id;
            try (Connection c = f.services.postgres();
                    java.sql.Statement st = c.createStatement();
                    java.sql.ResultSet rs = st.executeQuery("SELECT id::text FROM " + f.table + " LIMIT 1")) {
                rs.next();
                id = rs.getString(1);
            }
            Map<String, AttributeValue> key = Map.of("id", AttributeValue.fromS(id));
            String attribute = f.config().target().slotAttribute();
            AttributeValue slot = f.item(id).get(attribute);
            // the application's write under DynamoDB: the item without its slot
            f.dynamo.updateItem(b -> b.tableName(f.table)
                    .key(key)
                    .updateExpression("REMOVE #s")
                    .expressionAttributeNames(Map.of("#s", attribute)));
            FrozenTarget frozen = f.verifier(SlotVerifier.BeforeRecheck.NONE).frozenTarget();

            frozen.read(List.of(id), 2);
            assertThat(frozen.compare(f.session(), List.of(id), 2))
                    .as("the item has no slot yet")
                    .extracting(Difference::id)
                    .containsExactly(id);
            // the reverse stream's mend, after the read
            f.dynamo.updateItem(b -> b.tableName(f.table)
                    .key(key)
                    .updateExpression("SET #s = :s")
                    .expressionAttributeNames(Map.of("#s", attribute))
                    .expressionAttributeValues(Map.of(":s", slot)));
            assertThat(frozen.compare(f.session(), List.of(id), 2))
                    .as("the item read again, with its slot")
                    .isEmpty();
        }
    }

    /** The type zoo's rows, copied: both stores equal. */
    private static List<String> copiedZoo(VerifierFixture f) throws Exception {
        List<String> ids;
        try (Connection c = f.services.postgres()) {
            ids = TypeZoo.create(c, f.table, 1);
        }
        f.copy(ZOO_SLOTS);
        return ids;
    }

    private static String text(VerifierFixture f, String id) throws Exception {
        try (Connection c = f.services.postgres();
                PreparedStatement ps = c.prepareStatement("SELECT t FROM " + f.table + " WHERE id = ?")) {
            ps.setString(1, id);
            try (var rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private static void setText(VerifierFixture f, String id, String t) throws Exception {
        try (Connection c = f.services.postgres();
                PreparedStatement ps = c.prepareStatement("UPDATE " + f.table + " SET t = ? WHERE id = ?")) {
            ps.setString(1, t);
            ps.setString(2, id);
            ps.executeUpdate();
        }
    }
}
