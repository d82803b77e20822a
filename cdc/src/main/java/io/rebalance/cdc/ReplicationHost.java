package io.rebalance.cdc;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.config.Redact;
import io.rebalance.core.source.SourceSession;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.postgresql.Driver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where Debezium's connections go, from {@code source.jdbcUrl}. Debezium takes one host and port, so with several
 * hosts in the URL (a primary and its standbys, as on a failover pair) it gets the first that is a primary: logical
 * replication runs only there. Every other URL setting ({@code sslmode}, {@code sslrootcert}, {@code connectTimeout},
 * ...) reaches the driver under both of Debezium's connections, the replication one included.
 */
record ReplicationHost(
        String host, String port, String database, String user, String password, Properties driverSettings) {
    private static final Logger log = LoggerFactory.getLogger(ReplicationHost.class);

    /** Debezium's own fields: the rest of the URL is the driver's. */
    private static final Set<String> OWN = Set.of("PGHOST", "PGPORT", "PGDBNAME", "user", "password");

    static ReplicationHost of(MigrationConfig.Source source) {
        Properties url = Driver.parseURL(source.jdbcUrl(), new Properties());
        if (url == null) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "source.jdbcUrl '" + Redact.url(source.jdbcUrl()) + "' is not a Postgres JDBC URL; write it like"
                            + " jdbc:postgresql://host:5432/database");
        }
        Properties driver = new Properties();
        for (String name : url.stringPropertyNames()) {
            if (!OWN.contains(name)) driver.setProperty(name, url.getProperty(name));
        }
        String[] hosts = url.getProperty("PGHOST", "localhost").split(",");
        String[] ports = url.getProperty("PGPORT", "5432").split(",");
        String database = url.getProperty("PGDBNAME");
        // a user or password in the URL wins over source.user and source.password, as it does in pgjdbc
        String user = url.getProperty("user", source.user());
        String password = url.getProperty("password", source.password());
        if (hosts.length == 1) return new ReplicationHost(hosts[0], ports[0], database, user, password, driver);
        List<String> tried = new ArrayList<>();
        for (int i = 0; i < hosts.length; i++) {
            String port = i < ports.length ? ports[i] : "5432";
            String why = primary(source, database, hosts[i], port);
            if (why == null) return new ReplicationHost(hosts[i], port, database, user, password, driver);
            tried.add(hosts[i] + ":" + port + " " + why);
        }
        // None is a reachable primary now (a failover under way, say): the first host, whose connection fails like a
        // single host's would, and the stream's restart looks again in 2 s
        log.warn(
                "no host of source.jdbcUrl is a reachable primary, which logical replication needs ({})",
                String.join("; ", tried));
        return new ReplicationHost(hosts[0], ports[0], database, user, password, driver);
    }

    /** @return null when the host is a primary, else why not */
    private static String primary(MigrationConfig.Source source, String database, String host, String port) {
        String url = source.jdbcUrl();
        int query = url.indexOf('?');
        String single =
                "jdbc:postgresql://" + host + ":" + port + "/" + database + (query < 0 ? "" : url.substring(query));
        var one = source.at(single);
        try (Connection c = new SourceSession(one).open();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
            rs.next();
            return rs.getBoolean(1) ? "is a standby" : null;
        } catch (SQLException e) {
            return "unreachable (" + e.getMessage().lines().findFirst().orElse("") + ")";
        }
    }

    @Override
    public String toString() { // never the password
        return host + ":" + port + "/" + database;
    }
}
