package io.rebalance.core.config;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Where the run's Redis is and how to log in, from {@code redis.url} and the {@code redis.*} keys beside it:
 * {@code redis[s]://[user:password@]host[:port][,host[:port]...][/db]}. One host for {@code standalone}; the seed
 * nodes of a {@code cluster}; the sentinels of a {@code sentinel} setup (port 26379 unless given).
 *
 * @param password the URL's password when it has one, else {@code redis.password} (so a URL in a ConfigMap and the
 *     password in a Secret's environment variable work, and a URL that carries one is taken as written)
 */
public record RedisAddress(
        RedisMode mode,
        boolean tls,
        String user,
        String password,
        List<Host> hosts,
        int database,
        String sentinelMaster,
        String sentinelPassword) {

    /** One server: a host name or address, and its port. */
    public record Host(String name, int port) {
        @Override
        public String toString() {
            return (name.indexOf(':') >= 0 ? "[" + name + "]" : name) + ":" + port;
        }
    }

    /** @throws IllegalArgumentException naming the key, the value (credentials masked) and what would do */
    public static RedisAddress of(MigrationConfig.Redis r) {
        RedisMode mode = r.mode();
        String url = r.url();
        String shown = Redact.url(url);
        int schemeEnd = url.indexOf("://");
        String scheme = schemeEnd < 0 ? "" : url.substring(0, schemeEnd);
        if (!scheme.equals("redis") && !scheme.equals("rediss")) {
            throw invalid(shown, "a URL starting redis:// (or rediss:// for TLS)");
        }
        String rest = url.substring(schemeEnd + 3);
        int at = rest.lastIndexOf('@'); // a password may hold '@' or '/': the hosts begin after the last '@'
        int slash = rest.indexOf('/', at + 1);
        String authority = slash < 0 ? rest : rest.substring(0, slash);
        String path = slash < 0 ? "" : rest.substring(slash + 1);
        String userInfo = at < 0 ? null : authority.substring(0, at);
        String hostList = authority.substring(at + 1);
        String user = null;
        String password = null;
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            if (colon < 0) {
                password = decoded(userInfo); // redis://secret@host: a password alone, as Redis URLs have long allowed
            } else {
                user = userInfo.substring(0, colon).isEmpty() ? null : decoded(userInfo.substring(0, colon));
                password = decoded(userInfo.substring(colon + 1));
            }
        }
        if (password == null || password.isEmpty()) password = r.password().isEmpty() ? null : r.password();
        int defaultPort = mode == RedisMode.SENTINEL ? 26379 : 6379;
        List<Host> hosts = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (String h : hostList.split(",", -1)) {
            Host hp = host(h.trim(), defaultPort, shown);
            if (seen.add(hp.toString())) hosts.add(hp);
        }
        int database = 0;
        if (!path.isEmpty()) {
            if (!path.matches("\\d{1,5}")) throw invalid(shown, "a database number after the host, like /0");
            database = Integer.parseInt(path);
        }
        if (mode == RedisMode.STANDALONE && hosts.size() > 1) {
            throw new IllegalArgumentException("redis.url='" + shown + "' lists " + hosts.size() + " hosts, but"
                    + " redis.mode is standalone, which reaches one; set redis.mode to cluster (the hosts are seed"
                    + " nodes) or sentinel (the hosts are sentinels), or give one host");
        }
        if (mode == RedisMode.CLUSTER && database != 0) {
            throw new IllegalArgumentException("redis.url='" + shown + "' selects database " + database
                    + ", but a Redis Cluster has only database 0; remove /" + database + " from the URL");
        }
        if (mode == RedisMode.SENTINEL && r.sentinelMaster().isEmpty()) {
            throw new IllegalArgumentException("redis.sentinelMaster is empty, but redis.mode is sentinel; set it to"
                    + " the name the sentinels monitor the primary under (`sentinel monitor <name> ...`), e.g."
                    + " REBALANCE_REDIS_SENTINEL_MASTER=mymaster");
        }
        if (mode != RedisMode.SENTINEL && !r.sentinelMaster().isEmpty()) {
            throw new IllegalArgumentException("redis.sentinelMaster='" + r.sentinelMaster() + "' is set, but"
                    + " redis.mode is " + mode.text() + "; set redis.mode to sentinel, or remove"
                    + " redis.sentinelMaster");
        }
        return new RedisAddress(
                mode,
                scheme.equals("rediss"),
                user,
                password,
                List.copyOf(hosts),
                database,
                r.sentinelMaster(),
                r.sentinelPassword().isEmpty() ? null : r.sentinelPassword());
    }

    /** The first problem with {@code r}'s address, for the configuration's validation; empty when it is usable. */
    public static Optional<String> problem(MigrationConfig.Redis r) {
        try {
            of(r);
            return Optional.empty();
        } catch (IllegalArgumentException e) {
            return Optional.of(e.getMessage());
        }
    }

    private static Host host(String h, int defaultPort, String shown) {
        String host = h;
        int port = defaultPort;
        int colon = h.lastIndexOf(':');
        if (h.startsWith("[")) { // [::1]:6379
            int close = h.indexOf(']');
            if (close < 0) throw invalid(shown, "an IPv6 host in brackets, like [::1]:6379");
            host = h.substring(1, close);
            if (close + 1 < h.length()) {
                if (h.charAt(close + 1) != ':') throw invalid(shown, "host:port pairs separated by commas");
                port = port(h.substring(close + 2), shown);
            }
        } else if (colon >= 0) {
            host = h.substring(0, colon);
            if (host.indexOf(':') >= 0) throw invalid(shown, "an IPv6 host in brackets, like [::1]:6379");
            port = port(h.substring(colon + 1), shown);
        }
        if (host.isEmpty()) throw invalid(shown, "a host in each host:port, like redis://127.0.0.1:6379");
        return new Host(host, port);
    }

    /** Percent-escapes decoded, as a URL's user and password are written ({@code p%40ss} for {@code p@ss}). */
    private static String decoded(String text) {
        try {
            return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8); // '+' is no space here
        } catch (IllegalArgumentException badEscape) {
            return text; // a lone '%' is a character of the password, as written
        }
    }

    private static int port(String text, String shown) {
        if (!text.matches("\\d{1,5}") || Integer.parseInt(text) < 1 || Integer.parseInt(text) > 65535) {
            throw invalid(shown, "a port from 1 to 65535 after each host");
        }
        return Integer.parseInt(text);
    }

    private static IllegalArgumentException invalid(String shown, String expected) {
        return new IllegalArgumentException("redis.url='" + shown + "' is not valid; expected " + expected
                + ": redis://[user:password@]host:port[,host:port...][/db]");
    }

    @Override
    public String toString() {
        return "RedisAddress[" + mode.text() + (tls ? " tls " : " ") + hosts + "/" + database
                + (sentinelMaster.isEmpty() ? "" : " master " + sentinelMaster) + (password == null ? "" : " ***")
                + "]";
    }
}
