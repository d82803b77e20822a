package io.rebalance.core.redis;

import io.rebalance.core.config.Redact;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.net.URI;
import java.time.Duration;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisException;

/** Opens the pooled Redis client every part uses, and checks that Redis answers before anything relies on it. */
public final class RedisConnector {
    private RedisConnector() {}

    /**
     * @param poolSize connections kept; one per worker thread plus a few for the manager, keeper and heartbeat
     * @throws RebalanceException REDIS_UNREACHABLE when Redis does not answer PING
     */
    public static UnifiedJedis connect(String url, int poolSize) {
        GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(poolSize);
        pool.setMaxIdle(poolSize);
        pool.setMaxWait(Duration.ofSeconds(5));
        pool.setTestOnBorrow(false);
        URI uri = URI.create(url);
        DefaultJedisClientConfig.Builder client = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(2_000)
                .socketTimeoutMillis(5_000)
                .ssl("rediss".equals(uri.getScheme()));
        if (uri.getUserInfo() != null) {
            String[] userPass = uri.getUserInfo().split(":", 2);
            if (userPass.length == 2) {
                if (!userPass[0].isEmpty()) client.user(userPass[0]);
                client.password(userPass[1]);
            } else {
                client.password(userPass[0]);
            }
        }
        if (uri.getPath() != null && uri.getPath().length() > 1) {
            client.database(Integer.parseInt(uri.getPath().substring(1)));
        }
        UnifiedJedis redis = RedisClient.builder()
                .hostAndPort(uri.getHost(), uri.getPort() < 0 ? 6379 : uri.getPort())
                .clientConfig(client.build())
                .poolConfig(pool)
                .build();
        try {
            redis.ping();
        } catch (JedisException e) {
            redis.close();
            throw new RebalanceException(
                    ErrorCode.REDIS_UNREACHABLE,
                    "Redis at " + Redact.url(url) + " does not answer (" + e.getMessage()
                            + "); start it or set redis.url" + " (REBALANCE_REDIS_URL) to a reachable server",
                    e);
        }
        return redis;
    }

    /**
     * Whether Redis went away in the middle of {@code failure} (a connection lost or refused anywhere in its cause
     * chain): a service to start again, not an internal error.
     *
     * @return the connection failure's message, or empty when Redis is not why it failed
     */
    public static java.util.Optional<String> connectionLost(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof redis.clients.jedis.exceptions.JedisConnectionException) {
                return java.util.Optional.of(String.valueOf(t.getMessage()));
            }
        }
        return java.util.Optional.empty();
    }
}
