package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceTable;
import io.rebalance.cutover.WindowVerification;
import io.rebalance.ops.Connections;
import io.rebalance.ops.cutover.CutoverVerification;
import io.rebalance.protocol.handoff.KeyLog;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The cutover's verification (ADR 7): the changed slots before the window, the keys the tail wrote since inside it.
 * A key that differs after the slots were verified is found in the window; a difference the slots' verification
 * found before the window is not forgotten (it is compared again in the window, and fails it); a key log that
 * lapsed fails the window instead of passing it; and ending the cutover stops the log.
 */
class CutoverVerificationIT {
    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final Duration BUDGET = Duration.ofSeconds(5);

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("cutverify");
    private final String prefix = SharedServices.unique("cv") + ":";

    private Map<String, String> settings() {
        Map<String, String> s = TailedTable.settings(services, table, prefix);
        s.put("tail.heartbeat", "1s");
        return s;
    }

    private CliRun run(String... words) {
        List<String> args = new ArrayList<>(List.of(words));
        args.addAll(TailedTable.args(settings()));
        return CliRun.of(args.toArray(String[]::new));
    }

    @Test
    void whatDiffersAfterTheSlotsWereVerifiedFailsTheWindow() throws Exception {
        try (TailedTable t = new TailedTable(services, table, settings(), 2_000, 11)) {
            assertThat(run("copy", "--no-progress").exitCode()).isZero();
            assertThat(run("verify", "--all").exitCode()).isZero();
            try (Connections c = new Connections(t.config, 4)) {
                check(t.config, t.source, c, t.dynamo, t.redis);
            }
        }
    }

    private void check(
            MigrationConfig config, SourceTable source, Connections c, DynamoDbClient dynamo, UnifiedJedis redis)
            throws Exception {
        KeyLog log = new KeyLog(redis, new Keyspace(prefix).handoff());
        List<String> ids = ids(3);

        // nothing changed: both halves pass, and the log ends with the cutover
        try (CutoverVerification v = new CutoverVerification(config, c, source, false)) {
            assertThat(v.before().match()).isTrue();
            assertThat(log.current()).as("the tail logs while the cutover runs").isPresent();
            assertThat(v.verify(BUDGET).match()).isTrue();
        }
        assertThat(log.current()).as("and stops logging after it").isEmpty();

        // a key the tail writes after the slots were verified, then wrong in DynamoDB: only the window can see it
        String k = ids.get(0);
        try (CutoverVerification v = new CutoverVerification(config, c, source, false)) {
            assertThat(v.before().match()).isTrue();
            long seq = bump(k);
            awaitSeq(dynamo, k, seq);
            corrupt(dynamo, k);
            WindowVerification.Result in = v.verify(BUDGET);
            assertThat(in.match()).isFalse();
            assertThat(in.detail()).contains(k + " DIFFERENT").startsWith("1 of 1 keys differ");
        }
        awaitSeq(dynamo, k, bump(k)); // the tail writes it right again

        // a difference in a changed slot, there before the cutover began: the slots' verification finds it, and
        // the window compares it again (under writes it could have been a change in flight) and fails
        String j = ids.get(1);
        awaitSeq(dynamo, j, bump(j));
        corrupt(dynamo, j);
        try (CutoverVerification v = new CutoverVerification(config, c, source, false)) {
            WindowVerification.Result before = v.before();
            assertThat(before.match()).as(before.detail()).isTrue();
            assertThat(before.detail()).contains("(1 rows in flight compared again)");
            WindowVerification.Result in = v.verify(BUDGET);
            assertThat(in.match()).isFalse();
            assertThat(in.detail()).contains(j + " DIFFERENT");
        }
        awaitSeq(dynamo, j, bump(j));

        // the log lapsed between the halves (a cutover stalled past its TTL, or Redis lost it): the window fails
        try (CutoverVerification v = new CutoverVerification(config, c, source, false)) {
            assertThat(v.before().match()).isTrue();
            log.stop(log.current().orElseThrow());
            WindowVerification.Result in = v.verify(BUDGET);
            assertThat(in.match()).isFalse();
            assertThat(in.detail()).contains("key log of this cutover lapsed");
        }
    }

    private List<String> ids(int n) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement();
                ResultSet rs = st.executeQuery("SELECT id FROM " + table + " ORDER BY id OFFSET 100 LIMIT " + n)) {
            while (rs.next()) out.add(rs.getString(1));
        }
        return out;
    }

    /** Adds one to the row's seq in Postgres. @return the new seq */
    private long bump(String id) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement();
                ResultSet rs = st.executeQuery(
                        "UPDATE " + table + " SET seq = seq + 1 WHERE id = '" + id + "' RETURNING seq")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private void awaitSeq(DynamoDbClient dynamo, String id, long seq) {
        Awaitility.await().atMost(BOUND).until(() -> Long.toString(seq)
                .equals(item(dynamo, id).get("seq").n()));
    }

    /** What a lost write would leave: the item as it was before the last change. */
    private void corrupt(DynamoDbClient dynamo, String id) {
        Map<String, AttributeValue> item = new HashMap<>(item(dynamo, id));
        item.put(
                "seq",
                AttributeValue.fromN(
                        Long.toString(Long.parseLong(item.get("seq").n()) - 1)));
        dynamo.putItem(b -> b.tableName(table).item(item));
    }

    private Map<String, AttributeValue> item(DynamoDbClient dynamo, String id) {
        return dynamo.getItem(b -> b.tableName(table)
                        .key(Map.of("id", AttributeValue.fromS(id)))
                        .consistentRead(true))
                .item();
    }
}
