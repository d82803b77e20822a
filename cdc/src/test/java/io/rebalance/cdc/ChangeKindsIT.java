package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.slot.Ulid;
import io.rebalance.testkit.RoomEventsComparison;
import java.sql.Connection;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Every kind of change reaches DynamoDB exactly, checked against Postgres by the codec-independent comparison of
 * the test kit: inserts, an update of a column unrelated to the key, updates of and around a TOASTed jsonb over
 * 4 KB (the stream carries a placeholder for the unchanged one), a delete, an insert after a delete of the same
 * id, many changes to one key in one transaction, and a key that changes.
 */
class ChangeKindsIT {
    private static final long T0 = Instant.parse("2024-10-20T02:00:00Z").toEpochMilli();

    @Test
    void everyChangeKindArrivesExactly() throws Exception {
        try (TailFixture f = new TailFixture()) {
            List<Future<?>> outcomes = new ArrayList<>();
            f.startTail("tail-a", outcomes);
            f.awaitStreaming();
            String big = bigJson(12_000, 1);
            String big2 = bigJson(9_000, 2);
            String a = id(1), b = id(2), c = id(3), d = id(4), e = id(5), k = id(6), moved = id(7);

            f.insert(a, "message", "{\"text\":\"hello\"}", 1);
            f.insert(b, "message", big, 2);
            f.insert(c, "join", null, 3);
            f.insert(d, "leave", "{\"n\":1}", 4);
            f.insert(k, "edit", "{}", 0);
            f.sql("UPDATE " + f.table + " SET kind = 'edit' WHERE id = '" + a + "'"); // key-unrelated column
            f.sql("UPDATE " + f.table + " SET kind = 'reaction' WHERE id = '" + b + "'"); // around the TOASTed json
            f.sql("UPDATE " + f.table + " SET data = '" + big2 + "' WHERE id = '" + c + "'"); // the TOASTed json
            f.sql("DELETE FROM " + f.table + " WHERE id = '" + d + "'");
            f.insert(e, "message", "{\"v\":1}", 5);
            f.sql("DELETE FROM " + f.table + " WHERE id = '" + e + "'");
            f.insert(e, "message", "{\"v\":2}", 6); // insert after delete of the same id
            StringBuilder txn = new StringBuilder("BEGIN;");
            for (int i = 1; i <= 50; i++) {
                txn.append("UPDATE ")
                        .append(f.table)
                        .append(" SET seq = ")
                        .append(i)
                        .append(" WHERE id = '")
                        .append(k)
                        .append("';");
            }
            txn.append("DELETE FROM ")
                    .append(f.table)
                    .append(" WHERE id = '")
                    .append(k)
                    .append("';");
            txn.append("INSERT INTO ")
                    .append(f.table)
                    .append(" VALUES ('")
                    .append(k)
                    .append("', gen_random_uuid(), 'final', '{\"last\":true}', now(), 99);");
            txn.append("UPDATE ")
                    .append(f.table)
                    .append(" SET seq = 100 WHERE id = '")
                    .append(k)
                    .append("';");
            txn.append("COMMIT;");
            f.sql(txn.toString()); // many changes to one key in one transaction
            f.sql("UPDATE " + f.table + " SET id = '" + moved + "' WHERE id = '" + a + "'"); // the key itself
            String marker = id(99);
            f.insert(marker, "marker", null, 0);
            f.awaitItem(marker, true);

            try (Connection pg = f.services.postgres()) {
                assertThat(RoomEventsComparison.differences(pg, f.table, f.dynamo, f.table))
                        .isEmpty();
            }
            assertThat(f.item(b).get("data").m())
                    .as("TOASTed json kept through an update of another column")
                    .containsKey("pad");
            assertThat(f.item(b).get("data").m().get("pad").s()).hasSize(12_000);
            assertThat(f.item(b).get("kind").s()).isEqualTo("reaction");
            assertThat(f.item(c).get("data").m().get("pad").s()).hasSize(9_000);
            assertThat(f.item(d)).isEmpty();
            assertThat(f.item(a)).as("the old key of a changed key is gone").isEmpty();
            assertThat(f.item(moved).get("kind").s()).isEqualTo("edit");
            assertThat(f.item(e).get("data").m().get("v").n()).isEqualTo("2");
            assertThat(f.item(k).get("seq").n()).isEqualTo("100");
            assertThat(f.item(k).get("kind").s()).isEqualTo("final");
            assertThat(outcomes).noneMatch(Future::isDone); // the tail is still streaming, nothing failed
        }
    }

    static String id(int n) {
        return Ulid.of(T0 + n * 1000L, 0, n);
    }

    /** Json with one long string of random letters, which Postgres cannot compress below its TOAST threshold. */
    static String bigJson(int chars, long seed) {
        Random r = new Random(seed);
        StringBuilder s = new StringBuilder("{\"pad\":\"");
        for (int i = 0; i < chars; i++) s.append((char) ('a' + r.nextInt(26)));
        return s.append("\"}").toString();
    }
}
