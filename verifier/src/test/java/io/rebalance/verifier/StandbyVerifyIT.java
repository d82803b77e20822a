package io.rebalance.verifier;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.slot.Slot;
import io.rebalance.testkit.PrivatePostgres;
import io.rebalance.testkit.TypeZoo;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Verification read from a real hot standby (a streaming replica of a private primary, made by pg_basebackup): it
 * proves MATCH and pinpoints a corruption there, which it could not if it created anything on the source (a standby
 * is read-only); it reads the standby, not the primary; and a suspect is re-read only once the standby has replayed
 * what the primary holds, so a row the tail already carried is not reported while the standby lags.
 */
class StandbyVerifyIT {
    private static final List<Slot> SLOTS = CanonicalEncodingIT.SLOTS;

    @Test
    void aStandbyProvesMatchPinpointsACorruptionAndWaitsForItsReplayBeforeTheRecheck() throws Exception {
        try (PrivatePostgres primary = PrivatePostgres.start();
                PrivatePostgres standby = primary.standby();
                VerifierFixture f = new VerifierFixture()
                        .set("source.jdbcUrl", primary.jdbcUrl)
                        .set("verify.jdbcUrl", standby.jdbcUrl)) {
            List<String> ids;
            try (Connection c = DriverManager.getConnection(primary.jdbcUrl)) {
                ids = TypeZoo.create(c, f.table, 2);
            }
            f.copy(SLOTS);
            MigrationConfig config = f.config();
            try (Connection p = DriverManager.getConnection(primary.jdbcUrl);
                    Connection s = DriverManager.getConnection(standby.jdbcUrl)) {
                awaitReplayed(p, s);

                Verifier verifier = f.verifier(
                        SlotVerifier.BeforeRecheck.NONE,
                        o -> o.readingFrom(config.verify().reads(config.source())));
                assertThat(verifier.verify(SLOTS, 2, false, r -> {})).hasSize(3).allSatisfy(r -> assertThat(r.verdict())
                        .as(r.toString())
                        .isEqualTo(SlotResult.Verdict.MATCH));

                // a corruption in DynamoDB is pinned to its id and attribute from the standby alone
                String victim = ids.get(4);
                Map<String, AttributeValue> corrupted = new HashMap<>(f.item(victim));
                corrupted.put("t", AttributeValue.fromS("corrupted"));
                f.dynamo.putItem(b -> b.tableName(f.table).item(corrupted));
                List<Difference> found = differences(verifier.verify(SLOTS, 2, false, r -> {}));
                assertThat(found).extracting(Difference::id).containsExactly(victim);
                assertThat(found.get(0).attributes())
                        .extracting(Difference.AttributeDifference::attribute)
                        .containsExactly("t");
                f.write(SLOTS); // put back

                // it reads the standby: with replay paused, a row deleted on the primary is still there
                pause(s);
                String deleted = ids.get(7);
                execute(p, "DELETE FROM " + f.table + " WHERE id = '" + deleted + "'");
                assertThat(verifier.verify(SLOTS, 2, false, r -> {}))
                        .allSatisfy(
                                r -> assertThat(r.verdict()).as(r.toString()).isEqualTo(SlotResult.Verdict.MATCH));
                resume(s);
                awaitReplayed(p, s);
                assertThat(differences(verifier.verify(SLOTS, 2, false, r -> {})))
                        .extracting(Difference::id)
                        .containsExactly(deleted);
                f.dynamo.deleteItem(b -> b.tableName(f.table).key(Map.of("id", AttributeValue.fromS(deleted))));

                // a change the tail carried before the standby replayed it: the re-check waits for the replay
                pause(s);
                String changed = ids.get(2);
                execute(p, "UPDATE " + f.table + " SET t = 'changed' WHERE id = '" + changed + "'");
                Map<String, AttributeValue> carried = new HashMap<>(f.item(changed));
                carried.put("t", AttributeValue.fromS("changed"));
                f.dynamo.putItem(b -> b.tableName(f.table).item(carried)); // as the tail writes it
                String since = now(s);
                Verifier waiting = f.verifier(
                        (slot, suspects) -> {
                            assertThat(suspects)
                                    .extracting(Pinpointer.Suspect::id)
                                    .containsExactly(changed);
                            // replay resumes only once the re-check waits for it: read at once, the row is old
                            Thread later = new Thread(() -> {
                                try {
                                    try {
                                        Awaitility.await()
                                                .atMost(Duration.ofSeconds(30))
                                                .until(() -> waitingForReplay(s, since));
                                    } finally {
                                        resume(s);
                                    }
                                } catch (Exception e) {
                                    throw new IllegalStateException(e);
                                }
                            });
                            later.start();
                        },
                        o -> o.readingFrom(config.verify().reads(config.source())));
                List<SlotResult> results = waiting.verify(SLOTS, 1, false, r -> {});
                assertThat(results)
                        .allSatisfy(
                                r -> assertThat(r.verdict()).as(r.toString()).isEqualTo(SlotResult.Verdict.MATCH));
                assertThat(results.stream()
                                .mapToInt(SlotResult::resolvedOnRecheck)
                                .sum())
                        .isEqualTo(1);

                // a standby that does not catch up within the bound: that slot is an error naming both positions
                pause(s);
                execute(p, "UPDATE " + f.table + " SET t = 'again' WHERE id = '" + changed + "'");
                carried.put("t", AttributeValue.fromS("again"));
                f.dynamo.putItem(b -> b.tableName(f.table).item(carried));
                Verifier bounded = f.verifier(
                        SlotVerifier.BeforeRecheck.NONE,
                        o -> o.readingFrom(config.verify().reads(config.source()), Duration.ofSeconds(1)));
                List<SlotResult> stuck = bounded.verify(SLOTS, 1, false, r -> {});
                assertThat(stuck)
                        .filteredOn(r -> r.verdict() == SlotResult.Verdict.ERROR)
                        .singleElement()
                        .satisfies(r -> assertThat(r.toString())
                                .contains("has not reached the primary's")
                                .contains("verify.jdbcUrl"));
                resume(s);
            }
        }
    }

    private static List<Difference> differences(List<SlotResult> results) {
        return results.stream().flatMap(r -> r.differences().stream()).toList();
    }

    private static void awaitReplayed(Connection primary, Connection standby) throws Exception {
        String lsn;
        try (Statement st = primary.createStatement();
                ResultSet rs = st.executeQuery("SELECT pg_current_wal_lsn()::text")) {
            rs.next();
            lsn = rs.getString(1);
        }
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
            try (Statement st = standby.createStatement();
                    ResultSet rs = st.executeQuery("SELECT pg_last_wal_replay_lsn() >= '" + lsn + "'::pg_lsn")) {
                rs.next();
                return rs.getBoolean(1);
            }
        });
    }

    private static String now(Connection standby) throws Exception {
        try (Statement st = standby.createStatement();
                ResultSet rs = st.executeQuery("SELECT clock_timestamp()::text")) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** A session opened on the standby since {@code since} has asked how far it has replayed (StandbyCatchup). */
    private static boolean waitingForReplay(Connection standby, String since) throws Exception {
        try (Statement st = standby.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
                        + " AND backend_start > '" + since + "'::timestamptz"
                        + " AND query LIKE '%pg_last_wal_replay_lsn() >= CAST%'")) {
            rs.next();
            return rs.getLong(1) > 0;
        }
    }

    private static void pause(Connection standby) throws Exception {
        execute(standby, "SELECT pg_wal_replay_pause()");
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> {
            try (Statement st = standby.createStatement();
                    ResultSet rs = st.executeQuery("SELECT pg_get_wal_replay_pause_state()")) {
                rs.next();
                return rs.getString(1).equals("paused");
            }
        });
    }

    private static void resume(Connection standby) throws Exception {
        execute(standby, "SELECT pg_wal_replay_resume()");
    }

    private static void execute(Connection c, String sql) throws Exception {
        try (Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
