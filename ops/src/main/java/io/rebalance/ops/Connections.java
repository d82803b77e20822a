package io.rebalance.ops;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.core.retry.Retrier;
import io.rebalance.mover.RunKeys;
import io.rebalance.mover.RunState;
import java.util.List;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The service clients one command uses, opened on demand and closed together. {@code target.endpoint: embedded} is
 * not an endpoint here: the demo resolves it to the DynamoDB Local it starts before anything connects.
 */
public final class Connections implements AutoCloseable {
    private final MigrationConfig config;
    private final int poolSize;
    private UnifiedJedis redis;
    private DynamoDbClient dynamo;
    private String dynamoEndpoint;

    public Connections(MigrationConfig config, int poolSize) {
        if (config.target().embedded())
            throw new IllegalArgumentException(
                    "target.endpoint 'embedded' must be resolved to DynamoDB Local's URL first");
        this.config = config;
        this.poolSize = poolSize;
    }

    public UnifiedJedis redis() {
        if (redis == null) redis = RedisConnector.connect(config.redis().url(), poolSize);
        return redis;
    }

    public RunState runState() {
        return new RunState(redis(), new RunKeys(config.redis().prefix()), Retrier.standard());
    }

    public DynamoDbClient dynamo() {
        if (dynamo == null) {
            dynamoEndpoint = config.target().endpoint();
            dynamo = DynamoClients.create(config.target(), dynamoEndpoint, poolSize * 2, List.of());
        }
        return dynamo;
    }

    /** Where DynamoDB is, for messages: the endpoint, or "AWS region X". */
    public String dynamoWhere() {
        dynamo();
        return dynamoEndpoint.isEmpty()
                ? "AWS region " + dynamo.serviceClientConfiguration().region()
                : dynamoEndpoint;
    }

    @Override
    public void close() {
        if (redis != null) redis.close();
        if (dynamo != null) dynamo.close();
    }
}
