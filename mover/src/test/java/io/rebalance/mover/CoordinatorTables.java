package io.rebalance.mover;

import io.rebalance.core.coordinator.CoordinatorSchema;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/** A test class's own coordinator schema in the shared Postgres: created before its tests, dropped after. */
final class CoordinatorTables implements BeforeAllCallback, AfterAllCallback {
    final String name = SharedServices.unique("coord");
    final CoordinatorSchema schema = new CoordinatorSchema(name);

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
    }
}
