package io.rebalance.verifier;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.slot.Slot;
import io.rebalance.verifier.Difference.Kind;
import java.sql.Connection;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Verification with bigint keys (N in DynamoDB, compared by value when splitting), slotted either by the
 * snowflake time inside the id or by a timestamp column, and with the slot index sharded 4 ways: a faithful copy
 * matches, a deleted and a changed item (and, sharded, one in the wrong shard) are found exactly (through the
 * splitting, the slots being larger than a leaf), and repair restores MATCH. One thread: the three hours are one span,
 * fingerprinted by one query ({@link HourSpans}).
 */
class KeyspacesIT {
    static final long EPOCH = 1433806952013L;
    static final List<Slot> SLOTS =
            List.of(Slot.parse("20241020.00"), Slot.parse("20241020.01"), Slot.parse("20241020.02"));

    @ParameterizedTest
    @ValueSource(strings = {"snowflake", "column", "sharded"})
    void bigintKeysVerifyPinpointAndRepair(String mode) throws Exception {
        try (VerifierFixture f = new VerifierFixture()) {
            if (mode.equals("snowflake") || mode.equals("sharded")) {
                f.set("slots.idFormat", "snowflake").set("slots.snowflake.epochMillis", Long.toString(EPOCH));
                if (mode.equals("sharded")) f.set("target.slotShards", "4");
            } else {
                f.set("slots.timeFrom", "column").set("slots.timeColumn", "created_at");
            }
            try (Connection c = f.services.postgres();
                    Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + f.table + " (id int8 PRIMARY KEY, note text, amount numeric,"
                        + " created_at timestamptz NOT NULL)");
                // 9,000 rows a second apart from 00:00: 3,600 in each full slot, far more than a leaf of the splitting
                st.execute("INSERT INTO " + f.table + " SELECT ((ms - " + EPOCH + ") << 23) | (n % 1024),"
                        + " 'row ' || n, n / 100.0, to_timestamp(ms / 1000.0) FROM (SELECT n,"
                        + " extract(epoch FROM timestamptz '2024-10-20 00:00:00+00')::int8 * 1000 + n * 1000 AS ms"
                        + " FROM generate_series(0, 8999) n) x");
            }
            f.copy(SLOTS);
            Verifier verifier = f.verifier(SlotVerifier.BeforeRecheck.NONE);
            List<SlotResult> clean = verifier.verify(SLOTS, 1, false, r -> {});
            assertThat(clean).extracting(SlotResult::verdict).containsOnly(SlotResult.Verdict.MATCH);
            assertThat(clean).extracting(SlotResult::sourceRows).containsExactly(1800L, 3600L, 3600L);

            String boundary = "900000001";
            if (mode.equals("column")) { // 00:59:59.9996 is in slot 00 (by key as well: its millisecond is floored)
                try (Connection c = f.services.postgres();
                        Statement st = c.createStatement()) {
                    st.execute("INSERT INTO " + f.table + " VALUES (" + boundary + ", 'edge', 1,"
                            + " timestamptz '2024-10-20 00:59:59.9996+00')");
                }
                f.write(List.of(SLOTS.get(0)));
            }

            String deleted = id(1234);
            String changed = id(5000);
            f.dynamo.deleteItem(b -> b.tableName(f.table).key(Map.of("id", AttributeValue.fromN(deleted))));
            Map<String, AttributeValue> item = new HashMap<>(f.dynamo
                    .getItem(b -> b.tableName(f.table).key(Map.of("id", AttributeValue.fromN(changed))))
                    .item());
            item.put("amount", AttributeValue.fromN("50.001"));
            f.dynamo.putItem(b -> b.tableName(f.table).item(item));

            List<org.assertj.core.groups.Tuple> expected = new java.util.ArrayList<>(List.of(
                    org.assertj.core.groups.Tuple.tuple(deleted, Kind.MISSING),
                    org.assertj.core.groups.Tuple.tuple(changed, Kind.DIFFERENT)));
            String misplaced = id(7000);
            if (mode.equals("sharded")) { // right slot, wrong shard: found by the slot's other Query, still wrong
                Map<String, AttributeValue> m = new HashMap<>(f.dynamo
                        .getItem(b -> b.tableName(f.table).key(Map.of("id", AttributeValue.fromN(misplaced))))
                        .item());
                String value = m.get("_slot").s();
                assertThat(value).matches("20241020\\.01#[0-3]");
                int shard = Integer.parseInt(value.substring(value.indexOf('#') + 1));
                m.put("_slot", AttributeValue.fromS("20241020.01#" + (shard + 1) % 4));
                f.dynamo.putItem(b -> b.tableName(f.table).item(m));
                expected.add(org.assertj.core.groups.Tuple.tuple(misplaced, Kind.DIFFERENT));
            }

            List<Difference> found = CorruptionIT.differences(verifier.verify(SLOTS, 1, false, r -> {}));
            assertThat(found)
                    .extracting(Difference::id, Difference::kind)
                    .containsExactlyInAnyOrderElementsOf(expected);
            if (mode.equals("sharded")) {
                assertThat(found.stream()
                                .filter(d -> d.id().equals(misplaced))
                                .findFirst()
                                .orElseThrow()
                                .attributes())
                        .extracting(Difference.AttributeDifference::attribute)
                        .containsExactly("_slot");
            }
            assertThat(found.stream()
                            .filter(d -> d.id().equals(changed))
                            .findFirst()
                            .orElseThrow()
                            .attributes())
                    .containsExactly(new Difference.AttributeDifference("amount", "N2:50", "N6:50.001"));

            // the cutover's window compares by key: the same differences, whatever the keyspace
            List<String> keys = new java.util.ArrayList<>(List.of(id(10), deleted, changed, misplaced, id(8000)));
            if (mode.equals("column")) keys.add(boundary);
            try (Connection session = f.session()) {
                assertThat(verifier.compareKeys(session, keys, 2))
                        .extracting(Difference::id, Difference::kind)
                        .containsExactlyInAnyOrderElementsOf(expected);
            }

            assertThat(verifier.verify(SLOTS, 1, true, r -> {}))
                    .allSatisfy(r -> assertThat(r.verdict()).isEqualTo(SlotResult.Verdict.MATCH));
            assertThat(CorruptionIT.differences(verifier.verify(SLOTS, 1, false, r -> {})))
                    .isEmpty();
        }
    }

    static String id(int n) {
        long ms = java.time.Instant.parse("2024-10-20T00:00:00Z").toEpochMilli() + n * 1000L;
        return Long.toString(((ms - EPOCH) << 23) | (n % 1024));
    }
}
