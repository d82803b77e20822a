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
