package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.slot.Ulid;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The planner says when the range it takes from the table is not the data's: a stray row months after the rest (it
 * alone adds a thousand empty hours), and ids read with the wrong epoch (times in the 1980s). {@code check} lists
 * both as warnings naming the rows; before, it planned the slots without a word.
 */
class ImplausibleRangeIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Instant FIRST = Instant.parse("2024-10-20T00:00:00Z");
    private final SharedServices services = SharedServices.get();

    private CliRun check(String table, String... sets) {
        List<String> args = new ArrayList<>(List.of("check", "--json"));
        args.addAll(CliRun.base(services, table, SharedServices.unique("imp") + ":"));
        for (String s : sets) args.addAll(List.of("--set", s));
        return CliRun.of(args.toArray(String[]::new));
    }

    private static List<JsonNode> warnings(CliRun run) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode f : JSON.readTree(run.out()).path("findings")) {
            if (f.path("check").asText().equals("time range")) out.add(f);
        }
        return out;
    }

    @Test
    void aStrayRowMonthsAfterTheRestIsNamed() throws Exception {
        String table = SharedServices.unique("stray");
        String stray = Ulid.of(Instant.parse("2024-12-20T10:00:00Z").toEpochMilli(), 1, 1);
        try (Connection c = services.postgres()) {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + table + " (id text PRIMARY KEY, body text)");
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " VALUES (?, 'x')")) {
                for (int i = 0; i < 100; i++) {
                    ps.setString(1, Ulid.of(FIRST.toEpochMilli() + i * 60_000L, i, i));
                    ps.addBatch();
                }
                ps.setString(1, stray);
                ps.addBatch();
                ps.executeBatch();
            }
        }
        CliRun check = check(table);
        assertThat(check.exitCode()).as(check.err()).isZero();
        assertThat(warnings(check))
                .singleElement()
                .satisfies(w -> assertThat(w.path("level").asText()).isEqualTo("WARNING"))
                .satisfies(w -> assertThat(w.path("detail").asText())
                        .contains("the newest row (key " + stray + " at 2024-12-20T10:00:00Z) lies 61 days after")
                        .contains("about 1,472 hourly slots")
                        .contains("slots.to"));
        // with the range configured, the user chose it: no warning
        assertThat(warnings(check(table, "slots.from=2024-10-20T00:00:00Z", "slots.to=2024-12-21T00:00:00Z")))
                .isEmpty();
    }

    @Test
    void idsReadWithTheWrongEpochAreBlamedOnTheEpoch() throws Exception {
        String table = SharedServices.unique("epoch");
        long twitterEpoch = 1288834974657L; // the ids count from here; the configuration says 1970
        try (Connection c = services.postgres()) {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + table + " (id bigint PRIMARY KEY, body text)");
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " VALUES (?, 'x')")) {
                for (int i = 0; i < 100; i++) {
                    long ms = FIRST.toEpochMilli() + i * 60_000L - twitterEpoch;
                    ps.setLong(1, (ms << 23) | i);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
        }
        CliRun check = check(table);
        assertThat(check.exitCode()).as(check.err()).isZero();
        assertThat(warnings(check)).singleElement().satisfies(w -> assertThat(
                        w.path("detail").asText())
                .startsWith("at least 6 rows (key ")
                .contains("at 1983-12-17T22:17:05Z")
                .contains("a time before 1990")
                .contains("slots.snowflake.epochMillis"));
        assertThat(warnings(check(table, "slots.snowflake.epochMillis=" + twitterEpoch)))
                .isEmpty();
    }
}
