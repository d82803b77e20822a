package io.rebalance.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/capacity.md's Redis figure is the benchmark's: its commands per 1,000 rows within 20% of what bench/README.md
 * records for one copy process coordinated by Redis (bench/costs.sh), and every measurement it names is one the
 * benchmarks print.
 */
class CapacityDocsTest {
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();

    @Test
    void theRedisFigureIsWithinAFifthOfTheMeasuredOne() throws Exception {
        String capacity = Files.readString(ROOT.resolve("docs/capacity.md"));
        String bench = Files.readString(ROOT.resolve("bench/README.md"));
        double modelled =
                number(capacity, "\\*\\*(\\d+(?:\\.\\d+)?) per 1,000 rows \\+ \\d+ a second per copy process");
        double measured =
                number(bench, "\\| redis, 1 process \\|[^|]*\\|[^|]*\\|[^|]*\\| \\*\\*(\\d+(?:\\.\\d+)?)\\*\\* \\|");
        assertThat(modelled / measured).as(modelled + " against " + measured).isBetween(0.8, 1.2);
        assertThat(capacity)
                .contains("bench/costs.sh")
                .contains("bench/copy.sh")
                .contains("bench/verify-all.sh");
    }

    private static double number(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        assertThat(m.find()).as(regex).isTrue();
        return Double.parseDouble(m.group(1));
    }
}
