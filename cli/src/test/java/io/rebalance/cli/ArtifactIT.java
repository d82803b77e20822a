package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * The production jar, {@code rebalance.jar}: the SDK modules web identity, assume-role and SSO need; no test
 * library, no DynamoDB Local, no application simulator, no demo (those are rebalance-demo.jar's). Its size goes
 * to the report. And the production command points a user who asks it for {@code demo} at the jar that has it.
 */
class ArtifactIT {
    private static final Path JAR = Path.of("target/rebalance.jar");

    private static List<String> entries() throws IOException {
        try (ZipFile zip = new ZipFile(JAR.toFile())) {
            return zip.stream().map(ZipEntry::getName).toList();
        }
    }

    @Test
    void theProductionJarCarriesTheAwsCredentialModulesAndNothingOfTheDemoOrTheTests() throws IOException {
        List<String> names = entries();
        for (String module : List.of("sts", "sso", "ssooidc")) {
            assertThat(names)
                    .as("SDK module %s", module)
                    .anyMatch(n -> n.startsWith("software/amazon/awssdk/services/" + module + "/"));
        }
        for (String absent : List.of(
                "org/testcontainers/",
                "com/amazonaws/services/dynamodbv2/local/",
                "com/almworks/sqlite4java/",
                "io/rebalance/sim/",
                "io/rebalance/local/",
                "io/rebalance/testkit/",
                "io/rebalance/demo/",
                "org/junit/",
                "org/assertj/")) {
            assertThat(names).as("%s in rebalance.jar", absent).noneMatch(n -> n.startsWith(absent));
        }
        assertThat(names)
                .contains("io/rebalance/ops/status/StatusView.class", "io/rebalance/cli/RebalanceCommand.class");
        System.out.printf("rebalance.jar: %,d bytes%n", Files.size(JAR));
    }

    /**
     * The build's class data sharing archive fits the jar it was written with: {@code -Xshare:on} refuses to start
     * when the archive cannot be mapped or does not match (bin/rebalance's {@code auto} would ignore it silently, and
     * start-up would quietly double again).
     */
    @Test
    void theStartupArchiveMapsOntoTheJar() throws Exception {
        Path archive = Path.of("target/rebalance.jsa");
        assertThat(archive).exists();
        Process p = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-XX:+UseParallelGC",
                        "-XX:SharedArchiveFile=" + archive.toAbsolutePath(),
                        "-Xshare:on",
                        "-cp",
                        JAR.toAbsolutePath().toString(),
                        "io.rebalance.cli.RebalanceCommand",
                        "--help")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
        assertThat(out).contains("Usage: rebalance");
    }

    @Test
    void theProductionCommandSendsDemoToTheDemoJar() {
        for (String command : List.of("demo", "dynamodb-local")) {
            for (CliRun r : List.of(CliRun.of(command), CliRun.of(command, "--help"), CliRun.of("help", command))) {
                assertThat(r.exitCode()).as(r.err()).isEqualTo(10);
                assertThat(r.err()).contains("bin/rebalance-demo " + command).doesNotContain("Usage:");
                assertThat(r.out()).isEmpty();
            }
        }
        CliRun elsewhere = CliRun.of("verify", "demo");
        assertThat(elsewhere.err()).doesNotContain("rebalance-demo");
    }
}
