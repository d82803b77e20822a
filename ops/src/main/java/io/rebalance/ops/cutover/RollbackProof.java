package io.rebalance.ops.cutover;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.slot.TableKey;
import io.rebalance.core.source.PartRows;
import io.rebalance.core.source.SourceTable;
import io.rebalance.cutover.DrainProof;
import io.rebalance.ops.Connections;
import io.rebalance.verifier.Difference;
import io.rebalance.verifier.FrozenTarget;
import io.rebalance.verifier.Verifier;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

/**
 * The rollback's proof that Postgres holds what applications wrote to DynamoDB (ADR 9): the verifier compares the
 * logged keys row by row, each row's canonical hash against its item's; a key compared again reads only its row, as
 * DynamoDB takes no writes in the window. When the log is incomplete and {@code
 * --verify-all} allows it, every key either store holds is compared instead: Postgres' keys in key order, then
 * DynamoDB's by a scan, a page at a time.
 */
public final class RollbackProof implements DrainProof, AutoCloseable {
    private static final int PAGE = 10_000;

    private final int page;

    private final MigrationConfig config;
    private final Connections c;
    private final SourceTable table;
    private final boolean everyKey;
    private final PartRows part;
    private final Verifier verifier;
    private final FrozenTarget logged;
    private final Connection pg;
    /** Runs each comparison, so it can be given up at the budget; one for the proof's life (a drain polls often). */
    private final ExecutorService runner = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "rollback-proof");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param everyKey whether an incomplete log may be made up for by comparing every key ({@code --verify-all})
     * @param part the rows rolled back: one part's, or every row
     */
    public RollbackProof(MigrationConfig config, Connections c, SourceTable table, boolean everyKey, PartRows part)
            throws Exception {
        this(config, c, table, everyKey, part, PAGE);
    }

    /** @param page the keys read and compared at a time (tests walk several pages over a few rows) */
    RollbackProof(MigrationConfig config, Connections c, SourceTable table, boolean everyKey, PartRows part, int page)
            throws Exception {
        this.page = page;
        this.part = part;
        this.config = config;
        this.c = c;
        this.table = table;
        this.everyKey = everyKey;
        // made before the window: it asks the source which row hash to use (RowHash), a round trip the window spares
        this.verifier = new Verifier(config, table, c.dynamo(), lsn -> {});
        this.logged = verifier.frozenTarget();
        this.pg = verifier.open(); // before the window too: a new Postgres session takes tens of milliseconds
    }

    @Override
    public boolean comparesEveryKey() {
        return everyKey;
    }

    /** On the comparisons' one thread: the first comparison after it waits for it, within its own budget. */
    @Override
    public void readItems(Collection<String> keys) {
        List<String> copy = List.copyOf(keys);
        runner.submit(() -> {
            logged.read(copy, parallel());
            return null;
        });
    }

    @Override
    public Collection<String> differing(Optional<Collection<String>> keys, Duration budget) throws Exception {
        Future<Collection<String>> f = runner.submit(
                () -> keys.isPresent() ? differences(logged.compare(pg, keys.get(), parallel())) : compareEveryKey());
        try {
            return f.get(budget.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new TimeoutException(
                    (keys.map(k -> k.size() + " keys").orElse("every key")) + " in " + budget.toMillis() + " ms");
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception x ? x : e;
        }
    }

    private int parallel() {
        return config.verify().parallel();
    }

    private static Collection<String> differences(List<Difference> found) {
        List<String> out = new ArrayList<>();
        for (Difference d : found) out.add(d.id());
        return out;
    }

    /** One page of every key, read from both stores; nothing is kept: every key is more than a window should hold. */
    private Collection<String> compare(Collection<String> keys) throws Exception {
        return differences(verifier.compareKeys(pg, keys, parallel()));
    }

    private Collection<String> compareEveryKey() throws Exception {
        Set<String> out = new LinkedHashSet<>();
        TableKey key = table.key();
        // qualified: ORDER BY a bare name would sort by the text output column of that name ("10" < "9") while the
        // next page starts after the last key in the column's own order, skipping keys
        String select =
                "SELECT " + key.selectText("src.") + " FROM " + table.name() + " AS src WHERE true" + part.andSql();
        String order = " ORDER BY " + key.pageOrder("src.") + " LIMIT " + page;
        String first = select + order;
        String next = select + " AND " + key.pageAfter("src.") + order;
        String last = null;
        while (true) {
            List<String> keys = new ArrayList<>(page);
            try (PreparedStatement ps = pg.prepareStatement(last == null ? first : next)) {
                if (last != null) key.bindPage(ps, 1, last);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) keys.add(rs.getString(1));
                }
            }
            out.addAll(compare(keys));
            if (keys.size() < page) break;
            last = keys.get(keys.size() - 1);
        }
        Map<String, String> names = new HashMap<>();
        for (int i = 0; i < key.attributes().size(); i++)
            names.put("#k" + i, key.attributes().get(i));
        String projection = String.join(", ", new TreeSet<>(names.keySet()));
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            ScanResponse r = c.dynamo().scan(b -> b.tableName(config.target().table())
                    .projectionExpression(projection)
                    .expressionAttributeNames(names)
                    .consistentRead(true)
                    .exclusiveStartKey(from)
                    .limit(page));
            List<String> keys = new ArrayList<>(r.count());
            for (Map<String, AttributeValue> item : r.items()) keys.add(key.textOf(item));
            out.addAll(compare(part.only(keys)));
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null);
        return out;
    }

    @Override
    public void close() throws Exception {
        runner.shutdownNow();
        pg.close();
    }
}
