package io.rebalance.verifier;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Keys compared row by row while DynamoDB takes no writes (a rollback's window, ADR 9): a key's item is read the first
 * time the key is compared, and is final, so comparing the key again reads only its row. Waiting for Postgres to
 * catch up then costs Postgres reads alone. On key ranges the reverse stream still sets the slot attribute of items
 * applications wrote without one ({@code SlotMend}), so there a key compared again reads its item again too.
 */
public final class FrozenTarget {
    private final KeyVerifier keys;
    private final boolean slotsMended;
    private final Map<String, Map<String, AttributeValue>> items = new HashMap<>();
    private final Set<String> read = new HashSet<>();

    /**
     * @param slotsMended whether the table's slots are key ranges: an application writing DynamoDB cannot know a key's
     *     range, and the reverse stream sets the slot attribute of its items after writing their rows back, after
     *     DynamoDB closed too (the last records); an item is then read again each time its key is compared
     */
    FrozenTarget(KeyVerifier keys, boolean slotsMended) {
        this.keys = keys;
        this.slotsMended = slotsMended;
    }

    /**
     * Reads the items of the ids not read before, ahead of their rows: the items are final once DynamoDB takes no
     * writes, while the rows may still be changing (a rollback reads them while the reverse stream's last batches end).
     *
     * @param parallel DynamoDB readers
     */
    public void read(Collection<String> ids, int parallel) throws Exception {
        List<String> unread = new ArrayList<>();
        for (String id : new LinkedHashSet<>(ids)) if (!read.contains(id)) unread.add(id);
        keys.readItems(unread, parallel, items);
        read.addAll(unread);
    }

    /**
     * @param c a session from {@link Verifier#open()}
     * @param parallel DynamoDB readers for the keys not compared before
     * @return what differs, by id; a key compared again is named without its attributes (one query fewer)
     */
    public List<Difference> compare(Connection c, Collection<String> ids, int parallel) throws Exception {
        List<String> unread = new ArrayList<>();
        List<String> again = new ArrayList<>();
        for (String id : new LinkedHashSet<>(ids)) (read.contains(id) && !slotsMended ? again : unread).add(id);
        List<Difference> out = new ArrayList<>(keys.compare(c, unread, parallel, items));
        read.addAll(unread);
        if (!again.isEmpty()) out.addAll(keys.compareRows(c, again, items));
        out.sort(Comparator.comparing(Difference::id));
        return out;
    }
}
