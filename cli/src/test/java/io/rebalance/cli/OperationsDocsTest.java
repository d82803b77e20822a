package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The alert rules a user loads and the series docs/operations.md lists agree with the meters the code registers:
 * a rule or a dashboard written from the docs finds its series.
 */
class OperationsDocsTest {
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
    private static final Pattern SERIES = Pattern.compile("rebalance_[a-z_]+[a-z]");

    @Test
    void everyAlertIsCompleteAndReadsDocumentedSeries() throws Exception {
        JsonNode rules = new ObjectMapper(new YAMLFactory())
                .readTree(ROOT.resolve("deploy/prometheus/rebalance-alerts.yml").toFile())
                .path("groups")
                .path(0)
                .path("rules");
        assertThat(rules.size()).isGreaterThan(5);
        Set<String> documented = documented();
        for (JsonNode rule : rules) {
            String name = rule.path("alert").asText();
            assertThat(name).startsWith("Rebalance");
            assertThat(rule.path("labels").path("severity").asText()).as(name).isIn("info", "warning", "critical");
            assertThat(rule.path("annotations").path("summary").asText())
                    .as(name)
                    .isNotBlank();
            assertThat(rule.path("annotations").path("description").asText())
                    .as(name)
                    .isNotBlank();
            assertThat(Files.readString(ROOT.resolve("docs/operations.md"))).contains("`" + name + "`");
            Matcher m = SERIES.matcher(rule.path("expr").asText());
            while (m.find())
                assertThat(documented).as(name + " reads " + m.group()).contains(m.group());
        }
    }

    @Test
    void everyDocumentedSeriesIsRegistered() throws Exception {
        StringBuilder sources = new StringBuilder();
        try (Stream<Path> files = Files.list(ROOT.resolve("ops/src/main/java/io/rebalance/ops/watch"))) {
            for (Path f : files.toList()) sources.append(Files.readString(f));
        }
        // the one series an application serves: its shadow reads, counted in its own registry
        sources.append(Files.readString(ROOT.resolve("client/src/main/java/io/rebalance/client/ShadowMeters.java")));
        for (String series : documented()) {
            // Micrometer names meters with dots; Prometheus writes them with underscores and counters with _total
            String meter = series.replaceFirst("_total$", "").replace('_', '.');
            assertThat(sources).as(series).contains("\"" + meter + "\"");
        }
    }

    /** The series named in the first column of docs/operations.md's table. */
    private static Set<String> documented() throws Exception {
        Set<String> out = new TreeSet<>();
        Matcher m = Pattern.compile("(?m)^\\| `(rebalance_[a-z_]+)` \\|")
                .matcher(Files.readString(ROOT.resolve("docs/operations.md")));
        while (m.find()) out.add(m.group(1));
        assertThat(out).hasSizeGreaterThanOrEqualTo(15);
        return out;
    }
}
