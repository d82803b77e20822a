package io.rebalance.verifier;

import io.rebalance.core.codec.ColumnForms;
import io.rebalance.core.codec.ColumnKind;
import io.rebalance.core.codec.ColumnSpec;
import io.rebalance.core.slot.SlotKeyspace;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * The canonical encoding in SQL (docs/fingerprint.md): per column an expression giving the same token as
 * {@link CanonicalItem} gives for the attribute the codec made of that column. Postgres evaluates it next to the
 * data, so a fingerprint moves a count and a sum over the network, not rows.
 */
public final class CanonicalSql {
    private static final String FUNCTIONS = load();

    private final ColumnForms forms;

    public CanonicalSql(boolean jsonAsMap) {
        this(ColumnForms.of(jsonAsMap));
    }

    /** @param forms the columns the codec stores in another form than their kind's */
    public CanonicalSql(ColumnForms forms) {
        this.forms = forms;
    }

    /** Creates the session's temporary helper functions; once per connection, before any other call. */
    public static void install(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute(FUNCTIONS);
        }
    }

    /** The row's canonical text: its column tokens concatenated in column order. */
    public String row(List<ColumnSpec> columns) {
        StringBuilder out = new StringBuilder();
        for (ColumnSpec col : columns) {
            if (out.length() > 0) out.append(" || ");
            out.append(column(col));
        }
        return out.toString();
    }

    /** The 64-bit row hash: the first 16 hex digits of the MD5 of the row's canonical text, as a signed int8. */
    public String rowHash(List<ColumnSpec> columns) {
        return "('x' || substr(md5(" + row(columns) + "), 1, 16))::bit(64)::int8";
    }

    /** One column's token; never NULL. */
    public String column(ColumnSpec col) {
        String q = SlotKeyspace.quote(col.name());
        boolean jsonAsMap = forms.jsonAsMap(col.name());
        if (!col.array()) return "(" + nullable(q, col.kind(), col.typname(), jsonAsMap) + ")";
        String element = nullable("e", col.kind(), col.typname(), jsonAsMap);
        return "(CASE WHEN " + q + " IS NULL THEN 'Z' ELSE 'L' || coalesce(array_ndims(" + q + "), 0) || ':'"
                + " || coalesce(array_to_string(ARRAY(SELECT array_length(" + q + ", d) FROM generate_series(1,"
                + " array_ndims(" + q + ")) d), ','), '') || ':'"
                + " || coalesce((SELECT string_agg(" + element + ", '' ORDER BY n) FROM unnest(" + q + ")"
                + " WITH ORDINALITY AS u(e, n)), '') END)";
    }

    private static String nullable(String v, ColumnKind kind, String typname, boolean jsonAsMap) {
        String nullTest = v + " IS NULL";
        if (kind == ColumnKind.JSON && jsonAsMap) {
            // the codec stores a json null as the NULL attribute, as it does SQL NULL (docs/codec.md)
            nullTest += " OR jsonb_typeof(" + v + "::jsonb) = 'null'";
        }
        return "CASE WHEN " + nullTest + " THEN 'Z' ELSE " + value(v, kind, typname) + " END";
    }

    private static String value(String v, ColumnKind kind, String typname) {
        return switch (kind) {
            // char(n) keeps its padding only in its own output function, which concat() calls; ::text trims it
            case STRING ->
                "pg_temp.rb_text('S', " + (typname.equals("bpchar") ? "concat(" + v + ")" : v + "::text") + ")";
            case UUID, OTHER -> "pg_temp.rb_text('S', " + v + "::text)";
            case INTEGER -> "pg_temp.rb_text('N', " + v + "::text)";
            case NUMERIC, FLOAT -> "pg_temp.rb_num(" + v + "::text)";
            case BOOL -> "CASE WHEN " + v + " THEN 'T' ELSE 'F' END";
            case JSON -> "'J' || pg_temp.rb_json(" + v + "::jsonb)";
            case TIMESTAMP -> "pg_temp.rb_text('S', pg_temp.rb_ts(" + v + "))";
            case TIMESTAMPTZ -> "pg_temp.rb_text('S', pg_temp.rb_tstz(" + v + "))";
            case DATE -> "pg_temp.rb_text('S', pg_temp.rb_date(" + v + "))";
            case BYTEA -> "'B' || octet_length(" + v + ") || ':' || encode(" + v + ", 'hex')";
        };
    }

    private static String load() {
        try (InputStream in = CanonicalSql.class.getResourceAsStream("canonical.sql")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("built-in canonical.sql is unreadable", e);
        }
    }
}
