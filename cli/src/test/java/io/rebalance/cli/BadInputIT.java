package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.redis.RedisScan;
import io.rebalance.local.DynamoDbLocalServer;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/**
 * Every bad input of `rebalance copy` fails before anything is written: one message naming what and how to fix
 * it, its own exit code, no key in Redis under the run's prefix, no DynamoDB table created (even with
 * --create-table) and no item written.
 */
class BadInputIT {
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("bad");
    private final String prefix = SharedServices.unique("bad") + ":";

    private CliRun copy(String... extra) {
        List<String> args =
                new ArrayList<>(List.of("copy", "--create-table", "--no-progress", "--no-concurrent-writers"));
        args.addAll(CliRun.base(services, table, prefix));
        args.addAll(Arrays.asList(extra));
        return CliRun.of(args.toArray(String[]::new));
    }

    private void createSource(String ddl) throws Exception {
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute(String.format(ddl, table));
        }
    }

    private void assertRefused(CliRun run, ErrorCode code, String... mentions) {
        assertThat(run.exitCode()).as(run.err()).isEqualTo(code.exitCode());
        assertThat(run.err()).startsWith("error: ").contains(mentions).doesNotContain("\tat "); // no stack trace
        try (var redis = services.redis();
                DynamoDbClient dynamo = services.dynamoClient()) {
            assertThat(RedisScan.keys(redis, prefix)).as("Redis keys written").isEmpty();
            if (code != ErrorCode.TARGET_KEY_SCHEMA) {
                assertThat(dynamo.listTables().tableNames())
                        .as("DynamoDB table created")
                        .doesNotContain(table);
            } else {
                assertThat(dynamo.scan(b -> b.tableName(table)).count())
                        .as("items written")
                        .isZero();
            }
        }
    }

    @Test
    void aConfigValueOutOfRange() {
        assertRefused(copy("--set", "mover.workers=0"), ErrorCode.CONFIG_INVALID, "mover.workers='0'", "1 to 256");
    }

    /** Ranges too small to be worth a slot are refused naming the setting; a check of one range says so. */
    @Test
    void keyRangesOfTooFewRows() throws Exception {
        createSource("CREATE TABLE %s (id uuid PRIMARY KEY, body text)");
        assertRefused(copy("--set", "slots.rowsPerSlot=10"), ErrorCode.CONFIG_INVALID, "slots.rowsPerSlot='10'");
        List<String> args = new ArrayList<>(List.of("check", "--set", "slots.timeFrom=none"));
        args.addAll(CliRun.base(services, table, prefix));
        CliRun check = CliRun.of(args.toArray(String[]::new));
        assertThat(check.exitCode()).as(check.err()).isZero();
        assertThat(check.out()).contains("key ranges", "1 range of the primary key (r000000 .. r000000)");
    }

    @Test
    void anUnknownFlagOrKey() {
        assertRefused(copy("--bogus"), ErrorCode.CONFIG_INVALID, "--bogus");
        assertRefused(copy("--set", "mover.wokers=3"), ErrorCode.CONFIG_INVALID, "mover.wokers", "mover.workers");
    }

    /** A duration flag in another form is refused naming the flag, the value and the form, before anything runs. */
    @Test
    void aDurationFlagThatIsNoDuration() {
        String[][] runs = {{"cutover", "--max-write-block", "soon"}, {"stop", "--timeout", "2 minutes"}};
        for (String[] run : runs) {
            List<String> args = new ArrayList<>(Arrays.asList(run));
            args.addAll(CliRun.base(services, table, prefix));
            assertRefused(
                    CliRun.of(args.toArray(String[]::new)),
                    ErrorCode.CONFIG_INVALID,
                    "Invalid value for option '" + run[1] + "'",
                    "'" + run[2] + "' is not a duration; write it like 500ms, 20s");
        }
    }

    @Test
    void aMissingTable() throws Exception {
        // a near name the database has is offered; the default's name (which the user may not have) is not
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + table + "s (id text PRIMARY KEY)");
        }
        try {
            CliRun run = copy();
            assertRefused(run, ErrorCode.SOURCE_TABLE_MISSING, "'" + table + "' does not exist", "source.table");
            assertThat(run.err()).contains("(nearest: public." + table + "s").doesNotContain("room_events");
        } finally {
            try (Connection c = services.postgres();
                    Statement st = c.createStatement()) {
                st.execute("DROP TABLE " + table + "s");
            }
        }
    }

    @Test
    void aMissingColumn() throws Exception {
        createSource("CREATE TABLE %s (id text PRIMARY KEY, body text)");
        assertRefused(copy("--set", "source.columns=id,nope"), ErrorCode.SOURCE_COLUMN_MISSING, "'nope'", "id, body");
    }

    @Test
    void aKeyColumnOfAWrongType() throws Exception {
        createSource("CREATE TABLE %s (id numeric PRIMARY KEY, body text)");
        assertRefused(copy(), ErrorCode.SOURCE_KEY_TYPE, "numeric", "bigint");
    }

    @Test
    void aKeyColumnThatIsNotUnique() throws Exception {
        createSource("CREATE TABLE %s (id text NOT NULL, body text)");
        assertRefused(copy(), ErrorCode.SOURCE_KEY_TYPE, "has no primary key", "source.keyColumn");
        assertRefused(
                copy("--set", "source.keyColumns=id"),
                ErrorCode.SOURCE_KEY_TYPE,
                "source.keyColumns names id, which is not unique",
                "add a unique index on id");
        // the old spelling of a one-column key is still read, and said to be old before the refusal
        CliRun old = copy("--set", "source.keyColumn=id");
        assertThat(old.exitCode()).isEqualTo(ErrorCode.SOURCE_KEY_TYPE.exitCode());
        assertThat(old.err())
                .startsWith("warning: source.keyColumn (in --set source.keyColumn) is deprecated and read as"
                        + " source.keyColumns")
                .contains("error: source.keyColumns names id, which is not unique");
    }

    /** No table is assumed (the demo's name is no default): a run naming none is refused before it connects. */
    @Test
    void aRunThatNamesNoTableIsRefusedNamingTheKey() {
        CliRun run = CliRun.of("copy", "--no-progress", "--set", "redis.prefix=" + prefix);
        assertThat(run.exitCode()).as(run.err()).isEqualTo(ErrorCode.CONFIG_INVALID.exitCode());
        assertThat(run.err())
                .contains("source.table is not set")
                .contains("REBALANCE_SOURCE_TABLE")
                .doesNotContain("room_events")
                .doesNotContain("target.table");
    }

    @Test
    void aNamedKeyThatMayBeNullIsRefused() throws Exception {
        createSource("CREATE TABLE %s (id text UNIQUE, body text)");
        assertRefused(copy("--set", "source.keyColumns=id"), ErrorCode.SOURCE_KEY_TYPE, "may be NULL", "SET NOT NULL");
    }

    @Test
    void aPartitionedTableWhosePrimaryKeyHoldsItsTimestampIsAskedForItsKey() throws Exception {
        createSource("CREATE TABLE %s (id text NOT NULL, created_at timestamptz NOT NULL, body text,"
                + " PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at)");
        assertRefused(
                copy(), ErrorCode.SOURCE_KEY_TYPE, "holds its partition key created_at", "source.keyColumns: [id]");
    }

    @Test
    void aKeyColumnThatIsOnlyThePrimaryKeysFirstColumnNamesThePrimaryKey() throws Exception {
        // used to say "tenant_id has no unique index that starts with it", whose fix could not apply
        createSource("CREATE TABLE %s (tenant_id int, id bigint, body text, PRIMARY KEY (tenant_id, id))");
        assertRefused(
                copy("--set", "source.keyColumns=tenant_id"),
                ErrorCode.SOURCE_KEY_TYPE,
                "primary key is (tenant_id, id)",
                "leave source.keyColumns unset to use the primary key");
    }

    @Test
    void aPrimaryKeyOfThreeColumnsIsRefusedNamingThem() throws Exception {
        createSource("CREATE TABLE %s (a int, b int, id bigint, body text, PRIMARY KEY (a, b, id))");
        assertRefused(copy(), ErrorCode.SOURCE_KEY_TYPE, "(a, b, id): 3 columns", "source.keyColumns");
        assertRefused(
                copy("--set", "source.keyColumns=a,b,id"),
                ErrorCode.CONFIG_INVALID,
                "source.keyColumns [a, b, id] names 3 columns",
                "one or two");
    }

    @Test
    void postgresUnreachable() {
        assertRefused(
                copy("--set", "source.jdbcUrl=jdbc:postgresql://127.0.0.1:1/postgres"),
                ErrorCode.SOURCE_UNREACHABLE,
                "127.0.0.1:1",
                "source.jdbcUrl");
    }

    @Test
    void redisUnreachable() {
        assertRefused(
                copy("--set", "redis.url=redis://127.0.0.1:1"),
                ErrorCode.REDIS_UNREACHABLE,
                "127.0.0.1:1",
                "redis.url");
    }

    @Test
    void redisTopologyMismatchesAndUnreachableClusterOrSentinels() {
        assertRefused(
                copy("--set", "redis.url=redis://127.0.0.1:1,127.0.0.1:2"),
                ErrorCode.CONFIG_INVALID,
                "redis.url='redis://127.0.0.1:1,127.0.0.1:2' lists 2 hosts",
                "redis.mode");
        assertRefused(copy("--set", "redis.mode=sentinel"), ErrorCode.CONFIG_INVALID, "redis.sentinelMaster is empty");
        // Redis answers, so it is not unreachable (15, "does not answer"): the URL names a database it lacks
        List<String> db99 = new ArrayList<>(CliRun.base(services, table, prefix));
        db99.addAll(List.of("--set", "redis.url=" + services.redisUrl + "/99"));
        assertRefused(
                CliRun.of(db99, "status"),
                ErrorCode.CONFIG_INVALID,
                "names database 99, which that Redis does not have",
                "numbered from 0");
        assertRefused(
                copy("--set", "redis.mode=cluster", "--set", "redis.url=redis://u:pw@127.0.0.1:1,127.0.0.1:2"),
                ErrorCode.REDIS_UNREACHABLE,
                "The Redis Cluster at redis://***@127.0.0.1:1,127.0.0.1:2 does not answer",
                "redis.mode");
        assertRefused(
                copy(
                        "--set",
                        "redis.mode=sentinel",
                        "--set",
                        "redis.sentinelMaster=m",
                        "--set",
                        "redis.url=redis://127.0.0.1:1"),
                ErrorCode.REDIS_UNREACHABLE,
                "The primary 'm' through the sentinels at redis://127.0.0.1:1 does not answer");
    }

    @Test
    void dynamoUnreachable() throws Exception {
        createSource("CREATE TABLE %s (id text PRIMARY KEY, body text)");
        assertRefused(
                copy(
                        "--set",
                        "target.endpoint=http://127.0.0.1:1",
                        "--set",
                        "slots.from=2024-10-19T00:00:00Z",
                        "--set",
                        "slots.to=2024-10-20T00:00:00Z"),
                ErrorCode.TARGET_UNREACHABLE,
                "127.0.0.1:1",
                "target.endpoint");
    }

    @Test
    void theDemosInProcessDynamoDb() throws Exception {
        createSource("CREATE TABLE %s (id text PRIMARY KEY, body text)");
        assertRefused(
                copy("--set", "target.endpoint=embedded"),
                ErrorCode.CONFIG_INVALID,
                "target.endpoint 'embedded' is the demo's",
                "rebalance-demo dynamodb-local");
        CliRun tail = CliRun.of(Stream.concat(
                        Stream.of("tail"),
                        Stream.concat(
                                CliRun.base(services, table, prefix).stream(),
                                Stream.of("--set", "target.endpoint=embedded")))
                .toArray(String[]::new));
        assertRefused(tail, ErrorCode.CONFIG_INVALID, "target.endpoint 'embedded' is the demo's");
    }

    @Test
    void aCopyPointedAtAnotherDynamoDbThanItsRun() throws Exception {
        createSource("CREATE TABLE %s (id text PRIMARY KEY, body text)");
        String[] slots = {"--set", "slots.from=2024-10-19T00:00:00Z", "--set", "slots.to=2024-10-19T02:00:00Z"};
        CliRun first = copy(slots);
        assertThat(first.exitCode()).as(first.err()).isZero();
        try (DynamoDbLocalServer other = SharedServices.ownDynamo();
                DynamoDbClient elsewhere = SharedServices.dynamoClient(other.endpoint())) {
            List<String> args = new ArrayList<>(Arrays.asList(slots));
            args.addAll(List.of("--set", "target.endpoint=" + other.endpoint()));
            CliRun second = copy(args.toArray(String[]::new));
            assertThat(second.exitCode()).as(second.err()).isEqualTo(ErrorCode.RUN_CONFLICT.exitCode());
            assertThat(second.err())
                    .contains("target.endpoint: " + services.dynamo.endpoint() + " vs " + other.endpoint())
                    .contains("redis.prefix");
            assertThat(elsewhere.listTables().tableNames())
                    .as("nothing created where the refused process points")
                    .isEmpty();
            // the parts that join the run without planning it are refused too
            for (List<String> words : List.of(
                    List.of("tail", "--create-table"), List.of("verify", "--all"), List.of("cutover", "--dry-run"))) {
                List<String> joined = new ArrayList<>(words);
                joined.addAll(CliRun.base(services, table, prefix));
                joined.addAll(args);
                CliRun refused = CliRun.of(joined.toArray(String[]::new));
                assertThat(refused.exitCode())
                        .as("%s: %s", words, refused.err())
                        .isEqualTo(
                                words.get(0).equals("verify")
                                        ? VerifyCommand.ERROR
                                        : ErrorCode.RUN_CONFLICT.exitCode());
                assertThat(refused.err()).as("%s", words).contains("target.endpoint: ");
            }
            assertThat(elsewhere.listTables().tableNames())
                    .as("tail --create-table created nothing")
                    .isEmpty();
        }
        CliRun region = copy(slots[0], slots[1], slots[2], slots[3], "--set", "target.region=eu-west-1");
        assertThat(region.exitCode()).as(region.err()).isEqualTo(ErrorCode.RUN_CONFLICT.exitCode());
        assertThat(region.err()).contains("target.region: us-east-1 vs eu-west-1");
    }

    @Test
    void aVerifyPointedAtAPostgresThatIsNoStandby() throws Exception {
        createSource("CREATE TABLE %s (id text PRIMARY KEY, body text)");
        for (String[] c : List.of(
                new String[] {
                    services.jdbcUrl, "[CONFIG_INVALID]", "is not a hot standby (pg_is_in_recovery() is false)"
                },
                new String[] {"jdbc:postgresql://127.0.0.1:1/postgres", "[SOURCE_UNREACHABLE]", "cannot be reached"})) {
            List<String> args = new ArrayList<>(List.of("verify", "--all"));
            args.addAll(CliRun.base(services, table, prefix));
            args.addAll(List.of("--set", "verify.jdbcUrl=" + c[0]));
            CliRun refused = CliRun.of(args.toArray(String[]::new));
            assertThat(refused.exitCode()).as(refused.err()).isEqualTo(VerifyCommand.ERROR);
            assertThat(refused.err()).contains("verify.jdbcUrl=", c[1], c[2]).doesNotContain("\tat ");
        }
        // a URL that is no JDBC URL is refused before anything connects, its password masked
        assertRefused(
                copy("--set", "verify.jdbcUrl=postgres://me:s3cret@replica/db"),
                ErrorCode.CONFIG_INVALID,
                "verify.jdbcUrl='postgres://***@replica/db'",
                "hot standby");
        assertThat(copy("--set", "verify.jdbcUrl=postgres://me:s3cret@replica/db")
                        .err())
                .doesNotContain("s3cret");
    }

    @Test
    void aCopyWithoutAChangeStream() throws Exception {
        createSource("CREATE TABLE %s (id text PRIMARY KEY, body text)");
        List<String> args = new ArrayList<>(List.of("copy", "--create-table", "--no-progress"));
        args.addAll(CliRun.base(services, table, prefix));
        args.addAll(List.of("--set", "tail.slotName=" + table, "--set", "tail.publication=" + table));
        assertRefused(
                CliRun.of(args.toArray(String[]::new)),
                ErrorCode.NO_CHANGE_STREAM,
                "no replication slot '" + table + "'",
                "start `rebalance tail` first",
                "--no-concurrent-writers");

        // a slot alone is not enough: without the table in its publication it carries none of the table's changes
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute("SELECT pg_create_logical_replication_slot('" + table + "', 'pgoutput')");
            try {
                assertRefused(
                        CliRun.of(args.toArray(String[]::new)),
                        ErrorCode.NO_CHANGE_STREAM,
                        "publication '" + table + "' (tail.publication) does not include " + table,
                        "--no-concurrent-writers");
            } finally {
                st.execute("SELECT pg_drop_replication_slot('" + table + "')");
            }
        }
    }

    @Test
    void aDynamoTableThatDoesNotExist() throws Exception {
        createSource("CREATE TABLE %s (id text PRIMARY KEY, body text)");
        List<String> args = new ArrayList<>(List.of("copy", "--no-progress", "--no-concurrent-writers"));
        args.addAll(CliRun.base(services, table, prefix));
        args.addAll(List.of("--set", "slots.from=2024-10-19T00:00:00Z", "--set", "slots.to=2024-10-20T00:00:00Z"));
        assertRefused(
                CliRun.of(args.toArray(String[]::new)),
                ErrorCode.TARGET_TABLE_MISSING,
                "'" + table + "' does not exist",
                "--create-table");
    }

    @Test
    void aDynamoKeySchemaThatDoesNotFit() throws Exception {
        createSource("CREATE TABLE %s (id text PRIMARY KEY, body text)");
        createTargetWithoutIndex(ScalarAttributeType.N);
        assertRefused(
                copy("--set", "slots.from=2024-10-19T00:00:00Z", "--set", "slots.to=2024-10-20T00:00:00Z"),
                ErrorCode.TARGET_KEY_SCHEMA,
                "id:N",
                "of type S");
    }

    @Test
    void aDynamoTableWithoutTheSlotIndex() throws Exception {
        createSource("CREATE TABLE %s (id text PRIMARY KEY, body text)");
        createTargetWithoutIndex(ScalarAttributeType.S);
        assertRefused(
                copy("--set", "slots.from=2024-10-19T00:00:00Z", "--set", "slots.to=2024-10-20T00:00:00Z"),
                ErrorCode.TARGET_KEY_SCHEMA,
                "has no index by_slot",
                "partition key _slot (S), sort key id and projection ALL");
    }

    @Test
    void aColumnNamedLikeTheSlotAttribute() throws Exception {
        createSource("CREATE TABLE %s (id text PRIMARY KEY, _slot text)");
        assertRefused(copy(), ErrorCode.CONFIG_INVALID, "column _slot", "target.slotAttribute");
    }

    @Test
    void anInvertedTimeRange() throws Exception {
        createSource("CREATE TABLE %s (id text PRIMARY KEY, body text)");
        assertRefused(
                copy("--set", "slots.from=2024-10-20T00:00:00Z", "--set", "slots.to=2024-10-19T00:00:00Z"),
                ErrorCode.TIME_RANGE_INVALID,
                "slots.from=2024-10-20T00:00:00Z",
                "swap them");
    }

    @Test
    void anEmptyTableWithoutARange() throws Exception {
        createSource("CREATE TABLE %s (id text PRIMARY KEY, body text)");
        assertRefused(copy(), ErrorCode.TIME_RANGE_INVALID, "is empty", "slots.from");
    }

    /** A DynamoDB table keyed by id of {@code type}, without the slot index. */
    private void createTargetWithoutIndex(ScalarAttributeType type) {
        try (DynamoDbClient dynamo = services.dynamoClient()) {
            dynamo.createTable(b -> b.tableName(table)
                    .billingMode(BillingMode.PAY_PER_REQUEST)
                    .keySchema(KeySchemaElement.builder()
                            .attributeName("id")
                            .keyType(KeyType.HASH)
                            .build())
                    .attributeDefinitions(AttributeDefinition.builder()
                            .attributeName("id")
                            .attributeType(type)
                            .build()));
        }
    }
}
