package io.rebalance.core.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses the human durations the config uses: {@code 500ms}, {@code 20s}, {@code 5m}, {@code 2h}, {@code 7d}. */
public final class Durations {
    private static final Pattern FORM = Pattern.compile("(\\d+)(ms|s|m|h|d)");

    private Durations() {}

    /** @throws IllegalArgumentException naming the accepted form when {@code text} is not one */
    public static Duration parse(String text) {
        Matcher m = FORM.matcher(text == null ? "" : text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException(
                    "'" + text + "' is not a duration; write it like 500ms, 20s, 5m, 2h or 7d");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
        };
    }

    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 1000 != 0) return ms + "ms";
        long s = ms / 1000;
        if (s % 86400 == 0) return (s / 86400) + "d";
        if (s % 3600 == 0) return (s / 3600) + "h";
        if (s % 60 == 0) return (s / 60) + "m";
        return s + "s";
    }
}
