package io.rebalance.verifier;

import io.rebalance.core.source.SourceSession;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collections;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a row's canonical text becomes its 64-bit row hash, the same in SQL and in Java (docs/fingerprint.md). One
 * verify uses one of them on both sides; which one is decided once, by asking the source ({@link #probe}).
 */
enum RowHash {
    /** Postgres's own {@code hashtextextended}: about 60% of the source's CPU of an MD5 per row, no text parsing. */
    TEXT_HASH {
        @Override
        String sql(String canonical) {
            // COLLATE "C": a nondeterministic collation would hash its sort key, not the bytes
            return "hashtextextended((" + canonical + ") COLLATE \"C\", 0)";
        }

        @Override
        long of(String canonical) {
            return PostgresTextHash.of(canonical.getBytes(StandardCharsets.UTF_8));
        }
    },
    /** The first 8 bytes of the MD5, as a signed big-endian int8: for a source without a matching text hash. */
    MD5 {
        @Override
        String sql(String canonical) {
            return "('x' || substr(md5(" + canonical + "), 1, 16))::bit(64)::int8";
        }

        @Override
        long of(String canonical) {
            byte[] md5 = Md5.digest(canonical.getBytes(StandardCharsets.UTF_8));
            long h = 0;
            for (int i = 0; i < 8; i++) h = (h << 8) | (md5[i] & 0xff);
            return h;
        }
    };

    private static final Logger log = LoggerFactory.getLogger(RowHash.class);

    /**
     * Texts the probe hashes on both sides: every length left over by a 12-byte round (0 to 11 bytes, then 12 and
     * 13), multi-byte characters, and a text of several rounds.
     */
    static final String[] PROBES = {
        "",
        "a",
        "ab",
        "abc",
        "abcd",
        "abcde",
        "abcdef",
        "abcdefg",
        "abcdefgh",
        "abcdefghi",
        "abcdefghij",
        "abcdefghijk",
        "abcdefghijkl",
        "abcdefghijklm",
        "é",
        "✓",
        "𝄞",
        "row ✓ café 0123456789 ☃ 𝄞 ~"
    };

    /** The int8 row hash of the SQL text expression {@code canonical}. */
    abstract String sql(String canonical);

    /** The row hash of a canonical text. */
    abstract long of(String canonical);

    /**
     * {@link #TEXT_HASH} where the source computes it as this class does (Postgres 11 and newer on a little-endian
     * machine), else {@link #MD5}, which every Postgres computes alike; a source that cannot be asked gets MD5 too,
     * and the verify's own queries then report why.
     */
    static RowHash probe(SourceSession session) {
        try (Connection c = session.open()) {
            return probe(c);
        } catch (SQLException e) {
            log.debug("row hash: could not ask the source ({}), using MD5", e.getSQLState());
            return MD5;
        }
    }

    static RowHash probe(Connection c) throws SQLException {
        return probe(c, "hashtextextended");
    }

    /** As {@link #probe(Connection)}, asking {@code function} (a test names one that is missing or differs). */
    static RowHash probe(Connection c, String function) throws SQLException {
        // one round trip: every probe a column of one row
        String column = function + "(CAST(? AS text) COLLATE \"C\", 0)";
        String sql = "SELECT " + String.join(", ", Collections.nCopies(PROBES.length, column));
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < PROBES.length; i++) ps.setString(i + 1, PROBES[i]);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                for (int i = 0; i < PROBES.length; i++) {
                    if (rs.getLong(i + 1) != TEXT_HASH.of(PROBES[i])) {
                        log.info("row hash: the source's hashtextextended differs from this one's (a big-endian"
                                + " server), using MD5");
                        return MD5;
                    }
                }
            }
        } catch (SQLException e) {
            if (!"42883".equals(e.getSQLState())) throw e; // 42883: no such function (Postgres 10)
            log.info("row hash: the source has no hashtextextended, using MD5");
            return MD5;
        }
        return TEXT_HASH;
    }
}
