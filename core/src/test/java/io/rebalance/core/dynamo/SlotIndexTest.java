package io.rebalance.core.dynamo;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.slot.Slot;
import org.junit.jupiter.api.Test;

class SlotIndexTest {
    private final Slot slot = Slot.parse("20241020.02");

    @Test
    void oneShardIsTheSlotItself() {
        SlotIndex index = new SlotIndex("by_slot", "_slot", 1);
        assertThat(index.value(slot, "01JAKXW2W70010000000000FEY")).isEqualTo("20241020.02");
        assertThat(index.values(slot)).containsExactly("20241020.02");
    }

    @Test
    void shardsComeFromTheKeysCrc32() {
        SlotIndex index = new SlotIndex("by_slot", "_slot", 8);
        // CRC32("123456789") = 0xCBF43926 = 3421780262, the standard check value; mod 8 = 6
        assertThat(index.value(slot, "123456789")).isEqualTo("20241020.02#6");
        assertThat(index.values(slot)).hasSize(8).contains("20241020.02#0", "20241020.02#6", "20241020.02#7");
        assertThat(index.values(slot)).contains(index.value(slot, "01JAKXW2W70010000000000FEY"));
        assertThat(SlotIndex.slotName("20241020.02#6")).isEqualTo("20241020.02");
        assertThat(SlotIndex.slotName("20241020.02")).isEqualTo("20241020.02");
    }
}
