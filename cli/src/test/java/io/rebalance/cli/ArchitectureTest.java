package io.rebalance.cli;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.rebalance.core.config.ConfigValidator;
import io.rebalance.core.config.MigrationConfig;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The house rules, over the main classes of every module this one sees (all but demo and bench): dependencies point
 * one way. {@code protocol} reaches nothing above it, and {@code client} nothing but it; {@code core} reaches no
 * part; the parts ({@code mover}, {@code verifier}, {@code cdc}, {@code cutover}, {@code client}) never import each
 * other; {@code ops} composes them and reaches neither {@code cli} nor the test-only modules; nothing below {@code cli}
 * reaches it. Inside, the copy's two coordinators live apart, and {@code ops} has a room per command.
 */
class ArchitectureTest {
    private static final List<String> PARTS = List.of("mover", "verifier", "cdc", "cutover", "client");
    private static final JavaClasses MAIN = MainClasses.ALL;

    @Test
    void coreReachesNoPart() {
        noClasses()
                .that()
                .resideInAPackage("io.rebalance.core..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        packages("mover", "verifier", "cdc", "cutover", "client", "ops", "cli", "demo", "sim", "local"))
                .check(MAIN);
    }

    @Test
    void protocolReachesNothingAboveIt() {
        noClasses()
                .that()
                .resideInAPackage("io.rebalance.protocol..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(packages(
                        "core", "mover", "verifier", "cdc", "cutover", "client", "ops", "cli", "demo", "sim", "local"))
                .because("applications embed protocol through client: it carries no configuration, codec or process")
                .check(MAIN);
    }

    @Test
    void clientDependsOnTheProtocolAlone() {
        noClasses()
                .that()
                .resideInAPackage("io.rebalance.client..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(packages("core"))
                .because("an application's dependency tree carries neither YAML nor STS nor the rebalance processes")
                .check(MAIN);
    }

    @Test
    void partsNeverImportEachOther() {
        for (String part : PARTS) {
            List<String> others = new ArrayList<>(List.of("ops", "cli", "demo", "sim", "local"));
            for (String p : PARTS) if (!p.equals(part)) others.add(p);
            noClasses()
                    .that()
                    .resideInAPackage("io.rebalance." + part + "..")
                    .should()
                    .dependOnClassesThat()
                    .resideInAnyPackage(packages(others.toArray(String[]::new)))
                    .because(part + " is a part: it depends on core alone, and ops composes the parts")
                    .check(MAIN);
        }
    }

    @Test
    void opsComposesAndNothingBelowReachesTheCommands() {
        noClasses()
                .that()
                .resideInAPackage("io.rebalance.ops..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(packages("cli", "demo", "sim", "local"))
                .check(MAIN);
    }

    /** The commands parse, call and print: Redis, Postgres and DynamoDB are reached through ops. */
    @Test
    void theCommandsReachTheServicesOnlyThroughOps() {
        noClasses()
                .that()
                .resideInAPackage("io.rebalance.cli..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("redis.clients..", "java.sql..", "software.amazon.awssdk..")
                .because("a command parses, calls ops (or a part) and prints; ops opens and uses the connections")
                .check(MAIN);
    }

    /**
     * The keyspace builds every key from {@code redis.prefix}: nothing else reads the prefix from the configuration
     * but the method that builds the keyspace and the validator that checks it (the key views' constructors are
     * package-private, so nothing else can build a view either).
     */
    @Test
    void onlyTheKeyspaceReadsTheRedisPrefix() {
        noClasses()
                .that()
                .resideOutsideOfPackage("io.rebalance.protocol.keyspace..")
                .and()
                .doNotHaveFullyQualifiedName(MigrationConfig.Redis.class.getName())
                .and()
                .doNotHaveFullyQualifiedName(ConfigValidator.class.getName())
                .should()
                .callMethod(MigrationConfig.Redis.class, "prefix")
                .because("every key is built by the keyspace: config.redis().keyspace()")
                .check(MAIN);
    }

    /**
     * The copy's two coordinators live apart (mover/redis, mover/postgres) and never see each other; the copy itself
     * reaches them only where one is chosen ({@code Coordinators}), where the way to pick slots is chosen ({@code
     * Picker}), and where the Postgres queue is claimed ({@code ClaimPicker}).
     */
    @Test
    void theCopysCoordinatorsLiveApart() {
        noClasses()
                .that()
                .resideInAPackage("io.rebalance.mover.redis..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.rebalance.mover.postgres..")
                .check(MAIN);
        noClasses()
                .that()
                .resideInAPackage("io.rebalance.mover.postgres..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.rebalance.mover.redis..")
                .check(MAIN);
        noClasses()
                .that()
                .resideInAPackage("io.rebalance.mover")
                .and()
                .doNotHaveSimpleName("Coordinators")
                .and()
                .doNotHaveSimpleName("Picker")
                .and()
                .doNotHaveSimpleName("ClaimPicker")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.rebalance.mover.redis..", "io.rebalance.mover.postgres..")
                .because("the copy works through the Coordinator seam; one class chooses the coordinator")
                .check(MAIN);
    }

    /**
     * {@code ops} is a room per command it composes ({@code ops/cutover}, {@code ops/verify}, {@code ops/status}; the
     * dashboard and the metrics read status) over what they share at its top (connections, checks, the choice of
     * parts): the top reaches no room, and no room reaches another.
     */
    @Test
    void opsHasARoomPerCommandOverWhatTheyShare() {
        List<String> rooms = List.of("cutover", "verify", "status", "dashboard", "watch");
        noClasses()
                .that()
                .resideInAPackage("io.rebalance.ops")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        rooms.stream().map(r -> "io.rebalance.ops." + r + "..").toArray(String[]::new))
                .check(MAIN);
        for (String room : List.of("cutover", "verify", "status")) {
            List<String> others = new ArrayList<>();
            for (String r : rooms) if (!r.equals(room)) others.add("io.rebalance.ops." + r + "..");
            noClasses()
                    .that()
                    .resideInAPackage("io.rebalance.ops." + room + "..")
                    .should()
                    .dependOnClassesThat()
                    .resideInAnyPackage(others.toArray(String[]::new))
                    .because("each command's room is its own; what two share lives at ops' top")
                    .check(MAIN);
        }
    }

    private static String[] packages(String... modules) {
        String[] out = new String[modules.length];
        for (int i = 0; i < modules.length; i++) out[i] = "io.rebalance." + modules[i] + "..";
        return out;
    }
}
