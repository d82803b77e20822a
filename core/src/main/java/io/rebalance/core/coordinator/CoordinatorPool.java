package io.rebalance.core.coordinator;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.config.Redact;
import io.rebalance.core.source.SourceSession;
import io.rebalance.protocol.lease.PostgresLeaseStore;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * The Postgres coordinator's sessions ({@code mover.coordinator: postgres}): a small pool to the database at
 * {@code coordinator.jdbcUrl} (the source's when empty), as {@code source.user}, with the session settings every
 * rebalance connection has. A copy makes a statement per state change; the pool keeps the source from starting a
 * backend for each. No connection is made until the first statement.
 */
public final class CoordinatorPool implements PostgresLeaseStore.Sessions, AutoCloseable {
    private final HikariDataSource pool;
    private final String url;

    /** @param size connections at most: a process's workers, its keeper, heartbeat and a few spare */
    public CoordinatorPool(MigrationConfig config, int size) {
        MigrationConfig.Source at = config.coordinator().at(config.source());
        this.url = at.jdbcUrl();
        HikariConfig h = new HikariConfig();
        h.setPoolName("rebalance-coordinator");
        h.setJdbcUrl(at.jdbcUrl());
        h.setUsername(at.user());
        if (!at.password().isEmpty()) h.setPassword(at.password());
        h.addDataSourceProperty("options", SourceSession.OPTIONS);
        h.addDataSourceProperty("ApplicationName", "rebalance coordinator");
        h.addDataSourceProperty("connectTimeout", "5");
        h.addDataSourceProperty("socketTimeout", "60");
        h.addDataSourceProperty("tcpKeepAlive", "true");
        h.setMaximumPoolSize(size);
        h.setMinimumIdle(1);
        h.setConnectionTimeout(10_000);
        h.setInitializationFailTimeout(-1); // connect on first use: a failure then is a statement's, retried or told
        this.pool = new HikariDataSource(h);
    }

    @Override
    public Connection open() throws SQLException {
        return pool.getConnection();
    }

    /** Where the coordinator's database is, its password masked. */
    public String where() {
        return Redact.url(url);
    }

    @Override
    public void close() {
        pool.close();
    }
}
