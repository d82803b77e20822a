package io.rebalance.verifier;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.Ulid;
import io.rebalance.verifier.Difference.Kind;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Two days of hours verified on two threads take two fingerprint queries, one per day-long span, and every hour's
 * rows are counted in their own hour: rows at an hour's first and last millisecond included. A fingerprint put in the
 * wrong hour would make both hours differ, and each would be verified alone with queries of its own, which the scan
 * count would show. A changed item in a span is still found, by id and attribute.
 */
class HourSpansIT {
    private static final Instant FROM = Instant.parse("2024-03-01T00:00:00Z");
    private static final int HOURS = 48;
    private static final int PER_HOUR = 20;

    @ParameterizedTest
    @ValueSource(strings = {"ulid", "uuid", "timestamptz", "timestamp"})
    void daysOfHoursAreFingerprintedOneSpanAQuery(String mode) throws Exception {
        try (VerifierFixture f = new VerifierFixture()) {
            boolean column = mode.startsWith("timestamp");
            if (column) f.set("slots.timeFrom", "column").set("slots.timeColumn", "at");
            List<Slot> hours = new ArrayList<>();
            for (Slot s = Slot.containing(FROM); hours.size() < HOURS; s = s.newer()) hours.add(s);
            Map<Slot, String> firstRow = new HashMap<>();
            try (Connection c = f.services.postgres();
                    Statement st = c.createStatement()) {
                String idType = mode.equals("uuid") ? "uuid" : "text";
                String atType = mode.equals("timestamp") ? "timestamp" : "timestamptz";
                st.execute("CREATE TABLE " + f.table + " (id " + idType + " PRIMARY KEY, at " + atType + " NOT NULL,"
                        + " n int NOT NULL, body jsonb)");
                String at = atType.equals("timestamp") ? "?::timestamptz AT TIME ZONE 'UTC'" : "?::timestamptz";
                try (PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO " + f.table + " VALUES (CAST(? AS " + idType + "), " + at + ", ?, ?::jsonb)")) {
                    int n = 0;
                    for (Slot hour : hours) {
                        long start = hour.start().toEpochMilli();
                        for (int i = 0; i < PER_HOUR; i++) {
                            // the first and the last millisecond of the hour, and rows between
                            long ms = i == 0 ? start : i == 1 ? start + 3_599_999 : start + i * 170_000L;
                            String id = mode.equals("uuid")
                                    ? new UUID(ms << 16 | n, n * 7L).toString()
                                    : Ulid.of(ms, n, n * 7L);
                            if (i == 0) firstRow.put(hour, id);
                            ps.setString(1, id);
                            ps.setString(2, Instant.ofEpochMilli(ms).toString());
                            ps.setInt(3, n);
                            ps.setString(4, "{\"n\": " + n + ", \"tags\": [\"a\", " + (n % 3) + ".50]}");
                            ps.addBatch();
                            n++;
                        }
                    }
                    ps.executeBatch();
                }
                if (column) st.execute("ANALYZE " + f.table); // the others count their rows: never analyzed
            }
            f.copy(hours);
            Verifier verifier = f.verifier(SlotVerifier.BeforeRecheck.NONE);
            List<Slot> newestFirst = new ArrayList<>(hours);
            java.util.Collections.reverse(newestFirst);
            assertThat(verifier.spans(newestFirst, 2)).hasSize(2).allSatisfy(s -> assertThat(s)
                    .hasSize(24));

            long scans = f.scans();
            long began = System.currentTimeMillis();
            List<SlotResult> clean = verifier.verify(newestFirst, 2, false, r -> {});
            long wall = System.currentTimeMillis() - began;
            assertThat(clean).hasSize(HOURS).allSatisfy(r -> {
                assertThat(r.verdict()).as(r.toString()).isEqualTo(SlotResult.Verdict.MATCH);
                assertThat(r.sourceRows()).as(r.slot()).isEqualTo(PER_HOUR);
            });
            // each slot's ms is its own (its share of the span's query and its items' read), not the time since its
            // span's query began: on two threads, the slots' times add up to at most twice the call's
            assertThat(clean.stream().mapToLong(SlotResult::tookMillis).sum())
                    .as("the slots' ms added up, the call taking %d ms", wall)
                    .isLessThanOrEqualTo(2 * wall);
            // two spans, and on the table never analyzed the count of its rows
            assertThat(f.scansSince(scans)).as("Postgres scans of the table").isLessThanOrEqualTo(3);

            Slot corrupted = hours.get(30);
            String id = firstRow.get(corrupted);
            Map<String, AttributeValue> item = new HashMap<>(f.item(id));
            item.put("n", AttributeValue.fromN("-1"));
            f.dynamo.putItem(b -> b.tableName(f.table).item(item));
            scans = f.scans();
            List<SlotResult> found = verifier.verify(newestFirst, 2, false, r -> {});
            assertThat(found.stream().filter(r -> r.verdict() != SlotResult.Verdict.MATCH))
                    .extracting(SlotResult::slot, SlotResult::verdict)
                    .containsExactly(Tuple.tuple(corrupted.name(), SlotResult.Verdict.MISMATCH));
            assertThat(CorruptionIT.differences(found)).singleElement().satisfies(d -> {
                assertThat(d.id()).isEqualTo(id);
                assertThat(d.kind()).isEqualTo(Kind.DIFFERENT);
                assertThat(d.attributes())
                        .extracting(Difference.AttributeDifference::attribute)
                        .containsExactly("n");
            });
            // the spans, and the one hour that differs verified alone (its fingerprint, pinpointing, re-check)
            assertThat(f.scansSince(scans)).as("Postgres scans of the table").isLessThanOrEqualTo(3 + 8);
        }
    }
}
