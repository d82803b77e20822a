package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.client.WriteGuard;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * One rule for every write DynamoDB gets from Postgres: only while Postgres is the store of record. After a cutover,
 * with the tail stopped (as after `--close-window`, or a pod restarting), an application updates one item and inserts
 * another in DynamoDB; `verify --repair`, `--retry-refused`, `copy` after `reset --forget copy`, and `copy
 * --no-concurrent-writers` are each refused with the route named, and both items stay as the application wrote them.
 * Before, `verify --slot S --repair` printed MATCH (2 repaired): the update was reverted and the insert deleted.
 */
class StoreOfRecordIT {
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("sor");
    private final String prefix = SharedServices.unique("sor") + ":";

    @Test
    void afterTheFlipNothingWritesPostgresRowsOverTheApplicationsWrites() throws Exception {
        Map<String, String> settings = TailedTable.settings(services, table, prefix);
        List<String> flags = TailedTable.args(settings);
        try (TailedTable t = new TailedTable(services, table, settings, 1_000, 11)) {
            assertThat(CliRun.of(flags, "cutover", "--prepare").exitCode()).isZero();
            assertThat(CliRun.of(flags, "copy", "--no-progress").exitCode()).isZero();
            CliRun before = CliRun.of(flags, "verify", "--all", "--json");
            assertThat(before.exitCode()).as(before.out() + before.err()).isZero();
            assertThat(before.out()).containsPattern("\"storeOfRecord\"\\s*:\\s*\"postgres\"");
            Awaitility.await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(
                            CliRun.of(flags, "cutover", "--dry-run").exitCode())
                    .isZero());
            CliRun cut = CliRun.of(flags, "cutover");
            assertThat(cut.exitCode()).as(cut.out() + cut.err()).isZero();
            t.stopTail();

            // the application, under TARGET: updates one item and inserts another in its slot
            Map<String, AttributeValue> old = anyItem(t);
            String id = old.get("id").s();
            String slot = old.get("_slot").s();
            String added = id.substring(0, 10) + "ZZZZZZZZZZZZZZZZ"; // the same millisecond, so the same slot
            Map<String, AttributeValue> updated = new HashMap<>(old);
            updated.put("kind", AttributeValue.fromS("edited-in-dynamodb"));
            Map<String, AttributeValue> inserted = new HashMap<>(old);
            inserted.put("id", AttributeValue.fromS(added));
            inserted.put("kind", AttributeValue.fromS("inserted-in-dynamodb"));
            try (WriteGuard g = new WriteGuard(t.redis, t.dynamo, t.guard())) {
                g.run(table, permit -> permit.writeDynamo(t.dynamo, put(updated), put(inserted)));
            }

            CliRun repair = CliRun.of(flags, "verify", "--slot", slot, "--repair");
            assertThat(repair.exitCode()).as(repair.out() + repair.err()).isEqualTo(2);
            assertThat(repair.err())
                    .contains("[" + ErrorCode.NOT_STORE_OF_RECORD + "]")
                    .contains("verify --repair refused, nothing written")
                    .contains("the route is TARGET at epoch")
                    .contains("rebalance cutover --rollback");
            CliRun retry = CliRun.of(flags, "verify", "--retry-refused");
            assertThat(retry.exitCode()).as(retry.out() + retry.err()).isEqualTo(2);
            assertThat(retry.err()).contains("[" + ErrorCode.NOT_STORE_OF_RECORD + "]");

            CliRun compare = CliRun.of(flags, "verify", "--slot", slot);
            assertThat(compare.exitCode()).as("Postgres lags by design").isEqualTo(1);
            assertThat(compare.err()).contains("note: DynamoDB is the store of record: the route is TARGET");
            assertThat(compare.out()).doesNotContain("--repair");
            CliRun compareJson = CliRun.of(flags, "verify", "--slot", slot, "--json");
            JsonSchemas.assertValid("verify", compareJson.out());
            assertThat(compareJson.out()).containsPattern("\"storeOfRecord\"\\s*:\\s*\"dynamodb\"");

            CliRun forget = CliRun.of(flags, "reset", "--forget", "copy", "--yes");
            assertThat(forget.exitCode()).as(forget.out() + forget.err()).isZero();
            CliRun copy = CliRun.of(flags, "copy", "--no-progress");
            assertThat(copy.exitCode()).as(copy.out() + copy.err()).isEqualTo(36);
            assertThat(copy.err()).contains("copy refused, nothing written").contains("TARGET");
            CliRun alone = CliRun.of(flags, "copy", "--no-progress", "--no-concurrent-writers");
            assertThat(alone.exitCode()).as(alone.out() + alone.err()).isEqualTo(36);

            assertThat(kind(t, id)).isEqualTo("edited-in-dynamodb");
            assertThat(kind(t, added)).isEqualTo("inserted-in-dynamodb");
        }
    }

    private Map<String, AttributeValue> anyItem(TailedTable t) {
        return t.dynamo.scan(b -> b.tableName(table).limit(1)).items().get(0);
    }

    private String kind(TailedTable t, String id) {
        var r = t.dynamo.getItem(b ->
                b.tableName(table).key(Map.of("id", AttributeValue.fromS(id))).consistentRead(true));
        return r.hasItem() && !r.item().isEmpty() ? r.item().get("kind").s() : null;
    }

    private TransactWriteItem put(Map<String, AttributeValue> item) {
        return TransactWriteItem.builder()
                .put(Put.builder().tableName(table).item(item).build())
                .build();
    }
}
