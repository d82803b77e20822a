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
 * catch up then costs Postgres reads alone.
 */
public final class FrozenTarget {
    private final KeyVerifier keys;
    private final Map<String, Map<String, AttributeValue>> items = new HashMap<>();
    private final Set<String> read = new HashSet<>();

    FrozenTarget(KeyVerifier keys) {
        this.keys = keys;
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
        for (String id : new LinkedHashSet<>(ids)) (read.contains(id) ? again : unread).add(id);
        List<Difference> out = new ArrayList<>(keys.compare(c, unread, parallel, items));
        read.addAll(unread);
        if (!again.isEmpty()) out.addAll(keys.compareRows(c, again, items));
        out.sort(Comparator.comparing(Difference::id));
        return out;
    }
}
