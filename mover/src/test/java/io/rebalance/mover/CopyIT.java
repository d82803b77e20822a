package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.redis.RedisScan;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

class CopyIT {
    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void twoProcessesCopyEveryRowExactlyAndCompactTheirState(String coordinator) throws Exception {
        try (MoverFixture f = MoverFixture.coordinatedBy(coordinator)
                .generate(20_000, 40)
                .set("mover.workers", "3")
                .set("mover.pageSize", "200")) {
            MoverProcess a = f.process(PhaseHooks.NONE, List.of());
            MoverProcess b = f.process(PhaseHooks.NONE, List.of());
            var ra = f.start(a);
            var rb = f.start(b);
            assertThat(ra.get(120, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);
            assertThat(rb.get(30, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);

            assertThat(f.differences()).isEmpty();
            RunState run = f.runState();
            assertThat(run.rowsCopied()).isEqualTo(20_000);
            assertThat(run.watermark().name()).isEqualTo(run.plan().oldest());
            // both processes did work: the slots were shared, not copied twice
            assertThat(a.counters().rowsWritten() + b.counters().rowsWritten()).isEqualTo(20_000);
            assertThat(a.counters().rowsWritten()).isPositive();
            assertThat(b.counters().rowsWritten()).isPositive();
            if (coordinator.equals("redis")) {
                List<String> keys = RedisScan.keys(f.redis(), f.prefix);
                assertThat(keys).noneMatch(k -> k.startsWith(f.prefix + "{")); // every per-slot key compacted away
                assertThat(keys.size()).isLessThan(15);
            } else {
                assertThat(run.heldSlotLeases()).as("every claim given up").isEmpty();
                assertThat(run.status()).isEqualTo(RunStatus.FINISHED);
            }

            // and the comparison these tests rely on does see a missing, an extra and a changed item
            try (var d = f.services.dynamoClient();
                    var c = f.services.postgres();
                    var st = c.createStatement();
                    var rs = st.executeQuery("SELECT id FROM " + f.table + " ORDER BY id LIMIT 2")) {
                rs.next();
                String gone = rs.getString(1);
                rs.next();
                String changed = rs.getString(1);
                d.deleteItem(r -> r.tableName(f.table).key(Map.of("id", AttributeValue.fromS(gone))));
                d.putItem(r ->
                        r.tableName(f.table).item(Map.of("id", AttributeValue.fromS("01ZZZZZZZZZZZZZZZZZZZZZZZZ"))));
                d.updateItem(r -> r.tableName(f.table)
                        .key(Map.of("id", AttributeValue.fromS(changed)))
                        .updateExpression("SET seq = :v")
                        .expressionAttributeValues(Map.of(":v", AttributeValue.fromN("-1"))));
                assertThat(f.differences())
                        .hasSize(3)
                        .anyMatch(x -> x.equals("missing " + gone))
                        .anyMatch(x -> x.startsWith(changed + " seq"))
                        .anyMatch(x -> x.contains("extra"));
            }
        }
    }

    /**
     * Bigint keys of different lengths in one slot (a serial id, slots from a time column): pages follow the column's
     * order, as {@code key > last} does, so no row is skipped. Pages in text order (10 before 9) lost most of them.
     */
    @Test
    void bigintKeysOfEveryLengthAreCopiedPageByPage() throws Exception {
        try (MoverFixture f = new MoverFixture()
                .set("slots.timeFrom", "column")
                .set("slots.timeColumn", "created_at")
                .set("mover.pageSize", "200")) {
            try (var c = f.services.postgres();
                    var st = c.createStatement()) {
                st.execute("CREATE TABLE " + f.table + " (id bigint PRIMARY KEY, note text, created_at timestamptz NOT"
                        + " NULL)");
                st.execute("INSERT INTO " + f.table + " SELECT n, 'row ' || n, timestamptz '2024-10-20 00:00:00+00'"
                        + " + n * interval '1 second' FROM generate_series(1, 3000) n");
            }
            assertThat(f.start(f.process(PhaseHooks.NONE, List.of())).get(120, TimeUnit.SECONDS))
                    .isEqualTo(RunStatus.FINISHED);
            java.util.Set<Long> copied = new java.util.TreeSet<>();
            try (var d = f.services.dynamoClient()) {
                d.scanPaginator(r -> r.tableName(f.table))
                        .items()
                        .forEach(
                                item -> copied.add(Long.parseLong(item.get("id").n())));
            }
            assertThat(copied).hasSize(3000).startsWith(1L, 2L, 3L).endsWith(3000L);
        }
    }
}
