package io.rebalance.core.source;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.config.Redact;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.Optional;
import java.util.Properties;

/**
 * Opens Postgres connections whose text forms are the same everywhere: TimeZone UTC, ISO dates, hex bytea,
 * ISO-8601 intervals. The codec and the verifier's fingerprints read values as text, so these settings are part
 * of the data format, not a preference; the fingerprints' regular expressions hold backslashes, read literally only
 * with standard_conforming_strings on. Parallel plans are off: range readers are planned as parallel seq scans
 * plus a sort otherwise, which is slower for keyset pages (STACK.md).
 */
public final class SourceSession {
    /** Sent at connection start, so no extra round trip and no way for a pooled session to drift. */
    public static final String OPTIONS =
            "-c TimeZone=UTC -c DateStyle=ISO,YMD -c IntervalStyle=iso_8601 -c bytea_output=hex"
                    + " -c extra_float_digits=3 -c max_parallel_workers_per_gather=0 -c standard_conforming_strings=on";

    private final MigrationConfig.Source source;

    public SourceSession(MigrationConfig.Source source) {
        this.source = source;
    }

    /**
     * @throws SQLException when a connection cannot be made (retriable by the caller)
     */
    public Connection open() throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", source.user());
        if (!source.password().isEmpty()) p.setProperty("password", source.password());
        p.setProperty("options", OPTIONS);
        p.setProperty("ApplicationName", "rebalance");
        p.setProperty("connectTimeout", "5");
        p.setProperty("socketTimeout", "120");
        p.setProperty("tcpKeepAlive", "true");
        return DriverManager.getConnection(source.jdbcUrl(), p);
    }

    /** Like {@link #open()}, for a preflight: a failure becomes a message a person can act on. */
    public Connection openForPreflight() {
        try {
            return open();
        } catch (SQLException e) {
            String why = "28P01".equals(e.getSQLState()) || "28000".equals(e.getSQLState())
                    ? "authentication failed for user '" + source.user() + "'; check source.user and source.password"
                            + " (REBALANCE_SOURCE_PASSWORD)"
                    : "connection failed (" + firstLine(e.getMessage()) + "); start Postgres or fix source.jdbcUrl"
                            + " (REBALANCE_SOURCE_JDBC_URL)";
            throw new RebalanceException(
                    ErrorCode.SOURCE_UNREACHABLE, "Postgres at " + Redact.url(source.jdbcUrl()) + ": " + why, e);
        }
    }

    /**
     * The message of a lost or refused Postgres connection in {@code failure}'s causes (SQLSTATE class 08, a backend
     * terminated or the server shutting down, or no session from a pool in time), if there is one.
     */
    public static Optional<String> connectionLost(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLTransientConnectionException
                    || t instanceof SQLException q
                            && q.getSQLState() != null
                            && (q.getSQLState().startsWith("08")
                                    || q.getSQLState().startsWith("57P0"))) {
                return Optional.of(firstLine(t.getMessage()));
            }
        }
        return Optional.empty();
    }

    private static String firstLine(String s) {
        return s == null ? "" : s.lines().findFirst().orElse("");
    }
}
