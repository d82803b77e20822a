package io.rebalance.verifier;

import io.rebalance.core.codec.ColumnForms;
import io.rebalance.core.codec.ColumnKind;
import io.rebalance.core.codec.ColumnSpec;
import io.rebalance.core.slot.SlotKeyspace;
import java.util.ArrayList;
import java.util.List;

/**
 * The canonical encoding in SQL (docs/fingerprint.md): per column an expression giving the same token as
 * {@link CanonicalItem} gives for the attribute the codec made of that column. Postgres evaluates it next to the
 * data, so a fingerprint moves a count and a sum over the network, not rows. The expressions use built-in functions
 * only: no object is created on the source, so they run on a hot standby, and nothing is interpreted row by row.
 */
public final class CanonicalSql {
    /**
     * A jsonb text's numbers as DynamoDB gives them back: a fraction's trailing zeros dropped ({@code 2.50} to
     * {@code 2.5}, {@code 2.0} to {@code 2}). The first alternative matches a whole string and puts it back as it
     * is, so digits inside strings are never touched; jsonb writes numbers in plain notation, never with exponents.
     */
    static final String TRAILING_ZEROS = "(\"(?:[^\"\\\\]|\\\\.)*\")|(\\.[0-9]*[1-9])0+([^0-9]|$)|\\.0+([^0-9]|$)";

    /** Whether a jsonb text may hold such a number; most texts do not, and for them the text is the token as is. */
    static final String MAY_HAVE_TRAILING_ZEROS = "\\.[0-9]*0([^0-9]|$)";

    /**
     * The subquery beside the table that makes each json column's jsonb text once per row, and its columns' names:
     * Postgres evaluates an expression as often as it is written, and the text is the costliest part of a token.
     * OFFSET 0 keeps the planner from folding it back into the expressions. The names hold spaces, so they cannot be
     * the name of a column the table's expressions read unqualified.
     */
    static final String JSON_TEXTS = "\"rebalance json texts\"";

    private final ColumnForms forms;

    public CanonicalSql(boolean jsonAsMap) {
        this(ColumnForms.of(jsonAsMap));
    }

    /** @param forms the columns the codec stores in another form than their kind's */
    public CanonicalSql(ColumnForms forms) {
        this.forms = forms;
    }

    /** The row's canonical text: its column tokens concatenated in column order. */
    public String row(List<ColumnSpec> columns) {
        return String.join(" || ", columns(columns));
    }

    /**
     * What the expressions read from: {@code table}, and beside it, where the row has json columns, the subquery
     * making their texts. Every query using {@link #row} or {@link #columns} reads from this.
     */
    public String from(String table, List<ColumnSpec> columns) {
        StringBuilder texts = new StringBuilder();
        for (int i = 0; i < columns.size(); i++) {
            ColumnSpec col = columns.get(i);
            if (col.array() || col.kind() != ColumnKind.JSON) continue;
            texts.append(texts.length() == 0 ? "" : ", ")
                    .append(SlotKeyspace.quote(col.name()))
                    .append("::jsonb::text AS ")
                    .append(jsonText(i));
        }
        if (texts.length() == 0) return table;
        return table + ", LATERAL (SELECT " + texts + " OFFSET 0) AS " + JSON_TEXTS;
    }

    /** Each column's token, in column order; never NULL. */
    public List<String> columns(List<ColumnSpec> columns) {
        List<String> out = new ArrayList<>(columns.size());
        for (int i = 0; i < columns.size(); i++) out.add(column(columns.get(i), i));
        return out;
    }

    private static String jsonText(int column) {
        return "\"rebalance json " + column + "\"";
    }

    /** The token of the column at {@code index}. */
    private String column(ColumnSpec col, int index) {
        String q = SlotKeyspace.quote(col.name());
        boolean jsonAsMap = forms.jsonAsMap(col.name());
        if (!col.array()) {
            if (col.kind() != ColumnKind.JSON) return "(" + nullable(q, col.kind(), col.typname(), false) + ")";
            String text = JSON_TEXTS + "." + jsonText(index);
            // the codec stores a json null as the NULL attribute, as it does SQL NULL (docs/codec.md)
            String nullTest = q + " IS NULL" + (jsonAsMap ? " OR " + text + " = 'null'" : "");
            return "(CASE WHEN " + nullTest + " THEN 'Z' ELSE " + json(text) + " END)";
        }
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
            case STRING -> text("'S'", typname.equals("bpchar") ? "concat(" + v + ")" : v + "::text");
            case UUID -> "'S36:' || " + v + "::text"; // a uuid's text is always 36 characters
            case OTHER -> text("'S'", v + "::text");
            case INTEGER -> text("'N'", v + "::text");
            case NUMERIC, FLOAT -> number(v + "::text");
            case BOOL -> "CASE WHEN " + v + " THEN 'T' ELSE 'F' END";
            case JSON -> json(v + "::jsonb::text");
            case TIMESTAMP -> time(v, "timestamp", "-MM-DD\"T\"HH24:MI:SS.US", 26);
            case TIMESTAMPTZ -> time(v, "timestamptz", "-MM-DD\"T\"HH24:MI:SS.US\"Z\"", 27);
            case DATE -> time(v, "date", "-MM-DD", 10);
            case BYTEA -> "'B' || octet_length(" + v + ") || ':' || encode(" + v + ", 'hex')";
        };
    }

    /** {@code <tag><octets>:<text>}. */
    private static String text(String tag, String t) {
        return tag + " || octet_length(" + t + ") || ':' || " + t;
    }

    /** A number as DynamoDB gives it back: N with no trailing fractional zeros; NaN and infinities as S. */
    private static String number(String t) {
        String trimmed = "trim_scale(" + t + "::numeric)::text";
        return "CASE WHEN " + t + " IN ('NaN', 'Infinity', '-Infinity') THEN " + text("'S'", t) + " ELSE "
                + text("'N'", trimmed) + " END";
    }

    /** {@code J} and the jsonb text, its numbers' trailing fractional zeros dropped where it has any. */
    private static String json(String t) {
        // the LIKE goes first: it costs a tenth of the regular expression and rules out most texts alone
        return "'J' || CASE WHEN " + t + " LIKE '%.%0%' AND " + t + " ~ '" + MAY_HAVE_TRAILING_ZEROS
                + "' THEN regexp_replace(" + t + ", '"
                + TRAILING_ZEROS + "', '\\1\\2\\3\\4', 'g') ELSE " + t + " END";
    }

    /**
     * A time as the codec writes it (ISO-8601, UTC where it has a zone). Years 1000 to 9999 take the short way, a
     * text of fixed length; other years are written as astronomical ISO years (44 BC is -0043, 1 BC is 0000), and
     * infinities as Postgres writes them.
     */
    private static String time(String v, String type, String format, int length) {
        String year = "extract(year FROM " + v + ")::int";
        String isoYear = "CASE WHEN " + year + " >= 1000 THEN " + year + "::text WHEN " + year + " > 0 THEN lpad("
                + year + "::text, 4, '0') WHEN " + year + " = -1 THEN '0000' ELSE '-' || lpad((-" + year
                + " - 1)::text, 4, '0') END";
        String general = "CASE WHEN NOT isfinite(" + v + ") THEN " + v + "::text ELSE " + isoYear + " || to_char(" + v
                + ", '" + format + "') END";
        // the session's TimeZone is UTC (SourceSession), so these bounds are UTC instants
        return "CASE WHEN " + v + " >= '1000-01-01'::" + type + " AND " + v + " < '10000-01-01'::" + type + " THEN 'S"
                + length + ":' || to_char(" + v + ", 'YYYY" + format + "') ELSE " + text("'S'", general) + " END";
    }
}
