package io.rebalance.cdc;

import java.util.Properties;
import org.postgresql.plugin.AuthenticationPlugin;
import org.postgresql.plugin.AuthenticationRequestType;

/**
 * Gives pgjdbc the Postgres password of Debezium's connections from {@link EngineSecrets}, so the password is never
 * among the engine's properties. pgjdbc creates it by name ({@code authenticationPluginClassName}) with the
 * connection's properties, which carry the handle.
 */
public final class EnginePassword implements AuthenticationPlugin {
    /** The connection property that holds the handle (pgjdbc ignores properties it does not know). */
    static final String HANDLE = "rebalancePasswordHandle";

    private final String handle;

    public EnginePassword(Properties info) {
        this.handle = info.getProperty(HANDLE);
    }

    @Override
    public char[] getPassword(AuthenticationRequestType type) {
        return EngineSecrets.get(handle).toCharArray();
    }
}
