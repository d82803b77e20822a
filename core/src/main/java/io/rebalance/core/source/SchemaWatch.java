package io.rebalance.core.source;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.sql.Connection;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the catalog whether the copied columns are still those a part works with (the run's plan for the copy, what
 * the tail started with): rows read after an ALTER TABLE would be written in another shape. One connection, kept. A
 * configured column that is gone, or the table itself, counts as a change too.
 */
public final class SchemaWatch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SchemaWatch.class);

    private final SourceSession session;
    private final MigrationConfig config;
    private final List<String> started;
    private Connection catalog;

    public SchemaWatch(SourceSession session, MigrationConfig config, List<String> started) {
        this.session = session;
        this.config = config;
        this.started = started;
    }

    /** @return what changed, or empty (also when the catalog could not be read now: the next call asks again) */
    public Optional<String> changed() {
        try {
            if (catalog == null || catalog.isClosed()) catalog = session.openForPreflight();
            return SchemaChange.between(started, SourceTable.schemaOf(catalog, config));
        } catch (RebalanceException e) {
            // a column, the table, the key's index or a named column's type gone: the codec started with differs
            if (e.code() != ErrorCode.SOURCE_UNREACHABLE) return Optional.of(e.getMessage());
            close();
            log.debug("reading the table's columns failed; next time again: {}", e.toString());
        } catch (Exception e) {
            close();
            log.debug("reading the table's columns failed; next time again: {}", e.toString());
        }
        return Optional.empty();
    }

    @Override
    public void close() {
        try {
            if (catalog != null) catalog.close();
        } catch (Exception ignored) {
            // dropped either way
        }
        catalog = null;
    }
}
