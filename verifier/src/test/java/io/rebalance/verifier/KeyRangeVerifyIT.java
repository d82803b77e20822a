package io.rebalance.verifier;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.SourceTable;
import io.rebalance.verifier.Difference.Kind;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Verification on key ranges ({@code slots.timeFrom: none}): each range fingerprinted by its own index range scan, a
 * faithful copy matches range by range, a deleted, a changed and an extra item are found exactly (the splitting runs
 * inside a range in the key's code-point order, which the DynamoDB side shares), the cutover's comparison by key finds
 * the same, and repair restores MATCH. Random uuids, and text in a collation that is not C.
 */
class KeyRangeVerifyIT {
    @ParameterizedTest
    @ValueSource(strings = {"uuid", "text"})
    void rangesVerifyPinpointAndRepair(String kind) throws Exception {
        try (VerifierFixture f = new VerifierFixture()) {
            f.set("slots.timeFrom", "none").set("slots.rowsPerSlot", "3000");
            try (Connection c = f.services.postgres();
                    Statement st = c.createStatement()) {
                if (kind.equals("uuid")) {
                    st.execute("CREATE TABLE " + f.table + " (id uuid PRIMARY KEY, note text, amount numeric)");
                    st.execute("INSERT INTO " + f.table + " SELECT gen_random_uuid(), 'row ' || n, n / 100.0"
                            + " FROM generate_series(1, 9000) n");
                } else {
                    st.execute("CREATE TABLE " + f.table + " (id text COLLATE \"und-x-icu\" PRIMARY KEY, note text,"
                            + " amount numeric)");
                    st.execute("INSERT INTO " + f.table + " SELECT (ARRAY['a','B','c','D','_e','F'])[1 + n % 6] ||"
                            + " '-' || md5(n::text), 'row ' || n, n / 100.0 FROM generate_series(1, 9000) n");
                }
                st.execute("ANALYZE " + f.table);
            }
            SourceTable source = f.sourceTable();
            KeyRanges ranges = (KeyRanges) source.keyspace();
            List<Slot> slots = new ArrayList<>();
            for (Slot s : ranges.range()) slots.add(s);
            assertThat(slots).hasSize(3);
            f.copy(slots);

            Verifier verifier = f.verifier(SlotVerifier.BeforeRecheck.NONE);
            List<SlotResult> clean = verifier.verify(slots, 1, false, r -> {});
            assertThat(clean).extracting(SlotResult::verdict).containsOnly(SlotResult.Verdict.MATCH);
            assertThat(clean).extracting(SlotResult::sourceRows).containsOnly(3000L);

            List<String> ids = ids(f);
            String deleted = ids.get(100);
            String changed = ids.get(4000);
            String extra = kind.equals("uuid") ? "00000000-0000-0000-0000-00000000abcd" : "0-extra";
            String attribute = f.config().target().slotAttribute();
            Map<String, AttributeValue> keyOf = key(deleted);
            f.dynamo.deleteItem(b -> b.tableName(f.table).key(keyOf));
            Map<String, AttributeValue> item = new HashMap<>(f.dynamo
                    .getItem(b -> b.tableName(f.table).key(key(changed)))
                    .item());
            item.put("amount", AttributeValue.fromN("50.001"));
            f.dynamo.putItem(b -> b.tableName(f.table).item(item));
            Map<String, AttributeValue> ghost = new HashMap<>(item);
            ghost.put("id", AttributeValue.fromS(extra));
            ghost.put(attribute, AttributeValue.fromS(Slot.range(0).name())); // where its key would be
            f.dynamo.putItem(b -> b.tableName(f.table).item(ghost));

            List<Tuple> expected = List.of(
                    Tuple.tuple(deleted, Kind.MISSING),
                    Tuple.tuple(changed, Kind.DIFFERENT),
                    Tuple.tuple(extra, Kind.EXTRA));
            assertThat(CorruptionIT.differences(verifier.verify(slots, 1, false, r -> {})))
                    .extracting(Difference::id, Difference::kind)
                    .containsExactlyInAnyOrderElementsOf(expected);
            try (Connection session = f.session()) {
                assertThat(verifier.compareKeys(session, List.of(ids.get(10), deleted, changed, extra), 2))
                        .extracting(Difference::id, Difference::kind)
                        .containsExactlyInAnyOrderElementsOf(expected);
            }
            assertThat(verifier.verify(slots, 1, true, r -> {}))
                    .allSatisfy(r -> assertThat(r.verdict()).isEqualTo(SlotResult.Verdict.MATCH));
            assertThat(CorruptionIT.differences(verifier.verify(slots, 1, false, r -> {})))
                    .isEmpty();
        }
    }

    /**
     * Adjacent ranges of a uuid or integer key are fingerprinted by one query ({@code width_bucket} over the cuts
     * between them); each span, open-ended or not, gives every range the fingerprint a query of its own gives it.
     */
    @ParameterizedTest
    @ValueSource(strings = {"uuid", "int", "text"})
    void aSpanOfRangesFingerprintsEachAsItsOwnQueryDoes(String kind) throws Exception {
        try (VerifierFixture f = new VerifierFixture()) {
            f.set("slots.timeFrom", "none").set("slots.rowsPerSlot", "1000");
            String id =
                    switch (kind) {
                        case "uuid" -> "gen_random_uuid()";
                        case "int" -> "(n * 7919) % 5003";
                        default -> "md5(n::text)";
                    };
            try (Connection c = f.services.postgres();
                    Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + f.table + " (id "
                        + (kind.equals("text") ? "text COLLATE \"und-x-icu\"" : kind) + " PRIMARY KEY, note text)");
                st.execute(
                        "INSERT INTO " + f.table + " SELECT " + id + ", 'row ' || n FROM generate_series(1, 5000) n");
                st.execute("ANALYZE " + f.table);
            }
            SourceTable source = f.sourceTable();
            KeyRanges ranges = (KeyRanges) source.keyspace();
            assertThat(ranges.count()).isEqualTo(5);
            assertThat(ranges.bucketable()).isEqualTo(!kind.equals("text"));
            var fingerprints = new SourceFingerprints(
                    source, new CanonicalSql(f.config().target().forms()), RowHash.TEXT_HASH);
            try (Connection c = f.session()) {
                Map<Slot, Fingerprint> alone = new HashMap<>();
                for (Slot s : ranges.range()) alone.put(s, fingerprints.slot(c, s));
                assertThat(alone.values()).extracting(Fingerprint::count).containsOnly(1000L);
                for (int lo = 0; lo < 5; lo++) {
                    for (int hi = lo + 1; hi < 5; hi++) {
                        Map<Slot, Fingerprint> span = fingerprints.hours(c, Slot.range(lo), Slot.range(hi));
                        for (int i = lo; i <= hi; i++)
                            assertThat(span.get(Slot.range(i)))
                                    .as("range %d of the span %d..%d", i, lo, hi)
                                    .isEqualTo(alone.get(Slot.range(i)));
                        assertThat(span).hasSize(hi - lo + 1);
                    }
                }
            }
        }
    }

    private static Map<String, AttributeValue> key(String id) {
        return Map.of("id", AttributeValue.fromS(id));
    }

    private static List<String> ids(VerifierFixture f) throws Exception {
        List<String> ids = new ArrayList<>();
        try (Connection c = f.services.postgres();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT id::text FROM " + f.table + " ORDER BY id")) {
            while (rs.next()) ids.add(rs.getString(1));
        }
        return ids;
    }
}
