package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rebalance.client.GuardSettings;
import io.rebalance.client.Router;
import io.rebalance.client.ShadowMeters;
import io.rebalance.client.ShadowReads;
import io.rebalance.client.ShadowSettings;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.testkit.SharedServices;
import io.rebalance.testkit.TestMigration;
import io.rebalance.verifier.CanonicalReads;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;

/**
 * An application reads through {@code Router} with a tenth of its reads shadowed: both stores read, compared in the
 * verifier's canonical encoding ({@link CanonicalReads}). Equal stores give only matches, counted alike in Redis
 * ({@code rebalance shadow}, {@code status}) and in the application's Micrometer registry; an item whose attribute
 * has another type and one lacking an attribute show as mismatches with both forms; at a sample of 0 nothing but the
 * route's read happens. With {@code cutover.shadowWindow} set, the cutover's pre-check {@code shadow reads} passes on
 * the matches and fails on the mismatches. {@code shadow --sample} needs a routing entry and a fraction.
 */
class ShadowReadsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int ROWS = 400;

    private final SharedServices services = SharedServices.get();

    @Test
    void aSampleOfReadsIsComparedAndWrongItemsShowWithBothForms() throws Exception {
        TestMigration m = new TestMigration("shadow", services.jdbcUrl);
        String table = m.table;
        List<String> args = m.args();
        try (Connection c = services.postgres()) {
            RoomEventsGenerator.create(c, table, ROWS, TestMigration.END, 4, 5);
        }
        CliRun copy = CliRun.of(args, "copy", "--create-table", "--no-concurrent-writers");
        assertThat(copy.exitCode()).as(copy.err()).isZero();
        MigrationConfig config = m.config();
        SourceTable source;
        List<String> keys = new ArrayList<>();
        try (Connection c = services.postgres();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT id FROM " + table + " ORDER BY id")) {
            source = SourceTable.inspect(c, config);
            while (rs.next()) keys.add(rs.getString(1));
        }

        CliRun early = CliRun.of(args, "shadow", "--sample", "0.1");
        assertThat(early.exitCode()).as(early.err()).isEqualTo(40);
        assertThat(early.err()).contains("scope " + table + " has no routing entry", "rebalance cutover --prepare");
        try (UnifiedJedis redis = RedisConnector.connect(config.redis(), 8);
                DynamoDbClient dynamo = services.dynamoClient();
                App app = new App(config, source, dynamo)) {
            new RoutingTable(redis, new Keyspace(m.prefix)).create(table, RouteStatus.SOURCE, 1);
            CliRun wrong = CliRun.of(args, "shadow", "--sample", "1.5");
            assertThat(wrong.exitCode()).isEqualTo(10);
            assertThat(wrong.err()).contains("--sample 1.5 is not a fraction from 0 to 1");
            CliRun set = CliRun.of(args, "shadow", "--sample", "0.1");
            assertThat(set.exitCode()).as(set.err()).isZero();
            assertThat(set.out()).contains(table + ": sample 0.1 (set now)");

            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            try (ShadowReads shadows =
                    new ShadowReads(redis, m.prefix, ShadowSettings.defaults(), new ShadowMeters(registry))) {
                Router router = new Router(redis, GuardSettings.defaults(m.prefix), shadows);

                // equal stores: every compared read matches
                for (int round = 0; round < 5; round++)
                    for (String key : keys) assertThat(app.read(router, key)).isNotNull();
                long sampled = shadows.handedOver();
                assertThat(sampled).as("a tenth of 2,000 reads").isBetween(100L, 300L);
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> counted(registry) == sampled);
                JsonNode equal = shadow(args);
                assertThat(equal.path("total").path("match").asLong()).isEqualTo(sampled);
                assertThat(equal.path("lastHour").path("match").asLong()).isEqualTo(sampled);
                assertThat(equal.path("matchRate").asDouble()).isEqualTo(1.0);
                assertThat(equal.path("mismatches")).isEmpty();
                assertThat(counter(registry, "match")).isEqualTo(sampled);
                JsonNode open = gate(args);
                assertThat(open.path("passed").asBoolean()).as(open.toString()).isTrue();

                // an attribute of another type, and a NOT NULL column's attribute left out
                String typed = keys.get(10);
                String missing = keys.get(20);
                app.change(
                        typed,
                        item -> item.put(
                                "seq", AttributeValue.fromS(item.get("seq").n())));
                app.change(missing, item -> item.remove("kind"));
                for (int i = 0; i < 100; i++) {
                    app.read(router, typed);
                    app.read(router, missing);
                }
                long all = shadows.handedOver();
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> counted(registry) == all);
                JsonNode found = shadow(args);
                long mismatched = found.path("total").path("mismatch").asLong();
                assertThat(mismatched).isEqualTo(all - sampled).isGreaterThanOrEqualTo(2);
                assertThat(counter(registry, "mismatch")).isEqualTo(mismatched);
                Map<String, JsonNode> byKey = new HashMap<>();
                for (JsonNode x : found.path("mismatches"))
                    byKey.putIfAbsent(x.path("key").asText(), x);
                assertThat(byKey).containsOnlyKeys(typed, missing);
                String seq = column(table, typed, "seq");
                String token = seq.length() + ":" + seq;
                JsonNode t = byKey.get(typed);
                assertThat(t.path("postgres").asText()).contains("N" + token).doesNotContain("S" + token);
                assertThat(t.path("dynamodb").asText()).contains("S" + token).doesNotContain("N" + token);
                String kind = column(table, missing, "kind");
                JsonNode x = byKey.get(missing);
                assertThat(x.path("postgres").asText()).contains("S" + kind.length() + ":" + kind);
                assertThat(x.path("dynamodb").asText())
                        .isNotEqualTo(x.path("postgres").asText());
                JsonNode closed = gate(args);
                assertThat(closed.path("passed").asBoolean())
                        .as(closed.toString())
                        .isFalse();
                assertThat(closed.path("detail").asText()).contains(mismatched + " of the ", "were mismatches");
                CliRun status = CliRun.of(args, "status", "--json");
                JsonNode scope = JSON.readTree(status.out())
                        .path("routing")
                        .path("scopes")
                        .get(0);
                assertThat(scope.path("shadowReads").path("sample").asDouble()).isEqualTo(0.1);
                assertThat(scope.path("shadowReads")
                                .path("lastHour")
                                .path("mismatch")
                                .asLong())
                        .isEqualTo(mismatched);

                // a sample of 0: the route's read alone, no other call
                assertThat(CliRun.of(args, "shadow", "--sample", "0").exitCode())
                        .isZero();
                long before = shadows.handedOver();
                long dynamoReads = app.dynamoReads.get();
                for (String key : keys) app.read(router, key);
                assertThat(shadows.handedOver()).isEqualTo(before);
                assertThat(app.dynamoReads.get()).isEqualTo(dynamoReads);
            }
        }
    }

    private String column(String table, String key, String column) throws SQLException {
        try (Connection c = services.postgres();
                java.sql.PreparedStatement ps =
                        c.prepareStatement("SELECT " + column + "::text FROM " + table + " WHERE id = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    /** The cutover's pre-check `shadow reads`, with the gate on: a window of an hour, at least 50 reads. */
    private static JsonNode gate(List<String> args) throws Exception {
        List<String> on = new ArrayList<>(args);
        on.addAll(List.of("--set", "cutover.shadowWindow=1h", "--set", "cutover.shadowMinReads=50"));
        CliRun dry = CliRun.of(on, "cutover", "--dry-run", "--json");
        JsonNode checks = JSON.readTree(dry.out()).path("preChecks");
        for (JsonNode c : checks) if (c.path("name").asText().equals("shadow reads")) return c;
        throw new AssertionError("no pre-check `shadow reads` in " + dry.out() + dry.err());
    }

    private static long counted(SimpleMeterRegistry registry) {
        return registry.find(ShadowMeters.NAME).counters().stream()
                .mapToLong(c -> (long) c.count())
                .sum();
    }

    private static long counter(SimpleMeterRegistry registry, String outcome) {
        var c = registry.find(ShadowMeters.NAME).tag("outcome", outcome).counter();
        return c == null ? 0 : (long) c.count();
    }

    private static JsonNode shadow(List<String> args) throws Exception {
        CliRun r = CliRun.of(args, "shadow", "--json", "--limit", "1000");
        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonSchemas.assertValid("shadow", r.out());
        return JSON.readTree(r.out()).path("scopes").get(0);
    }

    /**
     * The application: its reads of a row from each store, as items (the Postgres row as the copy writes it), each
     * thread on its own Postgres session.
     */
    private static final class App implements AutoCloseable {
        final AtomicLong dynamoReads = new AtomicLong();
        private final CanonicalReads forms;
        private final DynamoDbClient dynamo;
        private final SourceTable source;
        private final String table;
        private final List<Connection> sessions = new CopyOnWriteArrayList<>();
        private final ThreadLocal<Connection> session = new ThreadLocal<>();

        App(MigrationConfig config, SourceTable source, DynamoDbClient dynamo) {
            this.forms = new CanonicalReads(config, source);
            this.dynamo = dynamo;
            this.source = source;
            this.table = config.target().table();
        }

        Map<String, AttributeValue> read(Router router, String key) throws Exception {
            Callable<Map<String, AttributeValue>> postgres = () -> forms.row(session(), key);
            Callable<Map<String, AttributeValue>> fromDynamo = () -> {
                dynamoReads.incrementAndGet();
                GetItemResponse r = dynamo.getItem(
                        b -> b.tableName(table).key(source.key().dynamoKey(key)).consistentRead(true));
                return r.hasItem() ? r.item() : null;
            };
            return router.read(table, null, key, postgres, fromDynamo, forms::form);
        }

        void change(String key, java.util.function.Consumer<Map<String, AttributeValue>> how) {
            Map<String, AttributeValue> item = new HashMap<>(dynamo.getItem(b ->
                            b.tableName(table).key(source.key().dynamoKey(key)).consistentRead(true))
                    .item());
            how.accept(item);
            dynamo.putItem(b -> b.tableName(table).item(item));
        }

        private Connection session() throws SQLException {
            Connection c = session.get();
            if (c == null) {
                c = forms.open();
                session.set(c);
                sessions.add(c);
            }
            return c;
        }

        @Override
        public void close() throws SQLException {
            for (Connection c : sessions) c.close();
        }
    }
}
