package io.rebalance.verifier;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.Ulid;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.TypeZoo;
import io.rebalance.verifier.Difference.Kind;
import java.sql.Connection;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Corruptions injected straight into DynamoDB are found and pinned to the right id, kind and attribute; a
 * rewrite that keeps every value (json keys reordered, numbers spelled differently) is not a difference; repair
 * restores MATCH; a difference that disappears before the re-check (a change in flight) is not reported.
 */
class CorruptionIT {
    static final List<Slot> ZOO_SLOTS = CanonicalEncodingIT.SLOTS;

    /** One corruption of one item: what to do to it, and what the verifier must then say. */
    record Corruption(
            String name, int row, UnaryOperator<Map<String, AttributeValue>> change, Kind kind, String attr) {}

    @Test
    void eachSingleCorruptionIsPinpointedToItsIdAndAttribute() throws Exception {
        for (String mode : List.of("map", "string")) {
            try (VerifierFixture f = new VerifierFixture().set("target.json", mode)) {
                List<String> ids;
                try (Connection c = f.services.postgres()) {
                    ids = TypeZoo.create(c, f.table, 1);
                }
                f.copy(ZOO_SLOTS);
                Verifier verifier = f.verifier(SlotVerifier.BeforeRecheck.NONE);
                Connection session = f.session();
                for (Corruption k : corruptions(mode)) {
                    String id = ids.get(k.row());
                    Map<String, AttributeValue> original = f.item(id);
                    Map<String, AttributeValue> changed = k.change().apply(new HashMap<>(original));
                    String target = changed == null ? null : key(changed);
                    if (changed == null)
                        f.dynamo.deleteItem(b -> b.tableName(f.table).key(Map.of("id", s(id))));
                    else f.dynamo.putItem(b -> b.tableName(f.table).item(changed));

                    List<Difference> found = differences(verifier.verify(ZOO_SLOTS, 3, false, r -> {}));
                    String what = mode + " / " + k.name();
                    // the cutover's window compares by key: the same difference, once (its slot does not matter)
                    List<String> keys = new ArrayList<>(ids);
                    keys.add(Ulid.of(TypeZoo.BASE.toEpochMilli() + 7, 5, 5)); // in neither store: no difference
                    if (target != null && !target.equals(id)) keys.add(target);
                    List<Difference> byKey = verifier.compareKeys(session, keys, 2);
                    if (k.kind() == null) {
                        assertThat(found).as(what).isEmpty();
                        assertThat(byKey).as(what + " by key").isEmpty();
                    } else {
                        assertThat(byKey).as(what + " by key").hasSize(1);
                        assertThat(byKey.get(0).id()).as(what + " by key").isEqualTo(target == null ? id : target);
                        assertThat(byKey.get(0).kind()).as(what + " by key").isEqualTo(k.kind());
                        if (k.attr() != null) {
                            assertThat(byKey.get(0).attributes())
                                    .as(what + " by key")
                                    .extracting(Difference.AttributeDifference::attribute)
                                    .containsExactly(k.attr());
                        }
                        // an item moved to a wrong slot is wrong in both: its own slot lacks it, the other holds it
                        assertThat(found).as(what).hasSize("_slot".equals(k.attr()) ? 2 : 1);
                        for (Difference d : found) {
                            assertThat(d.id()).as(what).isEqualTo(target == null ? id : target);
                            assertThat(d.kind()).as(what).isEqualTo(k.kind());
                            if (k.attr() != null) {
                                assertThat(d.attributes())
                                        .as(what)
                                        .extracting(Difference.AttributeDifference::attribute)
                                        .containsExactly(k.attr());
                            }
                        }
                    }
                    // undo, and the table verifies again
                    if (target != null && !target.equals(id)) {
                        f.dynamo.deleteItem(b -> b.tableName(f.table).key(Map.of("id", s(target))));
                    }
                    f.dynamo.putItem(b -> b.tableName(f.table).item(original));
                    assertThat(differences(verifier.verify(ZOO_SLOTS, 3, false, r -> {})))
                            .as(what + " undone")
                            .isEmpty();
                    assertThat(verifier.compareKeys(session, keys, 2))
                            .as(what + " undone, by key")
                            .isEmpty();
                }
                session.close();
            }
        }
    }

    static List<Corruption> corruptions(String mode) {
        List<Corruption> out = new ArrayList<>();
        out.add(new Corruption("item deleted", 2, item -> null, Kind.MISSING, null));
        out.add(new Corruption(
                "item added",
                1,
                item -> {
                    item.put("id", s(Ulid.of(TypeZoo.BASE.toEpochMilli() + 3_600_000L + 999, 1, 2)));
                    return item;
                },
                Kind.EXTRA,
                null));
        out.add(new Corruption("one attribute changed", 1, set("vc", s("changed")), Kind.DIFFERENT, "vc"));
        out.add(new Corruption("NULL replaced by 'NULL'", 0, set("t", s("NULL")), Kind.DIFFERENT, "t"));
        out.add(new Corruption("'NULL' replaced by NULL", 1, set("t", nul()), Kind.DIFFERENT, "t"));
        out.add(new Corruption("empty string replaced by NULL", 1, set("vc", nul()), Kind.DIFFERENT, "vc"));
        out.add(new Corruption("trailing spaces trimmed", 2, set("t", s("trailing")), Kind.DIFFERENT, "t"));
        out.add(new Corruption(
                "number stored as a string",
                1,
                set("num", s("12345678901234567890123456789012345678")),
                Kind.DIFFERENT,
                "num"));
        out.add(new Corruption(
                "bigint rounded through a double",
                1,
                set("i8", n(new java.math.BigDecimal((double) Long.MAX_VALUE).toPlainString())), // 9223372036854775808
                Kind.DIFFERENT,
                "i8"));
        out.add(new Corruption(
                "timestamp losing microseconds",
                1,
                set("tstz", s("2024-10-20T01:02:03.123000Z")),
                Kind.DIFFERENT,
                "tstz"));
        out.add(new Corruption("bool flipped", 2, set("b", AttributeValue.fromBool(true)), Kind.DIFFERENT, "b"));
        out.add(new Corruption(
                "array element dropped",
                1,
                set("ai", AttributeValue.fromL(List.of(n("1"), n("3")))),
                Kind.DIFFERENT,
                "ai"));
        out.add(new Corruption(
                "attribute removed",
                1,
                item -> {
                    item.remove("d");
                    return item;
                },
                Kind.DIFFERENT,
                "d"));
        out.add(new Corruption(
                "attribute added",
                1,
                item -> {
                    item.put("stray", s("x"));
                    return item;
                },
                Kind.DIFFERENT,
                "stray"));
        out.add(new Corruption(
                "item moved to another slot", 1, set("_slot", s("20241020.03")), Kind.DIFFERENT, "_slot"));
        if (mode.equals("map")) {
            out.add(new Corruption(
                    "nested json number rounded",
                    1,
                    item -> {
                        Map<String, AttributeValue> jb =
                                new HashMap<>(item.get("jb").m());
                        jb.put("big", n("12345678901234567000"));
                        item.put("jb", AttributeValue.fromM(jb));
                        return item;
                    },
                    Kind.DIFFERENT,
                    "jb"));
            out.add(new Corruption(
                    "json keys reordered, numbers respelled (same value)",
                    1,
                    item -> {
                        Map<String, AttributeValue> j = new LinkedHashMap<>();
                        j.put("b2", n("100.000"));
                        j.put("a", item.get("j").m().get("a"));
                        j.put("b", n("1.0"));
                        item.put("j", AttributeValue.fromM(j));
                        return item;
                    },
                    null,
                    null));
        } else {
            out.add(new Corruption(
                    "json keys reordered and respaced (same value)",
                    1,
                    set(
                            "jb",
                            s(
                                    "{\"s\":\"NULL\",\"f\":0.1000000000000000055511151231257827,\"e\":\"\",\"big\":12345678901234567890}")),
                    null,
                    null));
            out.add(new Corruption(
                    "json number rounded through a double",
                    1,
                    set("jb", s("{\"s\":\"NULL\",\"f\":0.1,\"e\":\"\",\"big\":12345678901234567890}")),
                    Kind.DIFFERENT,
                    "jb"));
        }
        return out;
    }

    @Test
    void randomCorruptionsOverManyRowsAreAllFoundExactlyAndRepaired() throws Exception {
        Random random = new Random(20241020);
        try (VerifierFixture f = new VerifierFixture()) {
            Instant end = Instant.parse("2024-10-20T06:00:00Z");
            try (Connection c = f.services.postgres()) {
                RoomEventsGenerator.create(c, f.table, 24_000, end, 6, 11);
            }
            List<Slot> slots = new ArrayList<>();
            for (Slot s = Slot.containing(end.minusMillis(1)); slots.size() < 6; s = s.older()) slots.add(s);
            f.copy(slots);

            List<Map<String, AttributeValue>> all = new ArrayList<>();
            for (Slot slot : slots) {
                f.dynamo
                        .queryPaginator(b -> b.tableName(f.table)
                                .indexName("by_slot")
                                .keyConditionExpression("#s = :s")
                                .expressionAttributeNames(Map.of("#s", "_slot"))
                                .expressionAttributeValues(Map.of(":s", s(slot.name()))))
                        .items()
                        .forEach(all::add);
            }
            assertThat(all).hasSize(24_000);
            java.util.Collections.shuffle(all, random);

            Map<String, String> injected = new TreeMap<>(); // id -> "KIND attr"
            for (int i = 0; i < 60; i++) {
                Map<String, AttributeValue> item = new HashMap<>(all.get(i));
                String id = key(item);
                switch (random.nextInt(7)) {
                    case 0 -> {
                        f.dynamo.deleteItem(b -> b.tableName(f.table).key(Map.of("id", s(id))));
                        injected.put(id, "MISSING");
                    }
                    case 1 -> {
                        String extra = Ulid.of(Ulid.millis(id), random.nextLong(), random.nextLong());
                        item.put("id", s(extra));
                        f.dynamo.putItem(b -> b.tableName(f.table).item(item));
                        injected.put(extra, "EXTRA");
                    }
                    case 2 -> {
                        item.put("kind", random.nextBoolean() ? nul() : s("NULL"));
                        f.dynamo.putItem(b -> b.tableName(f.table).item(item));
                        injected.put(id, "DIFFERENT kind");
                    }
                    case 3 -> {
                        item.put("seq", s(item.get("seq").n()));
                        f.dynamo.putItem(b -> b.tableName(f.table).item(item));
                        injected.put(id, "DIFFERENT seq");
                    }
                    case 4 -> {
                        String ts = item.get("created_at").s();
                        item.put("created_at", s(ts.substring(0, 23) + "000Z"));
                        f.dynamo.putItem(b -> b.tableName(f.table).item(item));
                        // a row whose microseconds were already 000 is unchanged: not a corruption
                        if (!ts.endsWith("000Z")) injected.put(id, "DIFFERENT created_at");
                    }
                    case 5 -> {
                        if (!item.get("data").hasM()) {
                            item.put("data", AttributeValue.fromM(Map.of()));
                        } else {
                            Map<String, AttributeValue> data =
                                    new HashMap<>(item.get("data").m());
                            long big = Long.parseLong(data.get("big").n());
                            data.put("big", n(String.valueOf((long) (double) big)));
                            item.put("data", AttributeValue.fromM(data));
                            if ((long) (double) big == big) {
                                f.dynamo.putItem(b -> b.tableName(f.table).item(item));
                                continue;
                            }
                        }
                        f.dynamo.putItem(b -> b.tableName(f.table).item(item));
                        injected.put(id, "DIFFERENT data");
                    }
                    default -> {
                        // same values, new spelling: map rebuilt in another order, a number with trailing zeros
                        if (item.get("data").hasM()) {
                            Map<String, AttributeValue> data =
                                    new TreeMap<>(item.get("data").m());
                            data.put("n", n(data.get("n").n() + ".000"));
                            item.put("data", AttributeValue.fromM(data));
                        }
                        f.dynamo.putItem(b -> b.tableName(f.table).item(item));
                    }
                }
            }
            assertThat(injected).hasSizeGreaterThan(30);

            Verifier verifier = f.verifier(SlotVerifier.BeforeRecheck.NONE);
            List<SlotResult> results = verifier.verify(slots, 3, false, r -> {});
            Map<String, String> reported = new TreeMap<>();
            for (Difference d : differences(results)) {
                reported.put(
                        d.id(),
                        (d.kind()
                                        + " "
                                        + String.join(
                                                ",",
                                                d.attributes().stream()
                                                        .map(Difference.AttributeDifference::attribute)
                                                        .toList()))
                                .trim());
            }
            assertThat(reported).isEqualTo(injected);

            List<SlotResult> repaired = verifier.verify(slots, 3, true, r -> {});
            assertThat(repaired).allSatisfy(r -> assertThat(r.verdict()).isEqualTo(SlotResult.Verdict.MATCH));
            assertThat(repaired.stream().mapToInt(r -> r.repaired().size()).sum())
                    .isEqualTo(injected.size());
            assertThat(differences(verifier.verify(slots, 3, false, r -> {}))).isEmpty();
            try (Connection c = f.services.postgres()) {
                assertThat(io.rebalance.testkit.RoomEventsComparison.differences(c, f.table, f.dynamo, f.table))
                        .isEmpty();
            }
        }
    }

    @Test
    void aDifferenceThatLandsBeforeTheRecheckIsNotReported() throws Exception {
        try (VerifierFixture f = new VerifierFixture()) {
            List<String> ids;
            try (Connection c = f.services.postgres()) {
                ids = TypeZoo.create(c, f.table, 2);
            }
            f.copy(ZOO_SLOTS);
            Map<String, AttributeValue> inFlight = f.item(ids.get(1));
            Map<String, AttributeValue> stale = new HashMap<>(inFlight);
            stale.put("vc", s("an older value"));
            f.dynamo.putItem(b -> b.tableName(f.table).item(stale));
            Map<String, AttributeValue> wrong = new HashMap<>(f.item(ids.get(4)));
            wrong.put("vc", s("really wrong"));
            f.dynamo.putItem(b -> b.tableName(f.table).item(wrong));

            // the change stream delivers the newer value between the fingerprint and the re-check
            Verifier verifier = f.verifier((slot, suspects) -> {
                if (suspects.stream().anyMatch(s -> s.id().equals(ids.get(1)))) {
                    f.dynamo.putItem(b -> b.tableName(f.table).item(inFlight));
                }
            });
            List<SlotResult> results = verifier.verify(ZOO_SLOTS, 1, false, r -> {});
            List<Difference> found = differences(results);
            assertThat(found).extracting(Difference::id).containsExactly(ids.get(4));
            assertThat(results.stream().mapToInt(SlotResult::resolvedOnRecheck).sum())
                    .isEqualTo(1);
            assertThat(results)
                    .filteredOn(r -> r.verdict() == SlotResult.Verdict.MATCH)
                    .hasSize(2)
                    .allSatisfy(r -> assertThat(r.walLsn()).matches("[0-9A-F]+/[0-9A-F]+"));
        }
    }

    static List<Difference> differences(List<SlotResult> results) {
        List<Difference> out = new ArrayList<>();
        for (SlotResult r : results) {
            assertThat(r.verdict()).as(r.slot() + " " + r.error()).isNotEqualTo(SlotResult.Verdict.ERROR);
            out.addAll(r.differences());
        }
        return out;
    }

    static UnaryOperator<Map<String, AttributeValue>> set(String attr, AttributeValue v) {
        return item -> {
            item.put(attr, v);
            return item;
        };
    }

    static String key(Map<String, AttributeValue> item) {
        return item.get("id").s();
    }

    static AttributeValue s(String v) {
        return AttributeValue.fromS(v);
    }

    static AttributeValue n(String v) {
        return AttributeValue.fromN(v);
    }

    static AttributeValue nul() {
        return AttributeValue.fromNul(true);
    }
}
