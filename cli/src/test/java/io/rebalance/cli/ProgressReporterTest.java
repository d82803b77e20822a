package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.copy.CopyStatus;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProgressReporterTest {
    @Test
    void aLineShowsBarSlotsRowsRateAndEta() {
        String line = ProgressReporter.line(CopyStatus.of(Map.of(
                "slots_total", "120", "slots_finished", "30", "rows", "1234567", "rate", "12345", "eta_s", "125")));
        assertThat(line)
                .startsWith("[#######.......................]  25% slots 30/120")
                .contains("rows 1,234,567")
                .contains("12,345 rows/s")
                .endsWith("ETA 2m5s");
    }

    @Test
    void nothingBeforeTheKeeperPublishesAndNoEtaWithoutARate() {
        assertThat(ProgressReporter.line(CopyStatus.of(Map.of()))).isNull();
        assertThat(ProgressReporter.line(CopyStatus.of(Map.of("slots_total", "10", "eta_s", "-1"))))
                .doesNotContain("ETA");
        assertThat(ProgressReporter.human(3 * 3600 + 60)).isEqualTo("3h1m");
    }
}
