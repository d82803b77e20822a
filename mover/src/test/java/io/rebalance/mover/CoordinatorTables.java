package io.rebalance.mover;

import com.zaxxer.hikari.HikariDataSource;
import io.rebalance.core.coordinator.CoordinatorSchema;
import io.rebalance.protocol.lease.PostgresLeaseStore;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A test class's own coordinator schema in the shared Postgres: created before its tests, dropped after; and pooled
 * sessions to it, as the product's coordinator has ({@code CoordinatorPool}): a session opened per statement cost a
 * class that writes a thousand events half a minute.
 */
final class CoordinatorTables implements BeforeAllCallback, AfterAllCallback {
    final String name = SharedServices.unique("coord");
    final CoordinatorSchema schema = new CoordinatorSchema(name);
    private final HikariDataSource pool = pool();

    private static HikariDataSource pool() {
        HikariDataSource pool = new HikariDataSource();
        pool.setJdbcUrl(SharedServices.get().jdbcUrl);
        pool.setUsername("postgres");
        pool.setMaximumPoolSize(8);
        pool.setMinimumIdle(0);
        return pool;
    }

    /** Sessions from the class's pool. */
    PostgresLeaseStore.Sessions sessions() {
        return pool::getConnection;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        try (Connection c = SharedServices.get().postgres()) {
            schema.ensure(c);
            schema.ensure(c); // a second process finds them made
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        try (Connection c = SharedServices.get().postgres();
                Statement st = c.createStatement()) {
            st.execute("DROP SCHEMA IF EXISTS \"" + name + "\" CASCADE");
        }
        pool.close();
    }
}
