package io.rebalance.verifier;

import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Shadow reads ({@code Router.read} in rebalance-client) compared in the verifier's canonical encoding: a row read by
 * its key as the copy writes its item (the copy's reader and codec), and either store's item as the canonical text a
 * fingerprint hashes ({@link CanonicalItem}, docs/fingerprint.md): an attribute of another type, a missing one or one
 * no column explains all show in the text. For an application whose reads give items; one that reads its own objects
 * compares them by a form of its own.
 */
public final class CanonicalReads {
    private final SourceSession sessions;
    private final PageReader rows;
    private final RowCodec codec;
    private final CanonicalItem canonical;

    public CanonicalReads(MigrationConfig config, SourceTable table) {
        MigrationConfig.Target target = config.target();
        this.sessions = new SourceSession(config.source());
        this.rows = new PageReader(table);
        this.codec = table.codec(target);
        this.canonical = new CanonicalItem(table.columns(), table.key(), target.slotAttribute(), target.forms());
    }

    /** A Postgres session with the settings the copy's reader needs (UTC, ISO dates, hex bytea), for {@link #row}. */
    public Connection open() throws SQLException {
        return sessions.open();
    }

    /**
     * The row with this key as the copy would write its item, or null when there is none.
     *
     * @param c a session from {@link #open()}
     * @param key the key as text (a two-column key as the JSON array {@code ["a", 1]})
     */
    public Map<String, AttributeValue> row(Connection c, String key) throws SQLException {
        List<SourceRow> found = rows.byKeys(c, List.of(key));
        return found.isEmpty() ? null : codec.encode(found.get(0));
    }

    /** The item's canonical text: what a row's item holds, column by column, whichever store it was read from. */
    public String form(Map<String, AttributeValue> item) {
        return canonical.encode(item);
    }
}
