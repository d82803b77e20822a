package io.rebalance.verifier;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.Ulid;
import io.rebalance.verifier.Difference.Kind;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A table like the Chinook sample's {@code invoice}: 412 rows over five years, 43,824 hours. Every hour is proven
 * with a handful of Postgres queries and DynamoDB requests (counted where they happen: Postgres' own scan counters of
 * the table, and every HTTP request the DynamoDB client sends), at most one per 100 empty hours; a changed item and
 * one moved to another hour of the same month are still found, by id and attribute.
 */
class SparseSurveyIT {
    private static final Instant FROM = Instant.parse("2009-01-01T00:00:00Z");
    private static final Instant TO = Instant.parse("2014-01-01T00:00:00Z");
    private static final int ROWS = 412;

    @ParameterizedTest
    @ValueSource(strings = {"column", "ulid", "sharded"})
    void aSparseTableIsProvenWithQueriesInProportionToItsRows(String mode) throws Exception {
        try (VerifierFixture f = new VerifierFixture()) {
            boolean ulid = mode.equals("ulid");
            if (!ulid) f.set("slots.timeFrom", "column").set("slots.timeColumn", "invoice_date");
            if (mode.equals("sharded")) f.set("target.slotShards", "4");
            long step = (TO.toEpochMilli() - FROM.toEpochMilli()) / ROWS;
            List<String> ids = new ArrayList<>();
            TreeSet<Slot> populated = new TreeSet<>();
            try (Connection c = f.services.postgres();
                    Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + f.table + " (id " + (ulid ? "text" : "int8") + " PRIMARY KEY,"
                        + " customer_id int NOT NULL, invoice_date timestamp NOT NULL, billing_city text,"
                        + " total numeric(10,2) NOT NULL)");
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + f.table
                        + " VALUES (CAST(? AS " + (ulid ? "text" : "int8") + "), ?, ?::timestamptz AT TIME ZONE 'UTC',"
                        + " ?, ?)")) {
                    for (int n = 0; n < ROWS; n++) {
                        Instant at = Instant.ofEpochMilli(FROM.toEpochMilli() + n * step + (n % 7) * 60_000L);
                        String id = ulid ? Ulid.of(at.toEpochMilli(), n, n * 31L) : Integer.toString(n + 1);
                        ps.setString(1, id);
                        ps.setInt(2, 1 + n % 59);
                        ps.setString(3, at.toString());
                        ps.setString(4, n % 5 == 0 ? null : "City " + n % 17);
                        ps.setBigDecimal(5, new java.math.BigDecimal(n % 25 + ".98"));
                        ps.addBatch();
                        ids.add(id);
                        populated.add(Slot.containing(at));
                    }
                    ps.executeBatch();
                }
            }
            List<Slot> hours = new ArrayList<>();
            for (Slot s = Slot.containing(FROM); s.start().isBefore(TO); s = s.newer()) hours.add(s);
            assertThat(hours).hasSize(43_824);
            f.copy(new ArrayList<>(populated)); // the copy of the hours with rows: the others hold nothing

            AtomicInteger requests = new AtomicInteger();
            try (DynamoDbClient counted = counting(requests, f)) {
                Verifier verifier = new Verifier(
                        f.config(),
                        f.sourceTable(),
                        counted,
                        VerifyOptions.of(InFlight.settle(Duration.ZERO)).surveyingSparse(),
                        SlotVerifier.BeforeRecheck.NONE);

                long scans = f.scans();
                List<SlotResult> clean = verifier.verify(hours, 4, false, r -> {});
                assertThat(clean).hasSize(hours.size()).allSatisfy(r -> assertThat(r.verdict())
                        .as(r.toString())
                        .isEqualTo(SlotResult.Verdict.MATCH));
                assertThat(clean.stream().mapToLong(SlotResult::sourceRows).sum())
                        .isEqualTo(ROWS);
                int budget = hours.size() / 100;
                assertThat(requests.get()).as("DynamoDB requests").isPositive().isLessThanOrEqualTo(budget);
                assertThat(f.scansSince(scans))
                        .as("Postgres scans of the table")
                        .isLessThanOrEqualTo(budget);

                // a changed item, and one moved to another hour of its month: found by id and attribute
                String changed = ids.get(100);
                String moved = ids.get(300);
                Map<String, AttributeValue> c1 = new HashMap<>(item(f, changed, ulid));
                String changedSlot = c1.get("_slot").s().replaceAll("#.*", "");
                c1.put("total", AttributeValue.fromN("1.5"));
                f.dynamo.putItem(b -> b.tableName(f.table).item(c1));
                Map<String, AttributeValue> c2 = new HashMap<>(item(f, moved, ulid));
                String slotValue = c2.get("_slot").s();
                Slot own = Slot.parse(slotValue.replaceAll("#.*", ""));
                Slot other = own.start().atZone(java.time.ZoneOffset.UTC).getDayOfMonth() > 1
                        ? Slot.containing(own.start().minusSeconds(86_400))
                        : Slot.containing(own.start().plusSeconds(86_400));
                c2.put(
                        "_slot",
                        AttributeValue.fromS(
                                other.name() + slotValue.substring(own.name().length())));
                f.dynamo.putItem(b -> b.tableName(f.table).item(c2));

                requests.set(0);
                scans = f.scans();
                List<SlotResult> found = verifier.verify(hours, 4, false, r -> {});
                assertThat(found.stream().filter(r -> r.verdict() == SlotResult.Verdict.MISMATCH))
                        .extracting(SlotResult::slot)
                        .containsExactlyInAnyOrder(changedSlot, own.name(), other.name());
                assertThat(CorruptionIT.differences(found))
                        .extracting(Difference::id, Difference::kind)
                        .containsOnly(
                                org.assertj.core.groups.Tuple.tuple(changed, Kind.DIFFERENT),
                                org.assertj.core.groups.Tuple.tuple(moved, Kind.DIFFERENT));
                assertThat(requests.get()).as("DynamoDB requests").isLessThanOrEqualTo(budget);
                assertThat(f.scansSince(scans))
                        .as("Postgres scans of the table")
                        .isLessThanOrEqualTo(budget);
            }
        }
    }

    private static Map<String, AttributeValue> item(VerifierFixture f, String id, boolean ulid) {
        AttributeValue key = ulid ? AttributeValue.fromS(id) : AttributeValue.fromN(id);
        return f.dynamo
                .getItem(b -> b.tableName(f.table).key(Map.of("id", key)).consistentRead(true))
                .item();
    }

    private static DynamoDbClient counting(AtomicInteger requests, VerifierFixture f) {
        ExecutionInterceptor counter = new ExecutionInterceptor() {
            @Override
            public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
                requests.incrementAndGet(); // every HTTP request sent, retries included
            }
        };
        return DynamoDbClient.builder()
                .endpointOverride(java.net.URI.create(f.services.dynamo.endpoint()))
                .region(software.amazon.awssdk.regions.Region.US_EAST_1)
                .credentialsProvider(software.amazon.awssdk.auth.credentials.StaticCredentialsProvider.create(
                        software.amazon.awssdk.auth.credentials.AwsBasicCredentials.create("local", "local")))
                .overrideConfiguration(o -> o.addExecutionInterceptor(counter))
                .build();
    }
}
