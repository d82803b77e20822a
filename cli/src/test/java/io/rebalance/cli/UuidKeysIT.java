package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.redis.RedisScan;
import io.rebalance.testkit.SharedServices;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * uuid keys of every time-ordered layout (UUIDv7 and ULID bits: the first 48 bits the millisecond) copy and verify
 * with the default slots (the run's range from the keys, no slots.from/to); random (v4) uuids, which carry no time,
 * are refused naming key ranges and the time column as ways out, before anything is written (a check recommends key
 * ranges, surveyed).
 */
class UuidKeysIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Instant FIRST = Instant.parse("2024-10-20T00:00:00Z");
    private final SharedServices services = SharedServices.get();

    /** A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, version 7, variant 10, random bits. */
    static UUID uuidV7(long millis) {
        long msb = (millis << 16) | 0x7000L | (RANDOM.nextInt() & 0x0FFFL);
        long lsb = (RANDOM.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(msb, lsb);
    }

    /** A ULID's 128 bits in a uuid column: 48 bits of milliseconds, 80 random bits, no version or variant. */
    static UUID ulidBits(long millis) {
        return new UUID((millis << 16) | (RANDOM.nextInt() & 0xFFFFL), RANDOM.nextLong());
    }

    private static CliRun run(String table, String prefix, String... words) {
        List<String> args = new ArrayList<>(List.of(words));
        args.addAll(CliRun.base(SharedServices.get(), table, prefix));
        args.addAll(List.of("--set", "verify.settle=200ms"));
        return CliRun.of(args.toArray(String[]::new));
    }

    private void create(String table, java.util.function.LongFunction<UUID> ids, int rows) throws Exception {
        try (Connection c = services.postgres()) {
            try (Statement st = c.createStatement()) {
                st.execute("DROP TABLE IF EXISTS " + table);
                st.execute("CREATE TABLE " + table + " (id uuid PRIMARY KEY, body text NOT NULL, n int)");
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " VALUES (?, ?, ?)")) {
                for (int i = 0; i < rows; i++) {
                    // three hours of rows, 20241020.00 to .02
                    long ms = FIRST.toEpochMilli() + i * (3 * 3_600_000L / rows);
                    ps.setObject(1, ids.apply(ms));
                    ps.setString(2, "row " + i);
                    ps.setInt(3, i);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
        }
    }

    private void copiesAndVerifiesExactly(String name, java.util.function.LongFunction<UUID> ids) throws Exception {
        String table = SharedServices.unique(name);
        String prefix = SharedServices.unique(name) + ":";
        create(table, ids, 300);

        CliRun check = run(table, prefix, "check", "--json");
        assertThat(check.exitCode()).as(check.err()).isZero();
        JsonNode slots = JSON.readTree(check.out()).path("slots");
        assertThat(slots.path("oldest").asText()).isEqualTo("20241020.00");
        assertThat(slots.path("newest").asText()).isEqualTo("20241020.02");

        CliRun copy = run(table, prefix, "copy", "--create-table", "--no-concurrent-writers");
        assertThat(copy.exitCode()).as(copy.err()).isZero();

        CliRun verify = run(table, prefix, "verify", "--all", "--json");
        assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();
        JsonNode doc = JSON.readTree(verify.out());
        assertThat(doc.path("counts").path("MATCH").asInt()).isEqualTo(3);
        long rows = 0;
        for (JsonNode s : doc.path("slots")) rows += s.path("sourceRows").asLong();
        assertThat(rows).isEqualTo(300);
        try (DynamoDbClient d = services.dynamoClient()) {
            assertThat(d.scan(b -> b.tableName(table)).count()).isEqualTo(300);
        }
    }

    @Test
    void uuidV7KeysCopyAndVerifyWithTheDefaultSlots() throws Exception {
        copiesAndVerifiesExactly("uuid7", UuidKeysIT::uuidV7);
    }

    @Test
    void ulidBitsInAUuidColumnCopyAndVerifyWithTheDefaultSlots() throws Exception {
        copiesAndVerifiesExactly("uulid", UuidKeysIT::ulidBits);
    }

    @Test
    void randomUuidsAreToldToUseATimeColumnAndNothingIsWritten() throws Exception {
        String table = SharedServices.unique("uuid4");
        String prefix = SharedServices.unique("uuid4") + ":";
        create(table, ms -> UUID.randomUUID(), 50);
        CliRun refused = run(table, prefix, "copy", "--create-table", "--no-concurrent-writers");
        assertThat(refused.exitCode()).as(refused.err()).isEqualTo(14);
        assertThat(refused.err())
                .contains("key column id of")
                .contains("random (version 4) uuids")
                .contains("slots.timeFrom: none")
                .contains("slots.timeFrom: column")
                .contains("slots.timeColumn");
        CliRun check = run(table, prefix, "check"); // recommends key ranges, surveyed, where the copy refuses
        assertThat(check.exitCode()).as(check.out() + check.err()).isEqualTo(1);
        assertThat(check.out()).contains("random (version 4) uuids", "slots.timeFrom: none", "key ranges");
        // the same even with a configured range: most rows would silently fall outside it
        CliRun ranged = run(
                table,
                prefix,
                "copy",
                "--create-table",
                "--no-concurrent-writers",
                "--set",
                "slots.from=2024-10-20T00:00:00Z",
                "--set",
                "slots.to=2024-10-21T00:00:00Z");
        assertThat(ranged.exitCode()).as(ranged.err()).isEqualTo(14);
        try (var redis = services.redis()) {
            assertThat(RedisScan.keys(redis, prefix)).isEmpty();
        }
        try (DynamoDbClient d = services.dynamoClient()) {
            assertThat(d.listTables().tableNames()).doesNotContain(table);
        }
    }
}
