package io.rebalance.cdc;

import io.rebalance.core.slot.TableKey;
import io.rebalance.protocol.keyspace.HandoffKeys;
import io.rebalance.protocol.part.PartMap;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The scopes the forward tail holds by (ADR 20): the table's own, or one per part, each with its handoff keys (hold,
 * key log, writes that bypassed the fence), and which of them a changed key's row is in. A part's cutover holds the
 * tail for that part's keys only; every other part's changes keep flowing.
 */
public final class TailScopes {
    private final List<String> names;
    private final List<HandoffKeys> keys;
    private final PartMap parts;
    private final TableKey key;
    private final Map<String, Integer> index = new HashMap<>();

    /**
     * @param base the table's scope ({@code cutover.scope}, or the target table)
     * @param handoff the table's handoff keys
     */
    TailScopes(String base, HandoffKeys handoff, PartMap parts, TableKey key) {
        this.parts = parts;
        this.key = key;
        this.names = parts.scopes(base);
        this.keys = parts.parted() ? parts.names().stream().map(handoff::part).toList() : List.of(handoff);
        for (int i = 0; i < parts.names().size(); i++) index.put(parts.names().get(i), i);
    }

    public int size() {
        return names.size();
    }

    /** The scopes' names, as the fence rows and the cutover name them. */
    public List<String> names() {
        return names;
    }

    public HandoffKeys keys(int scope) {
        return keys.get(scope);
    }

    public List<HandoffKeys> keys() {
        return keys;
    }

    /** The scope of a changed key (its text, as the tail writes it), by its partition-key value's part. */
    public int of(String keyText) {
        if (!parts.parted()) return 0;
        return index.get(parts.partOf(key.parts(keyText).get(0)).name());
    }

    /** {@code keys} by scope: one list per scope, in the keys' order, empty where none falls. */
    public List<List<String>> split(Collection<String> keys) {
        List<List<String>> out = new ArrayList<>(size());
        for (int i = 0; i < size(); i++) out.add(new ArrayList<>());
        if (size() == 1) out.get(0).addAll(keys);
        else for (String k : keys) out.get(of(k)).add(k);
        return out;
    }
}
