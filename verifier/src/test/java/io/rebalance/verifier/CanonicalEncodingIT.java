package io.rebalance.verifier;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.SourceTable;
import io.rebalance.testkit.TypeZoo;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The two halves of the canonical encoding agree: for every column of every type-zoo row, the token Postgres
 * computes in SQL equals the token Java computes from the item DynamoDB Local returns for that row (after its own
 * number normalization), in both json modes, and with json and numeric columns named in {@code target.jsonAsString}
 * and {@code target.numbersAsString} (stored as their text). Column by column, so a failure names the column and both
 * tokens.
 */
class CanonicalEncodingIT {
    /** {@code map} or {@code string} ({@code target.json}), or {@code asString}: map, with the per-column ways out. */
    private static VerifierFixture fixture(String mode) {
        if (!mode.equals("asString")) return new VerifierFixture().set("target.json", mode);
        return new VerifierFixture()
                .set("target.json", "map")
                .set("target.jsonAsString", "j,ajb")
                .set("target.numbersAsString", "num,f4,f8,anum");
    }

    static final List<Slot> SLOTS =
            List.of(Slot.parse("20241020.01"), Slot.parse("20241020.02"), Slot.parse("20241020.03"));

    @ParameterizedTest
    @ValueSource(strings = {"map", "string", "asString"})
    void sqlAndJavaGiveTheSameTokensForEveryTypeZooValue(String jsonMode) throws Exception {
        try (VerifierFixture f = fixture(jsonMode)) {
            List<String> ids;
            try (Connection c = f.services.postgres()) {
                ids = TypeZoo.create(c, f.table, 1);
            }
            f.copy(SLOTS);
            SourceTable table = f.sourceTable();
            var target = f.config().target();
            CanonicalItem canonical =
                    new CanonicalItem(table.columns(), "id", "id", target.slotAttribute(), target.forms());
            SourceFingerprints source =
                    new SourceFingerprints(table, new CanonicalSql(target.forms()), RowHash.TEXT_HASH);
            Map<String, List<String>> sqlTokens;
            try (Connection c = f.session()) {
                sqlTokens = source.tokens(c, ids);
            }
            List<String> mismatches = new ArrayList<>();
            for (String id : ids) {
                Map<String, AttributeValue> item = f.item(id);
                assertThat(item).as("item " + id).isNotEmpty();
                for (int i = 0; i < canonical.columnCount(); i++) {
                    String sql = sqlTokens.get(id).get(i);
                    String java = canonical.token(i, item);
                    if (!sql.equals(java)) {
                        mismatches.add(id + " " + table.columns().get(i).name() + ": sql " + sql + " / java " + java
                                + " / item " + item.get(canonical.attribute(i)));
                    }
                }
                assertThat(canonical.encode(item)).doesNotContain("?extra");
            }
            assertThat(mismatches).isEmpty();
            List<String> allNull = sqlTokens.get(ids.get(0));
            assertThat(allNull.subList(1, allNull.size())).allMatch(t -> t.equals("Z")); // all but the id
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"map", "string", "asString"})
    void aFaithfulCopyOfTheTypeZooMatchesSlotBySlot(String jsonMode) throws Exception {
        try (VerifierFixture f = fixture(jsonMode)) {
            try (Connection c = f.services.postgres()) {
                TypeZoo.create(c, f.table, 4);
            }
            f.copy(SLOTS);
            List<SlotResult> results =
                    f.verifier(SlotVerifier.BeforeRecheck.NONE).verify(SLOTS, 2, false, r -> {});
            assertThat(results).hasSize(3).allSatisfy(r -> {
                assertThat(r.verdict()).as(r.toString()).isEqualTo(SlotResult.Verdict.MATCH);
                assertThat(r.sourceRows()).isPositive().isEqualTo(r.targetItems());
            });
            assertThat(results.stream().mapToLong(SlotResult::sourceRows).sum()).isEqualTo(4L * TypeZoo.rowsPerCopy());
        }
    }
}
