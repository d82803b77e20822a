package io.rebalance.core.slot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RangeOutliersTest {
    private static final Instant NOW = Instant.parse("2026-11-25T12:00:00Z");

    /** {@code n} rows from {@code first}, {@code step} apart, oldest first. */
    private static List<RangeOutliers.Row> rows(Instant first, Duration step, int n) {
        List<RangeOutliers.Row> out = new ArrayList<>();
        for (int i = 0; i < n; i++) out.add(new RangeOutliers.Row("k" + i, first.plus(step.multipliedBy(i))));
        return out;
    }

    private static List<RangeOutliers.Row> reversed(List<RangeOutliers.Row> rows) {
        List<RangeOutliers.Row> out = new ArrayList<>(rows);
        java.util.Collections.reverse(out);
        return out;
    }

    @Test
    void sparseButEvenDataIsNoOutlier() {
        // 412 invoices over five years: four or five days apart, no gap near half the range
        var all = rows(Instant.parse("2021-01-01T00:00:00Z"), Duration.ofHours(106), 412);
        assertThat(RangeOutliers.warnings(all.subList(0, 6), reversed(all).subList(0, 6), NOW))
                .isEmpty();
    }

    @Test
    void oneCurrentRowNextToOldDataIsNamedWithTheSlotsItAdds() {
        var bulk = rows(Instant.parse("2024-10-20T00:00:00Z"), Duration.ofMinutes(1), 100);
        List<RangeOutliers.Row> newest = new ArrayList<>();
        newest.add(new RangeOutliers.Row("stray", NOW.minusSeconds(60)));
        newest.addAll(reversed(bulk).subList(0, 5));
        List<String> w = RangeOutliers.warnings(bulk.subList(0, 6), newest, NOW);
        assertThat(w).hasSize(1);
        assertThat(w.get(0))
                .contains("the newest row (key stray at 2026-11-25T11:59:00Z)")
                .contains("766 days after the rest of the table (key k99 at 2024-10-20T01:39:00Z)")
                .contains("about 18,394 hourly slots")
                .contains("slots.to");
    }

    @Test
    void twoStraysAtTheOldEndAreBothNamed() {
        var bulk = rows(Instant.parse("2024-10-20T00:00:00Z"), Duration.ofMinutes(1), 100);
        List<RangeOutliers.Row> oldest = new ArrayList<>();
        oldest.add(new RangeOutliers.Row("a", Instant.parse("2020-01-01T00:00:00Z")));
        oldest.add(new RangeOutliers.Row("b", Instant.parse("2020-01-02T00:00:00Z")));
        oldest.addAll(bulk.subList(0, 4));
        List<String> w = RangeOutliers.warnings(oldest, reversed(bulk).subList(0, 6), NOW);
        assertThat(w).hasSize(1);
        assertThat(w.get(0))
                .contains("the 2 oldest rows (key a at 2020-01-01T00:00:00Z, key b")
                .contains("slots.from");
    }

    @Test
    void timesBefore1990OrInTheFutureBlameTheEpoch() {
        var old = rows(Instant.parse("1975-03-01T00:00:00Z"), Duration.ofMinutes(1), 6);
        List<String> w = RangeOutliers.warnings(old, reversed(old), NOW);
        assertThat(w).hasSize(1);
        assertThat(w.get(0))
                .startsWith("at least 6 rows (key k0 at 1975-03-01")
                .contains("slots.snowflake.epochMillis");
        var future = rows(NOW.plus(Duration.ofDays(400)), Duration.ofMinutes(1), 6);
        assertThat(RangeOutliers.warnings(future, reversed(future), NOW))
                .singleElement()
                .asString()
                .contains("a time in the future");
        assertThat(RangeOutliers.implausible(NOW.plus(Duration.ofHours(23)), NOW))
                .isFalse();
        assertThat(RangeOutliers.implausible(Instant.parse("1989-12-31T23:59:59Z"), NOW))
                .isTrue();
    }
}
