package io.rebalance.core.redis;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.config.Redact;
import io.rebalance.core.config.RedisAddress;
import io.rebalance.core.config.RedisMode;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.RedisSentinelClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;

/** Opens the pooled Redis client every part uses, and checks that Redis answers before anything relies on it. */
public final class RedisConnector {
    private RedisConnector() {}

    /** A standalone Redis at {@code url}, as {@link #connect(MigrationConfig.Redis, int)} opens it. */
    public static UnifiedJedis connect(String url, int poolSize) {
        return connect(new MigrationConfig.Redis(url, "", RedisMode.STANDALONE, "", "", "", false), poolSize);
    }

    /**
     * Opens the client {@code redis.mode} asks for: one server, a Redis Cluster from its seed nodes (the client
     * follows slots as they move), or the primary the sentinels name (the client follows a failover).
     *
     * @param poolSize connections kept (per node on a cluster); one per worker thread plus a few for the manager,
     *     keeper and heartbeat
     * @throws RebalanceException REDIS_UNREACHABLE when Redis does not answer PING
     */
    public static UnifiedJedis connect(MigrationConfig.Redis settings, int poolSize) {
        RedisAddress address = RedisAddress.of(settings);
        GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(poolSize);
        pool.setMaxIdle(poolSize);
        pool.setMaxWait(Duration.ofSeconds(5));
        pool.setTestOnBorrow(false);
        DefaultJedisClientConfig.Builder client = clientConfig(address);
        if (address.user() != null) client.user(address.user());
        if (address.password() != null) client.password(address.password());
        if (address.mode() == RedisMode.STANDALONE || address.mode() == RedisMode.SENTINEL) {
            client.database(address.database());
        }
        Set<HostAndPort> hosts = new LinkedHashSet<>();
        for (RedisAddress.Host h : address.hosts()) hosts.add(new HostAndPort(h.name(), h.port()));
        UnifiedJedis redis;
        try {
            redis = switch (address.mode()) {
                case STANDALONE ->
                    RedisClient.builder()
                            .hostAndPort(hosts.iterator().next())
                            .clientConfig(client.build())
                            .poolConfig(pool)
                            .build();
                case CLUSTER ->
                    RedisClusterClient.builder()
                            .nodes(hosts)
                            .clientConfig(client.build())
                            .poolConfig(pool)
                            .build();
                case SENTINEL -> {
                    DefaultJedisClientConfig.Builder sentinel = clientConfig(address);
                    // sentinels often run without AUTH where the data nodes have it: their own password, if any
                    if (address.sentinelPassword() != null) sentinel.password(address.sentinelPassword());
                    yield RedisSentinelClient.builder()
                            .masterName(address.sentinelMaster())
                            .sentinels(hosts)
                            .clientConfig(client.build())
                            .sentinelClientConfig(sentinel.build())
                            .poolConfig(pool)
                            .build();
                }
            };
        } catch (JedisException e) { // a cluster or the sentinels are asked for their layout while the client opens
            throw unreachable(settings.url(), address, e);
        }
        try {
            redis.ping();
        } catch (JedisException e) {
            redis.close();
            throw unreachable(settings.url(), address, e);
        }
        return redis;
    }

    /** Timeouts and TLS, the same for the data nodes and the sentinels; each adds its own credentials. */
    private static DefaultJedisClientConfig.Builder clientConfig(RedisAddress address) {
        return DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(2_000)
                .socketTimeoutMillis(5_000)
                .ssl(address.tls());
    }

    private static RebalanceException unreachable(String url, RedisAddress address, JedisException e) {
        if (String.valueOf(e.getMessage()).contains("DB index is out of range")) { // it answered: the path is wrong
            return new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "redis.url " + Redact.url(url) + " names database " + address.database() + ", which that Redis"
                            + " does not have (it has `databases` of them, 16 unless configured, numbered from 0);"
                            + " name one of them in the URL's path, or leave the path out for database 0",
                    e);
        }
        String what =
                switch (address.mode()) {
                    case STANDALONE -> "Redis at " + Redact.url(url);
                    case CLUSTER -> "The Redis Cluster at " + Redact.url(url);
                    case SENTINEL ->
                        "The primary '" + address.sentinelMaster() + "' through the sentinels at " + Redact.url(url);
                };
        return new RebalanceException(
                ErrorCode.REDIS_UNREACHABLE,
                what + " does not answer (" + e.getMessage() + "); start it or set redis.url"
                        + " (REBALANCE_REDIS_URL) and redis.mode to a reachable server",
                e);
    }

    /**
     * Whether Redis went away in the middle of {@code failure} (a connection lost or refused anywhere in its cause
     * chain): a service to start again, not an internal error.
     *
     * @return the connection failure's message, or empty when Redis is not why it failed
     */
    public static Optional<String> connectionLost(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof JedisConnectionException) {
                return Optional.of(String.valueOf(t.getMessage()));
            }
        }
        return Optional.empty();
    }
}
