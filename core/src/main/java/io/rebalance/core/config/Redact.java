package io.rebalance.core.config;

/** Keeps secrets out of logs and messages: credentials inside URLs are replaced by {@code ***}. */
public final class Redact {
    private Redact() {}

    /** {@code redis://user:pw@host:6379} becomes {@code redis://***@host:6379}; JDBC {@code password=} too. */
    public static String url(String url) {
        if (url == null) return null;
        String out = url.replaceAll("//[^/@]*@", "//***@");
        return out.replaceAll("(?i)(password=)[^&;]*", "$1***");
    }
}
