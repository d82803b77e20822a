package io.rebalance.core.dynamo;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.slot.Slot;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;

/**
 * The slot index of the target table: its name, the attribute that holds each item's slot, and into how many
 * shards one slot's index entries are spread. With one shard the value is the slot ({@code 20241020.02}). With
 * more, it is the slot and a shard computed from the item's key ({@code 20241020.02#5}), so that one hour's writes
 * land on several index partitions instead of one (on AWS, one index partition takes about 1,000 writes/s; the
 * live hour of a hot table can take more). Reading a slot then takes one Query per shard.
 */
public record SlotIndex(String name, String attribute, int shards) {

    public SlotIndex(String name, String attribute) {
        this(name, attribute, 1);
    }

    public static SlotIndex of(MigrationConfig.Target target) {
        return new SlotIndex(target.slotIndex(), target.slotAttribute(), target.slotShards());
    }

    /**
     * The attribute value of the item with key {@code keyText} (its text form: ULID, uuid or bigint digits) in
     * {@code slot}. The shard is CRC32 of the key's UTF-8 bytes mod shards: stable across processes and versions.
     */
    public String value(Slot slot, String keyText) {
        if (shards == 1) return slot.name();
        CRC32 crc = new CRC32();
        crc.update(keyText.getBytes(StandardCharsets.UTF_8));
        return slot.name() + "#" + (crc.getValue() % shards);
    }

    /** Every value the items of {@code slot} can have: one Query each reads the whole slot. */
    public List<String> values(Slot slot) {
        if (shards == 1) return List.of(slot.name());
        List<String> out = new ArrayList<>(shards);
        for (int i = 0; i < shards; i++) out.add(slot.name() + "#" + i);
        return out;
    }

    /** The slot named by an attribute value, shard left off; null for null. */
    public static String slotName(String value) {
        if (value == null) return null;
        int hash = value.indexOf('#');
        return hash < 0 ? value : value.substring(0, hash);
    }
}
