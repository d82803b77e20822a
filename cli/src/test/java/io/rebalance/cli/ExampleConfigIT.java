package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The example configuration docs/guide.md works from is valid as it stands: `rebalance config` accepts it. */
class ExampleConfigIT {
    @Test
    void theGuidesExampleConfigurationIsValid() {
        Path example = Path.of(System.getProperty("user.dir"))
                .resolveSibling("examples")
                .resolve("migration.yaml");
        assertThat(example).exists();
        CliRun r = CliRun.of("config", "-c", example.toString());
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out())
                .contains("table: \"public.room_events\"")
                .contains("prefix: \"room_events:\"")
                .contains("applicationRoles:")
                .contains("- \"chat_app\"");
        assertThat(r.err()).as("no warning").isEmpty();
    }

    @Test
    void theGuideUsesTheExampleItNames() throws Exception {
        String guide = Files.readString(
                Path.of(System.getProperty("user.dir")).resolveSibling("docs").resolve("guide.md"));
        assertThat(guide).contains("examples/migration.yaml");
        for (String line :
                guide.lines().filter(l -> l.startsWith("bin/rebalance ")).toList()) {
            assertThat(line).as("every command of the guide reads the example").contains("-c examples/migration.yaml");
        }
    }
}
