package io.rebalance.cli;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.core.retry.Retrier;
import io.rebalance.local.DynamoDbLocalServer;
import io.rebalance.mover.RunKeys;
import io.rebalance.mover.RunState;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The service clients one command uses, opened on demand and closed together. {@code target.endpoint: embedded}
 * (the demo's only) starts DynamoDB Local inside this process: its data ends with the process, and other processes
 * cannot reach it (for several processes, `rebalance dynamodb-local` serves one on a port).
 */
final class Connections implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Connections.class);

    private final MigrationConfig config;
    private final int poolSize;
    private UnifiedJedis redis;
    private DynamoDbClient dynamo;
    private DynamoDbLocalServer embedded;
    private String dynamoEndpoint;

    Connections(MigrationConfig config, int poolSize) {
        this.config = config;
        this.poolSize = poolSize;
    }

    UnifiedJedis redis() {
        if (redis == null) redis = RedisConnector.connect(config.redis().url(), poolSize);
        return redis;
    }

    RunState runState() {
        return new RunState(redis(), new RunKeys(config.redis().prefix()), Retrier.standard());
    }

    DynamoDbClient dynamo() {
        if (dynamo == null) {
            dynamoEndpoint = config.target().endpoint();
            if (config.target().embedded()) {
                embedded = DynamoDbLocalServer.start(0);
                dynamoEndpoint = embedded.endpoint();
                log.info(
                        "DynamoDB Local runs inside this process at {}; its data ends with the process",
                        dynamoEndpoint);
            }
            dynamo = DynamoClients.create(config.target(), dynamoEndpoint, poolSize * 2, List.of());
        }
        return dynamo;
    }

    /** Where DynamoDB is, for messages: the endpoint, or "AWS region X". */
    String dynamoWhere() {
        dynamo();
        return dynamoEndpoint.isEmpty()
                ? "AWS region " + dynamo.serviceClientConfiguration().region()
                : dynamoEndpoint;
    }

    @Override
    public void close() {
        if (redis != null) redis.close();
        if (dynamo != null) dynamo.close();
        if (embedded != null) embedded.close();
    }
}
