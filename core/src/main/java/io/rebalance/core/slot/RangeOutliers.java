package io.rebalance.core.slot;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What makes a table's time range implausible, found from a handful of rows at each end (an index answers): times no
 * real row carries (before 1990: a wrong id epoch; in the future: a wrong epoch or a bad value), and a few rows so far
 * from the rest that they stretch the run by thousands of empty hours. Each warning names the rows and the way out.
 */
public final class RangeOutliers {
    /** Rows read at each end of the table. */
    public static final int ENDS = 6;

    /** No migrated row is older: a time before it comes from reading the ids with the wrong layout or epoch. */
    public static final Instant EARLIEST = Instant.parse("1990-01-01T00:00:00Z");

    /** A gap at an end smaller than this is the data's own rhythm, however sparse. */
    private static final Duration MIN_GAP = Duration.ofDays(30);

    private RangeOutliers() {}

    /** A row at one end: its key as text and its time. */
    public record Row(String key, Instant at) {}

    /** @return whether no row can be at {@code t}: before {@link #EARLIEST} or more than a day after {@code now} */
    public static boolean implausible(Instant t, Instant now) {
        return t.isBefore(EARLIEST) || t.isAfter(now.plus(Duration.ofDays(1)));
    }

    /**
     * @param oldest up to {@link #ENDS} rows, oldest first
     * @param newest up to {@link #ENDS} rows, newest first
     * @return the warnings, empty when the range looks like the data's
     */
    public static List<String> warnings(List<Row> oldest, List<Row> newest, Instant now) {
        List<String> out = new ArrayList<>();
        if (oldest.isEmpty() || newest.isEmpty()) return out;
        List<Row> early = oldest.stream().filter(r -> r.at().isBefore(EARLIEST)).toList();
        if (!early.isEmpty()) {
            out.add(describe(early, oldest.size())
                    + " a time before 1990, which no migrated row has: the ids are likely read"
                    + " with the wrong layout or epoch (check slots.idFormat and slots.snowflake.epochMillis against"
                    + " how the ids are made), or the rows hold a bad time");
        }
        List<Row> future = newest.stream()
                .filter(r -> r.at().isAfter(now.plus(Duration.ofDays(1))))
                .toList();
        if (!future.isEmpty()) {
            out.add(describe(future, newest.size())
                    + " a time in the future: the ids are likely read with the wrong layout"
                    + " or epoch (check slots.idFormat and slots.snowflake.epochMillis), or the rows hold a bad time");
        }
        Duration span = Duration.between(oldest.get(0).at(), newest.get(0).at());
        int stray = strays(newest, span, true);
        if (stray > 0) out.add(gapWarning(newest, stray, "newest", "after", "slots.to"));
        stray = strays(oldest, span, false);
        if (stray > 0) out.add(gapWarning(oldest, stray, "oldest", "before", "slots.from"));
        return out;
    }

    /** How many rows at this end stand apart from the rest by a gap of half the range or more (and a month). */
    private static int strays(List<Row> end, Duration span, boolean newest) {
        Duration wide = span.dividedBy(2).compareTo(MIN_GAP) > 0 ? span.dividedBy(2) : MIN_GAP;
        for (int i = 0; i + 1 < end.size(); i++) {
            Duration gap =
                    Duration.between(end.get(i + 1).at(), end.get(i).at()).abs();
            if (gap.compareTo(wide) >= 0) return i + 1;
        }
        return 0;
    }

    private static String gapWarning(List<Row> end, int stray, String which, String side, String key) {
        Row last = end.get(stray - 1);
        Row bulk = end.get(stray);
        long hours = Duration.between(bulk.at(), last.at()).abs().toHours();
        long days = Duration.between(bulk.at(), last.at()).abs().toDays();
        String rows = stray == 1
                ? "the " + which + " row (" + row(last) + ")"
                : "the " + stray + " " + which
                        + " rows ("
                        + String.join(
                                ", ",
                                end.subList(0, stray).stream()
                                        .map(RangeOutliers::row)
                                        .toList())
                        + ")";
        return String.format(
                Locale.ROOT,
                "%s %s %,d days %s the rest of the table (%s): %s alone add%s about %,d hourly slots to the run,"
                        + " each an empty hour to copy and verify. If %s stray, correct or delete %s; or set %s to"
                        + " the bulk's end (rows outside slots.from/slots.to are not copied; `verify --all` counts"
                        + " them)",
                rows,
                stray == 1 ? "lies" : "lie",
                days,
                side,
                row(bulk),
                stray == 1 ? "it" : "they",
                stray == 1 ? "s" : "",
                hours,
                stray == 1 ? "it is a" : "they are",
                stray == 1 ? "it" : "them",
                key);
    }

    private static String describe(List<Row> rows, int read) {
        String listed = String.join(", ", rows.stream().map(RangeOutliers::row).toList());
        String which = rows.size() == read
                ? "at least " + rows.size() + " rows"
                : rows.size() == 1 ? "a row" : rows.size() + " rows";
        return which + " (" + listed + ")" + (rows.size() == 1 ? " has" : " have");
    }

    private static String row(Row r) {
        return "key " + r.key() + " at " + r.at().truncatedTo(ChronoUnit.SECONDS);
    }
}
