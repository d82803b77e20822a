package io.rebalance.core.slot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.core.config.MigrationConfig;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SlotTest {
    @Test
    void namesRoundTripAndRangesRunNewestToOldest() {
        Slot s = Slot.parse("20241020.02");
        assertThat(s.start()).isEqualTo(Instant.parse("2024-10-20T02:00:00Z"));
        assertThat(s.name()).isEqualTo("20241020.02");
        assertThat(s.older().name()).isEqualTo("20241020.01");
        List<String> names = new ArrayList<>();
        new SlotRange(Slot.parse("20241020.01"), Slot.parse("20241019.23")).forEach(x -> names.add(x.name()));
        assertThat(names).containsExactly("20241020.01", "20241020.00", "20241019.23");
        assertThatThrownBy(() -> Slot.parse("2024-10-20")).hasMessageContaining("like 20241020.02");
    }

    /**
     * A slot name is a real hour: {@code 20241020.24} was read as the next day's midnight (the formatter's lenient
     * end-of-day), so {@code verify --slot 20241020.24} verified {@code 20241021.00} and exited 0.
     */
    @Test
    void anHourOrDayThatDoesNotExistIsNoSlot() {
        for (String bad : List.of("20241020.24", "20241032.01", "20240230.00", "20231329.05")) {
            assertThatThrownBy(() -> Slot.parse(bad)).as(bad).hasMessageContaining("'" + bad + "' is not a slot");
        }
        assertThat(Slot.parse("20240229.23").name()).isEqualTo("20240229.23"); // a leap day is
    }

    /**
     * Key ranges ({@code slots.timeFrom: none}) are named by their place in the plan, six digits, so their names sort
     * as they do; they parse where hours do ({@code verify --slot r000042}) and run from the last range to the first.
     */
    @Test
    void keyRangesAreNamedByTheirPlaceAndSortAsTheyDo() {
        Slot r = Slot.parse("r000042");
        assertThat(r).isEqualTo(Slot.range(42));
        assertThat(r.keyRange()).isTrue();
        assertThat(r.name()).isEqualTo("r000042");
        assertThat(r.older().name()).isEqualTo("r000041");
        assertThat(Slot.range(9).name().compareTo(Slot.range(10).name())).isNegative();
        assertThat(Slot.range(9).isOlderThan(Slot.range(10))).isTrue();
        List<String> names = new ArrayList<>();
        new SlotRange(Slot.range(2), Slot.range(0)).forEach(x -> names.add(x.name()));
        assertThat(names).containsExactly("r000002", "r000001", "r000000");
        assertThat(new SlotRange(Slot.range(2), Slot.range(0)).count()).isEqualTo(3);
        assertThatThrownBy(r::start).hasMessageContaining("is no hour");
        for (String bad : List.of("r42", "r0000042", "R000042", "r-00042")) {
            assertThatThrownBy(() -> Slot.parse(bad)).as(bad).hasMessageContaining("r000042 (a key range)");
        }
        assertThatThrownBy(() -> Slot.range(Slot.MAX_RANGES)).hasMessageContaining("outside");
    }

    /** The predicate of each range: the first and the last open-ended, a composite key compared as a whole. */
    @Test
    void keyRangePredicatesLeaveNoKeyOut() {
        TableKey single = TableKey.single("id", KeyType.UUID, "id");
        KeyRanges three = new KeyRanges(
                single, List.of("40000000-0000-0000-0000-000000000000", "80000000-0000-0000-0000-000000000000"), 1_000);
        assertThat(three.predicate(Slot.range(0))).isEqualTo("\"id\" < ?");
        assertThat(three.predicate(Slot.range(1))).isEqualTo("\"id\" >= ? AND \"id\" < ?");
        assertThat(three.predicate(Slot.range(2))).isEqualTo("\"id\" >= ?");
        assertThat(three.bounds(Slot.range(0))).hasSize(1);
        assertThat(three.bounds(Slot.range(1))).hasSize(2);
        assertThat(three.bounds(Slot.range(2)))
                .containsExactly(java.util.UUID.fromString("80000000-0000-0000-0000-000000000000"));
        assertThat(new KeyRanges(single, List.of(), 1_000).predicate(Slot.range(0)))
                .isEqualTo("true");
        assertThatThrownBy(() -> three.bounds(Slot.range(3))).hasMessageContaining("r000000..r000002");
        assertThatThrownBy(() -> three.bounds(Slot.parse("20241020.02"))).hasMessageContaining("not one of");

        TableKey pair = new TableKey(List.of("tenant", "id"), List.of(KeyType.BIGINT, KeyType.TEXT), List.of("t", "i"));
        KeyRanges two = new KeyRanges(pair, List.of(pair.text(List.of("7", "m"))), 1_000);
        assertThat(two.predicate(Slot.range(1))).isEqualTo("(\"tenant\", \"id\") >= (?, ?)");
        assertThat(two.bounds(Slot.range(1))).containsExactly(7L, "m");
    }

    /** The rows with no hour have a slot of their own: named notime, older than every hour, copied last. */
    @Test
    void theNoTimeSlotSortsOlderThanEveryHourAndEndsTheRange() {
        assertThat(Slot.parse("notime")).isSameAs(Slot.NO_TIME);
        assertThat(Slot.NO_TIME.name()).isEqualTo("notime");
        assertThat(Slot.NO_TIME.isOlderThan(Slot.parse("00010101.00"))).isTrue();
        assertThatThrownBy(Slot.NO_TIME::older).hasMessageContaining("no neighbours");
        SlotRange range = new SlotRange(Slot.parse("20241020.01"), Slot.parse("20241019.23"), true);
        List<String> names = new ArrayList<>();
        range.forEach(x -> names.add(x.name()));
        assertThat(names).containsExactly("20241020.01", "20241020.00", "20241019.23", "notime");
        assertThat(range.count()).isEqualTo(4);
        assertThat(range.last()).isEqualTo(Slot.NO_TIME);
        assertThat(range.after(Slot.parse("20241019.23"))).isEqualTo(Slot.NO_TIME);
        assertThat(range.after(Slot.NO_TIME)).isNull();
        assertThat(range.through(Slot.NO_TIME)).isEqualTo(4);
        assertThat(range.through(Slot.parse("20241020.00"))).isEqualTo(2);
        assertThat(range.contains(Slot.NO_TIME)).isTrue();
        assertThat(new SlotRange(range.newest(), range.oldest()).contains(Slot.NO_TIME))
                .isFalse();
        assertThatThrownBy(() -> new SlotRange(Slot.NO_TIME, range.oldest())).hasMessageContaining("ends no range");
        var ks = new SlotKeyspace.TimeColumn("\"created_at\"");
        assertThat(ks.predicate(Slot.NO_TIME)).contains("IS NULL").contains("'infinity'");
        assertThat(ks.bounds(Slot.NO_TIME)).isEmpty();
        assertThat(new SlotKeyspace.UlidTexts("\"id\"").predicate(Slot.NO_TIME)).isEqualTo("false");
    }

    @Test
    void ulidBoundsOrderAsTextAndCarryTheMillisecond() {
        long ms = Instant.parse("2024-10-20T02:00:00Z").toEpochMilli();
        String lo = Ulid.lowest(ms);
        assertThat(Ulid.millis(lo)).isEqualTo(ms);
        String inside = Ulid.of(ms + 1234, -1L, -1L);
        assertThat(Ulid.millis(inside)).isEqualTo(ms + 1234);
        assertThat(lo.compareTo(inside)).isNegative();
        assertThat(inside.compareTo(Ulid.lowest(ms + 3_600_000))).isNegative();
        assertThat(Ulid.millis(inside.toLowerCase())).isEqualTo(ms + 1234);
    }

    @Test
    void snowflakeBoundsFollowTheBitLayout() {
        var layout = new MigrationConfig.Snowflake(1433806952013L, 41, 13, 10);
        var ks = new SlotKeyspace.SnowflakeIds("\"id\"", layout);
        Slot slot = Slot.parse("20241020.02");
        long lo = (long) ks.bounds(slot)[0];
        long hi = (long) ks.bounds(slot)[1];
        long idInside = ((slot.start().toEpochMilli() + 5 - layout.epochMillis()) << 23) | (17L << 10) | 1023;
        assertThat(idInside).isBetween(lo, hi - 1);
        assertThat(ks.instantOf(Long.toString(idInside))).isEqualTo(slot.start().plusMillis(5));
    }
}
