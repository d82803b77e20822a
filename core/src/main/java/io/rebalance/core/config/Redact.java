package io.rebalance.core.config;

/** Keeps secrets out of logs and messages: credentials inside URLs are replaced by {@code ***}. */
public final class Redact {
    private Redact() {}

    /**
     * {@code redis://user:pw@host:6379} becomes {@code redis://***@host:6379}, up to the last {@code @}, so a password
     * holding {@code @} or {@code /} is masked whole; JDBC {@code password=} too.
     */
    public static String url(String url) {
        if (url == null) return null;
        String out = url;
        int scheme = out.indexOf("://");
        int at = out.lastIndexOf('@');
        if (scheme >= 0 && at > scheme) out = out.substring(0, scheme + 3) + "***" + out.substring(at);
        return out.replaceAll("(?i)(password=)[^&;]*", "$1***");
    }
}
