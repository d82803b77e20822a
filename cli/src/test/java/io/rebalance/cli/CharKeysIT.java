package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.redis.RedisScan;
import io.rebalance.core.slot.Ulid;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * A char(n) key is refused by {@code check} and {@code copy} naming the column: Postgres drops its padding when it
 * compares or casts it, so a key would not come back as written (a padded ULID key made the copy retry its slot
 * forever: "'01JAK...    ' is not a ULID (26 characters)").
 */
class CharKeysIT {
    private final SharedServices services = SharedServices.get();

    private CliRun run(String table, String prefix, String... words) {
        List<String> args = new ArrayList<>(List.of(words));
        args.addAll(CliRun.base(services, table, prefix));
        return CliRun.of(args.toArray(String[]::new));
    }

    @Test
    void aCharKeyIsRefusedNamingTheColumnAndNothingIsWritten() throws Exception {
        String table = SharedServices.unique("chark");
        String prefix = SharedServices.unique("chark") + ":";
        try (Connection c = services.postgres()) {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + table + " (id char(30) PRIMARY KEY, body text)");
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " VALUES (?, 'x')")) {
                for (int i = 0; i < 50; i++) {
                    ps.setString(
                            1, Ulid.of(Instant.parse("2024-10-20T00:00:00Z").toEpochMilli() + i * 60_000L, i, i));
                    ps.addBatch();
                }
                ps.executeBatch();
            }
        }
        for (List<String> words :
                List.of(List.of("check"), List.of("copy", "--create-table", "--no-concurrent-writers"))) {
            CliRun refused = run(table, prefix, words.toArray(String[]::new));
            assertThat(refused.exitCode()).as(refused.out() + refused.err()).isEqualTo(14);
            assertThat(refused.err())
                    .contains("key column id of")
                    .contains("is character(30)")
                    .contains("ALTER TABLE")
                    .contains("TYPE text");
        }
        try (var redis = services.redis()) {
            assertThat(RedisScan.keys(redis, prefix)).isEmpty();
        }
        try (DynamoDbClient d = services.dynamoClient()) {
            assertThat(d.listTables().tableNames()).doesNotContain(table);
        }
    }
}
