package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The run records the table's columns; a copy that sees them change stops (exit 35) instead of writing items of
 * another shape, and verify refuses the same way (its error exit, 2, naming SCHEMA_CHANGED and the change); `copy --accept-schema` goes on in the new shape
 * and `verify --all --repair` rewrites the rows copied before, ending MATCH (docs/schema-changes.md). Before, an added
 * column was silently left out and verify reported every row as DIFFERENT with no word of why.
 */
class SchemaChangeIT {
    private static final int ROWS = 2_000;

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("schema");
    private final String prefix = SharedServices.unique("sc") + ":";
    private final ExecutorService thread = Executors.newSingleThreadExecutor();

    private CliRun run(String... words) {
        List<String> flags = new ArrayList<>(CliRun.base(services, table, prefix));
        return CliRun.of(flags, words);
    }

    @AfterEach
    void drop() throws Exception {
        thread.shutdownNow();
        CutoverTables.drop(services, table);
    }

    @Test
    void aColumnAddedDuringTheCopyStopsItThenTheDocumentedWayEndsMatch() throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            RoomEventsGenerator.create(pg, table, ROWS, Instant.parse("2024-10-20T12:00:00Z"), 12, 9);
            // slow enough that the ALTER lands mid-copy
            Future<CliRun> copy = thread.submit(
                    () -> run("copy", "--create-table", "--no-concurrent-writers", "--no-progress", "--rate", "200"));
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> copied() > 100);
            st.execute("ALTER TABLE " + table + " ADD COLUMN note text NOT NULL DEFAULT 'n'");

            CliRun stopped = copy.get(60, TimeUnit.SECONDS);
            assertThat(stopped.exitCode()).as(stopped.out() + stopped.err()).isEqualTo(35);
            assertThat(stopped.err())
                    .contains("column note (text) was added")
                    .contains("rebalance copy --accept-schema");
            assertThat(copied()).as("the copy stopped before its end").isLessThan(ROWS);

            CliRun verify = run("verify", "--all"); // verify answers like diff(1): any error is a 2, its code named
            assertThat(verify.exitCode()).as(verify.out() + verify.err()).isEqualTo(2);
            assertThat(verify.err()).contains("column note (text) was added").contains("[SCHEMA_CHANGED]");

            CliRun accepted = run("copy", "--no-concurrent-writers", "--no-progress", "--accept-schema");
            assertThat(accepted.exitCode()).as(accepted.out() + accepted.err()).isZero();
            CliRun repaired = run("verify", "--all", "--repair");
            assertThat(repaired.exitCode()).as(repaired.out()).isZero();
            CliRun match = run("verify", "--all");
            assertThat(match.exitCode()).as(match.out()).isZero();

            st.execute("ALTER TABLE " + table + " ALTER COLUMN kind TYPE varchar(40)");
            CliRun retyped = run("verify", "--all");
            assertThat(retyped.exitCode()).isEqualTo(2);
            assertThat(retyped.err()).contains("column kind changed type from text to varchar");

            st.execute("ALTER TABLE " + table + " RENAME COLUMN note TO remark");
            CliRun renamed = run("copy", "--no-concurrent-writers", "--no-progress");
            assertThat(renamed.exitCode()).isEqualTo(35);
            assertThat(renamed.err())
                    .contains("column remark (text) was added")
                    .contains("column note (text) was dropped or renamed");
        }
    }

    private long copied() throws Exception {
        return new ObjectMapper()
                .readTree(run("status", "--json").out())
                .path("rows")
                .path("copied")
                .asLong();
    }
}
