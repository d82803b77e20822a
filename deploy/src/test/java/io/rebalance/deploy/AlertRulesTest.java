package io.rebalance.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The alert rules as Prometheus reads them: {@code promtool check rules} parses every expression, and {@code promtool
 * test rules} runs deploy/prometheus/rebalance-alerts.test.yml, where an alert fires on its series and stays quiet
 * where its condition does not hold (a shadow-read mismatch while the route is TARGET, not while it is SOURCE).
 */
class AlertRulesTest {
    private static final Path RULES = Path.of(System.getProperty("user.dir")).resolve("prometheus");

    @Test
    void everyRuleParses() throws Exception {
        assertThat(promtool("check", "rules", "rebalance-alerts.yml")).contains("SUCCESS");
    }

    @Test
    void theAlertsFireOnTheirSeriesAndOnlyThere() throws Exception {
        assertThat(promtool("test", "rules", "rebalance-alerts.test.yml")).contains("SUCCESS");
    }

    /** Runs promtool in deploy/prometheus; fails with its output unless it exits 0. */
    private static String promtool(String... args) throws IOException, InterruptedException {
        String[] cmd = new String[args.length + 1];
        cmd[0] = "promtool";
        System.arraycopy(args, 0, cmd, 1, args.length);
        Process p;
        try {
            p = new ProcessBuilder(cmd)
                    .directory(RULES.toFile())
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "promtool (Prometheus' rule checker) checks the alert rules and is not on the PATH: run"
                            + " scripts/promtool.sh, as scripts/test.sh does",
                    e);
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
        return out;
    }
}
