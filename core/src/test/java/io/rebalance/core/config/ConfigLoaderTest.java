package io.rebalance.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {
    @TempDir
    Path dir;

    @Test
    void laterLayersWinDefaultsThenFileThenEnvironmentThenFlags() throws Exception {
        Path file = dir.resolve("m.yaml");
        Files.writeString(file, "source:\n  table: public.events\nmover:\n  workers: 4\n  batchSize: 10\n");
        var loader = new ConfigLoader(Map.of("REBALANCE_MOVER_WORKERS", "6", "REBALANCE_MOVER_LEASE_TTL", "30s"));
        MigrationConfig c = loader.load(file, Map.of("mover.batchSize", "20"));
        assertThat(c.source().table()).isEqualTo("public.events");
        assertThat(c.mover().workers()).isEqualTo(6);
        assertThat(c.mover().batchSize()).isEqualTo(20);
        assertThat(c.mover().leaseTtl().getSeconds()).isEqualTo(30);
        assertThat(c.redis().prefix()).isEqualTo("mgre:");
    }

    @Test
    void anUnknownKeyIsAnErrorThatSuggestsTheRightOne() throws Exception {
        Path file = dir.resolve("m.yaml");
        Files.writeString(file, "mover:\n  worker: 4\n");
        assertThatThrownBy(() -> new ConfigLoader(Map.of()).load(file, Map.of()))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageContaining("mover.worker")
                .hasMessageContaining("mover.workers")
                .hasMessageContaining(file + " line 2, column 3");
    }

    @Test
    void aConfigPathThatIsNoFileIsNamedAsWhatItIs() {
        assertThatThrownBy(() -> new ConfigLoader(Map.of()).load(dir.resolve("none.yaml"), Map.of()))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageContaining("none.yaml does not exist; pass an existing YAML file with --config");
        assertThatThrownBy(() -> new ConfigLoader(Map.of()).load(dir, Map.of()))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageContaining(dir + " is a directory; pass an existing YAML file with --config");
    }

    @Test
    void yamlErrorsNameTheLineAndColumn() throws Exception {
        Path broken = Files.writeString(dir.resolve("broken.yaml"), "source:\n  table: a\n   jdbcUrl: [x\n");
        assertThatThrownBy(() -> new ConfigLoader(Map.of()).load(broken, Map.of()))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageMatching("(?s)config file .*broken.yaml is not valid YAML at line 3, column \\d+: .*");
        Path wrongType = Files.writeString(dir.resolve("m.yaml"), "source:\n  table: a\nmover:\n\n  workers: many\n");
        assertThatThrownBy(() -> new ConfigLoader(Map.of()).load(wrongType, Map.of()))
                .hasMessageContaining("mover.workers")
                .hasMessageContaining("many")
                .hasMessageContaining("(set in " + wrongType + " line 5, column 3)");
    }

    @Test
    void aMistypedVariableIsWarnedOfWithTheNearestOne() {
        var loader = new ConfigLoader(Map.of(
                "REBALANCE_MOVER_WORKRES", "6",
                "REBALANCE_NOTHING_LIKE_IT", "x",
                "REBALANCE_CONFIG", "m.yaml",
                "REBALANCE_LOG_LEVEL", "DEBUG"));
        MigrationConfig c = loader.load(null, Map.of());
        assertThat(c.mover().workers()).as("ignored").isEqualTo(8);
        assertThat(loader.warnings())
                .containsExactly(
                        "environment variable REBALANCE_MOVER_WORKRES is not a rebalance setting and is ignored; did"
                                + " you mean REBALANCE_MOVER_WORKERS?",
                        "environment variable REBALANCE_NOTHING_LIKE_IT is not a rebalance setting and is ignored;"
                                + " `rebalance config --env` lists the variables");
    }

    @Test
    void aValueOfTheWrongTypeNamesKeyValueAndWhereToFixIt() {
        assertThatThrownBy(() -> new ConfigLoader(Map.of("REBALANCE_MOVER_WORKERS", "many")).load(null, Map.of()))
                .hasMessageContaining("mover.workers")
                .hasMessageContaining("many")
                .hasMessageContaining("REBALANCE_MOVER_WORKERS");
    }

    /** Every value of the wrong type at once (they came one per run), and a list where one value belongs in words. */
    @Test
    void everyValueOfTheWrongTypeIsNamedAtOnceWithoutJacksonsWords() throws Exception {
        Path bad = Files.writeString(
                dir.resolve("types.yaml"), "mover:\n  workers: [1, 2]\n  pageSize: lots\nsource:\n  table: [a, b]\n");
        assertThatThrownBy(() -> new ConfigLoader(Map.of()).load(bad, Map.of()))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageStartingWith("3 config keys are invalid:")
                .hasMessageContaining(
                        "config key 'source.table' is a list ([\"a\",\"b\"]) where one text value belongs")
                .hasMessageContaining("config key 'mover.workers' is a list ([1,2]) where one whole number belongs")
                .hasMessageContaining("config key 'mover.pageSize' has value 'lots', which is not a whole number")
                .hasMessageContaining("(set in " + bad + " line 3, column 3)")
                .hasMessageNotContaining("Cannot deserialize")
                .hasMessageNotContaining("JsonToken");
    }

    /**
     * docs/config.md promises every problem at once: unknown keys (in the file and in --set), a value of the wrong type
     * and a value out of range came one per run, each hiding the next.
     */
    @Test
    void unknownKeysWrongTypesAndBadValuesAreNamedInOneRun() throws Exception {
        Path file = Files.writeString(
                dir.resolve("all.yaml"), "mover:\n  worker: 4\n  pageSize: lots\n  batchSize: 26\nslot:\n  x: 1\n");
        assertThatThrownBy(() ->
                        new ConfigLoader(Map.of()).load(file, Map.of("tail.heartbeet", "1s", "source.table", "events")))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageStartingWith("5 config keys are invalid:")
                .hasMessageContaining("mover.worker")
                .hasMessageContaining(file + " line 2, column 3")
                .hasMessageContaining("'slot'")
                .hasMessageContaining("tail.heartbeet")
                .hasMessageContaining("config key 'mover.pageSize' has value 'lots'")
                .hasMessageContaining("mover.batchSize='26'");
    }

    /** A tab used as indentation is named, at its own line (the parser's location is the line before). */
    @Test
    void aTabIsNamedAtItsLine() throws Exception {
        Path tabbed = Files.writeString(dir.resolve("tab.yaml"), "source:\n  table: a\n\tjdbcUrl: x\n");
        assertThatThrownBy(() -> new ConfigLoader(Map.of()).load(tabbed, Map.of()))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageContaining("is not valid YAML at line 3, column 1: a tab")
                .hasMessageContaining("spaces");
    }

    @Test
    void validationListsEveryProblemAtOnce() {
        assertThatThrownBy(() -> new ConfigLoader(Map.of())
                        .load(
                                null,
                                Map.of(
                                        "mover.batchSize",
                                        "26",
                                        "slots.timeFrom",
                                        "clock",
                                        "redis.url",
                                        "http://x",
                                        "target.table",
                                        "ab",
                                        "cutover.dynamoFenceStripes",
                                        "100")))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageContaining("mover.batchSize='26'")
                .hasMessageContaining("slots.timeFrom='clock' is not valid; expected one of column, id, none")
                .hasMessageContaining("redis.url")
                .hasMessageContaining("target.table='ab'")
                .hasMessageContaining("cutover.dynamoFenceStripes='100'")
                .hasMessageContaining("source.table is not set");
    }

    /** Choices and durations are typed: a value outside them is named with what to write, in one run with the rest. */
    @Test
    void aChoiceOrDurationOutsideItsTypeIsNamedWithTheForms() {
        assertThatThrownBy(() -> new ConfigLoader(Map.of("REBALANCE_TAIL_HEARTBEAT", "soon"))
                        .load(
                                null,
                                Map.of("redis.mode", "clustered", "source.table", "events", "mover.leaseTtl", "20")))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageStartingWith("3 config keys are invalid:")
                .hasMessageContaining(
                        "redis.mode='clustered' is not valid; expected one of cluster, sentinel, standalone")
                .hasMessageContaining("tail.heartbeat: 'soon' is not a duration; write it like 500ms, 20s, 5m")
                .hasMessageContaining("REBALANCE_TAIL_HEARTBEAT")
                .hasMessageContaining("mover.leaseTtl: '20' is not a duration");
        MigrationConfig c = new ConfigLoader(Map.of())
                .load(null, Map.of("source.table", "t", "slots.timeFrom", "none", "log.format", "json"));
        assertThat(c.slots().timeFrom()).isEqualTo(TimeFrom.NONE);
        assertThat(c.log().format()).isEqualTo(LogForm.JSON);
        assertThat(c.tail().heartbeat()).isEqualTo(java.time.Duration.ofSeconds(5));
        assertThat(ConfigPrinter.toYaml(c)).contains("timeFrom: \"none\"").contains("heartbeat: \"5s\"");
        assertThat(ConfigPrinter.toJson(c)).contains("\"leaseTtl\" : \"20s\"").contains("\"mode\" : \"standalone\"");
    }

    /** The defaults that depend on another key are resolved once, where the configuration is built. */
    @Test
    void noTableIsAssumedAndTheTargetAndScopeDefaultToTheSourcesName() {
        assertThatThrownBy(() -> ConfigValidator.validate(new ConfigLoader(Map.of()).load(null, Map.of())))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageContaining("source.table is not set")
                .hasMessageContaining("REBALANCE_SOURCE_TABLE")
                .hasMessageNotContaining("target.table");
        MigrationConfig c = new ConfigLoader(Map.of()).load(null, Map.of("source.table", "billing.invoices"));
        assertThat(c.target().table()).isEqualTo("invoices");
        assertThat(c.cutover().scope()).isEqualTo("invoices");
        MigrationConfig named = new ConfigLoader(Map.of())
                .load(null, Map.of("source.table", "billing.invoices", "target.table", "inv"));
        assertThat(named.cutover().scope()).isEqualTo("inv");
        assertThat(new ConfigLoader(Map.of())
                        .load(null, Map.of("source.table", "t", "cutover.scope", "app"))
                        .cutover()
                        .scope())
                .isEqualTo("app");
    }

    /** {@code source.keyColumn}, the old spelling of a one-column key, is read as {@code source.keyColumns}, warned of. */
    @Test
    void theOldKeyColumnSpellingIsReadWithAWarning() throws Exception {
        Path file = Files.writeString(dir.resolve("old.yaml"), "source:\n  table: t\n  keyColumn: event_id\n");
        ConfigLoader fromFile = new ConfigLoader(Map.of());
        assertThat(fromFile.load(file, Map.of()).source().keyColumns()).containsExactly("event_id");
        assertThat(fromFile.warnings())
                .singleElement()
                .asString()
                .contains("source.keyColumn (in " + file + ") is deprecated")
                .contains("write source.keyColumns");
        ConfigLoader fromEnv = new ConfigLoader(Map.of("REBALANCE_SOURCE_KEY_COLUMN", "id"));
        assertThat(fromEnv.load(null, Map.of("source.table", "t")).source().keyColumns())
                .containsExactly("id");
        assertThat(fromEnv.warnings()).singleElement().asString().contains("REBALANCE_SOURCE_KEY_COLUMN");
        ConfigLoader fromFlag = new ConfigLoader(Map.of());
        assertThat(fromFlag.load(null, Map.of("source.table", "t", "source.keyColumn", "k"))
                        .source()
                        .keyColumns())
                .containsExactly("k");
        assertThat(fromFlag.warnings()).singleElement().asString().contains("--set source.keyColumn");
        Path both = Files.writeString(
                dir.resolve("both.yaml"), "source:\n  table: t\n  keyColumn: a\n  keyColumns: [a, b]\n");
        assertThatThrownBy(() -> new ConfigLoader(Map.of()).load(both, Map.of()))
                .hasMessageContaining("source.keyColumn and source.keyColumns are both set; keep source.keyColumns");
        assertThat(ConfigLoader.keys()).doesNotContain("source.keyColumn");
    }

    @Test
    void partsAreReadFromTheFileOrInFlowFormFromAFlagOrVariable() throws Exception {
        Path file = Files.writeString(
                dir.resolve("parts.yaml"),
                "source:\n  table: events\ncutover:\n  parts:\n    - {name: pilot, values: [42]}\n    - {name: early, hashFrom: 0, hashTo: 10}\n"
                        + "    - name: band\n      from: 100\n      to: 200\n    - {name: rest}\n");
        MigrationConfig fromFile = new ConfigLoader(Map.of()).load(file, Map.of());
        ConfigValidator.validate(fromFile);
        assertThat(fromFile.cutover().partMap().written())
                .isEqualTo("[{name: pilot, values: [42]}, {name: early, hashFrom: 0, hashTo: 10},"
                        + " {name: band, from: 100, to: 200}, {name: rest}]");
        String flow = fromFile.cutover().partMap().written();
        assertThat(new ConfigLoader(Map.of())
                        .load(null, Map.of("cutover.parts", flow))
                        .cutover()
                        .partMap())
                .isEqualTo(fromFile.cutover().partMap());
        assertThat(new ConfigLoader(Map.of("REBALANCE_CUTOVER_PARTS", flow))
                        .load(null, Map.of())
                        .cutover()
                        .partMap())
                .isEqualTo(fromFile.cutover().partMap());
        assertThat(ConfigPrinter.toYaml(fromFile))
                .as("only the fields given")
                .contains("- name: \"pilot\"\n    values:\n    - 42\n")
                .doesNotContain("null");
        assertThat(new ConfigLoader(Map.of())
                        .load(null, Map.of())
                        .cutover()
                        .partMap()
                        .parted())
                .isFalse();
    }

    @Test
    void partsThatLeaveAValueWithoutAPartOrNameOneTwiceAreRefusedByKey() throws Exception {
        MigrationConfig noRest = new ConfigLoader(Map.of())
                .load(null, Map.of("cutover.parts", "[{name: pilot, values: [42]}, {name: pilot, hashTo: 10}]"));
        assertThatThrownBy(() -> ConfigValidator.validate(noRest))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageContaining("cutover.parts[1].name='pilot'")
                .hasMessageContaining("cutover.parts has no last part with only a name")
                .hasMessageContaining("add {name: rest} at the end");
        Path typo = Files.writeString(dir.resolve("typo.yaml"), "cutover:\n  parts:\n    - {name: a, valeus: [1]}\n");
        assertThatThrownBy(() -> new ConfigLoader(Map.of()).load(typo, Map.of()))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageContaining("valeus");
        assertThatThrownBy(() -> new ConfigLoader(Map.of()).load(null, Map.of("cutover.parts", "[{name: a")))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageContaining("cutover.parts")
                .hasMessageContaining("flow form");
    }

    @Test
    void anInvertedRangeHasItsOwnCode() {
        MigrationConfig c = new ConfigLoader(Map.of())
                .load(
                        null,
                        Map.of(
                                "source.table",
                                "events",
                                "slots.from",
                                "2024-10-20T00:00:00Z",
                                "slots.to",
                                "2024-10-19T00:00:00Z"));
        assertThatThrownBy(() -> ConfigValidator.validate(c))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.TIME_RANGE_INVALID))
                .hasMessageContaining("swap them");
    }

    @Test
    void secretsNeverReachToStringOrThePrintedConfig() {
        MigrationConfig c = new ConfigLoader(Map.of("REBALANCE_SOURCE_PASSWORD", "hunter2"))
                .load(null, Map.of("redis.url", "redis://user:s3cret@127.0.0.1:6379"));
        assertThat(c.toString()).doesNotContain("hunter2").doesNotContain("s3cret");
        assertThat(ConfigPrinter.toYaml(c)).doesNotContain("hunter2").doesNotContain("s3cret");
        MigrationConfig r = new ConfigLoader(Map.of(
                        "REBALANCE_REDIS_PASSWORD", "redis-pw", "REBALANCE_REDIS_SENTINEL_PASSWORD", "sentinel-pw"))
                .load(null, Map.of());
        assertThat(r.redis().password()).isEqualTo("redis-pw");
        assertThat(r.toString()).doesNotContain("redis-pw").doesNotContain("sentinel-pw");
        assertThat(ConfigPrinter.toYaml(r)).doesNotContain("redis-pw").doesNotContain("sentinel-pw");
        assertThat(ConfigPrinter.toJson(r)).doesNotContain("redis-pw").doesNotContain("sentinel-pw");
    }

    @Test
    void envNamesFollowTheKeys() {
        assertThat(ConfigLoader.envName("source.jdbcUrl")).isEqualTo("REBALANCE_SOURCE_JDBC_URL");
        assertThat(ConfigLoader.keys()).contains("slots.snowflake.epochMillis", "mover.rateLimit");
    }
}
