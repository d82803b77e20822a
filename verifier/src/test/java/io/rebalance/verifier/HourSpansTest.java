package io.rebalance.verifier;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.slot.Slot;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HourSpansTest {
    private static final Slot T = Slot.containing(Instant.parse("2024-03-01T00:00:00Z"));

    private static List<Slot> newestFirst(int hours) {
        List<Slot> out = new ArrayList<>();
        for (Slot s = T; out.size() < hours; s = s.older()) out.add(s);
        return out;
    }

    @Test
    void spansAreAsManyAsThreadsAndAtMostAWeek() {
        assertThat(HourSpans.split(newestFirst(240), 4, 1_000))
                .extracting(List::size)
                .containsExactly(60, 60, 60, 60);
        assertThat(HourSpans.split(newestFirst(1000), 2, 1_000))
                .extracting(List::size)
                .contains(168);
        assertThat(HourSpans.split(newestFirst(3), 8, 1_000))
                .extracting(List::size)
                .containsExactly(1, 1, 1);
    }

    @Test
    void aSpanHoldsAboutAMillionRowsByTheTablesAverage() {
        // 240 hours, 100,000,000 rows: 416,666 an hour on average, so two hours a span
        assertThat(HourSpans.split(newestFirst(240), 4, 100_000_000L)).hasSize(120);
        assertThat(HourSpans.split(newestFirst(240), 4, 10_000_000_000L)).hasSize(240);
    }

    @Test
    void onlyAdjacentHoursShareASpanInTheOrderGiven() {
        List<Slot> slots = new ArrayList<>(newestFirst(4));
        slots.add(T.older().older().older().older().older().older()); // a gap of one hour
        slots.add(Slot.NO_TIME);
        slots.add(T.newer());
        List<List<Slot>> spans = HourSpans.split(slots, 1, 10);
        assertThat(spans).extracting(List::size).containsExactly(4, 1, 1, 1);
        assertThat(HourSpans.oldest(spans.get(0))).isEqualTo(T.older().older().older());
        assertThat(HourSpans.newest(spans.get(0))).isEqualTo(T);
        List<Slot> oldestFirst = new ArrayList<>(newestFirst(5));
        java.util.Collections.reverse(oldestFirst);
        oldestFirst.add(T); // again: not the hour after the last
        assertThat(HourSpans.split(oldestFirst, 1, 10)).extracting(List::size).containsExactly(5, 1);
    }
}
