package io.rebalance.cli;

import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every command run before the piece it needs exists (no DynamoDB table, no fences, no route, no stream) ends with
 * its own exit code and a message naming the next step: never the internal error (70) nor a stack trace.
 */
class MissingPiecesIT {
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("missing");
    private final String prefix = SharedServices.unique("missing") + ":";

    @BeforeEach
    void sourceTableOnly() throws Exception {
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute(String.format(RoomEventsGenerator.DDL, table));
        }
    }

    @AfterEach
    void drop() throws Exception {
        CutoverTables.drop(services, table);
    }

    private CliRun run(String... words) {
        List<String> args = new ArrayList<>(Arrays.asList(words));
        args.addAll(CliRun.base(services, table, prefix));
        args.addAll(List.of("--set", "slots.from=2024-01-01T00:00:00Z", "--set", "slots.to=2024-01-02T00:00:00Z"));
        // fences of this test's own, so dropping one leaves other tests' alone
        args.addAll(List.of(
                "--set",
                "cutover.pgFence=public." + table + "_fence",
                "--set",
                "cutover.dynamoFence=" + table + "_fence"));
        return CliRun.of(args.toArray(String[]::new));
    }

    private final SoftAssertions softly = new SoftAssertions();

    private void assertActionable(CliRun r, String what, int... codes) {
        softly.assertThat(r.exitCode()).as("%s: %s", what, r.err()).isNotEqualTo(ErrorCode.INTERNAL.exitCode());
        softly.assertThat(r.exitCode())
                .as("%s: %s", what, r.err())
                .isIn(Arrays.stream(codes).boxed().toArray());
        softly.assertThat(r.err()).as(what).doesNotContain("unexpected failure").doesNotContain("\tat ");
    }

    @Test
    void beforeTheDynamoDbTableExists() {
        int missing = ErrorCode.TARGET_TABLE_MISSING.exitCode();
        int refused = ErrorCode.CUTOVER_REFUSED.exitCode();
        assertActionable(run("copy", "--no-progress", "--no-concurrent-writers"), "copy", missing);
        assertActionable(run("verify", "--all"), "verify", VerifyCommand.ERROR);
        assertActionable(run("cutover", "--prepare", "--allow-redis-without-aof"), "cutover --prepare", missing);
        assertActionable(run("cutover", "--dry-run"), "cutover --dry-run", missing, refused);
        assertActionable(run("cutover"), "cutover", missing, refused);
        assertActionable(run("cutover", "--rollback", "--allow-redis-without-aof"), "cutover --rollback", refused);
        assertActionable(run("cutover", "--close-window", "--yes"), "cutover --close-window", refused);
        assertActionable(run("cutover", "--recover"), "cutover --recover", missing, refused);
        assertActionable(run("status"), "status", 0);
        assertActionable(run("status", "--json"), "status --json", 0);
        assertActionable(run("check"), "check", 0, CheckCommand.BLOCKED);
        softly.assertAll();
    }

    @Test
    void afterPrepareAFenceOrTheStreamGone() throws Exception {
        int refused = ErrorCode.CUTOVER_REFUSED.exitCode();
        CliRun copy = run("copy", "--create-table", "--no-progress", "--no-concurrent-writers");
        softly.assertThat(copy.exitCode()).as(copy.err()).isZero();
        CliRun prepare = run("cutover", "--prepare", "--allow-redis-without-aof");
        softly.assertThat(prepare.exitCode()).as(prepare.err()).isZero();

        var dynamo = services.dynamoClient();
        dynamo.updateTable(b -> b.tableName(table).streamSpecification(s -> s.streamEnabled(false)));
        assertActionable(run("cutover", "--dry-run"), "cutover --dry-run without the stream", refused);
        assertActionable(run("cutover", "--allow-redis-without-aof"), "cutover without the stream", refused);
        assertActionable(run("status"), "status without the stream", 0);

        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute("DROP FUNCTION IF EXISTS public." + table + "_fence_check() CASCADE"); // its trigger
            st.execute("DROP TABLE IF EXISTS public." + table + "_fence");
        }
        assertActionable(run("cutover", "--dry-run"), "cutover --dry-run without the Postgres fence", refused);
        assertActionable(run("cutover", "--allow-redis-without-aof"), "cutover without the Postgres fence", refused);
        assertActionable(run("cutover", "--recover"), "recover without the Postgres fence", 0, refused);
        assertActionable(run("status"), "status without the Postgres fence", 0);

        dynamo.deleteTable(b -> b.tableName(table + "_fence"));
        assertActionable(run("cutover", "--dry-run"), "cutover --dry-run without the DynamoDB fence", refused);
        assertActionable(run("cutover", "--rollback", "--allow-redis-without-aof"), "rollback without fences", refused);
        assertActionable(run("cutover", "--close-window", "--yes"), "close-window without fences", refused);
        assertActionable(run("status"), "status without the DynamoDB fence", 0);
        softly.assertAll();
    }
}
