package io.rebalance.core.dynamo;

import io.rebalance.core.config.MigrationConfig;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/** Builds the DynamoDB client every part uses. */
public final class DynamoClients {
    /** One attempt's limit: a reply that never arrives is given up on and retried. */
    static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(10);

    /** One call's limit, retries included. */
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

    private DynamoClients() {}

    /**
     * @param endpoint an http(s) URL, or empty for AWS itself; {@code embedded} must be resolved to the local
     *     server's URL by the caller first
     * @param interceptors hooks at the SDK boundary; tests inject throttling here, production passes none. They run
     *     before {@link FencedWrites}, which every client has
     */
    public static DynamoDbClient create(
            MigrationConfig.Target target, String endpoint, int connections, List<ExecutionInterceptor> interceptors) {
        ClientOverrideConfiguration.Builder override = ClientOverrideConfiguration.builder()
                .apiCallAttemptTimeout(ATTEMPT_TIMEOUT)
                .apiCallTimeout(CALL_TIMEOUT);
        interceptors.forEach(override::addExecutionInterceptor);
        override.addExecutionInterceptor(new FencedWrites()); // last: it checks the lease right before sending
        var builder = DynamoDbClient.builder()
                .region(Region.of(target.region()))
                .httpClientBuilder(ApacheHttpClient.builder()
                        .maxConnections(Math.max(connections, 4))
                        .connectionTimeout(Duration.ofSeconds(2)))
                .overrideConfiguration(override.build())
                .credentialsProvider(credentials(endpoint));
        if (!endpoint.isEmpty()) builder.endpointOverride(URI.create(endpoint));
        return builder.build();
    }

    /** A DynamoDB Streams client for the same endpoint, region and credentials as {@code dynamo}. */
    public static DynamoDbStreamsClient streamsOf(DynamoDbClient dynamo) {
        var config = dynamo.serviceClientConfiguration();
        var builder = DynamoDbStreamsClient.builder()
                .region(config.region())
                .credentialsProvider(config.credentialsProvider())
                .httpClientBuilder(ApacheHttpClient.builder().connectionTimeout(Duration.ofSeconds(2)))
                .overrideConfiguration(ClientOverrideConfiguration.builder()
                        .apiCallAttemptTimeout(ATTEMPT_TIMEOUT)
                        .apiCallTimeout(CALL_TIMEOUT)
                        .build());
        config.endpointOverride().ifPresent(builder::endpointOverride);
        return builder.build();
    }

    /**
     * DynamoDB Local ignores credentials (with -sharedDb) but the SDK insists on some: a loopback endpoint gets
     * fixed dummy ones, so a developer machine with no AWS setup works; anything else uses the default chain.
     */
    static AwsCredentialsProvider credentials(String endpoint) {
        if (!endpoint.isEmpty()) {
            String host = URI.create(endpoint).getHost();
            if ("localhost".equals(host) || (host != null && host.startsWith("127."))) {
                return StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local"));
            }
        }
        return DefaultCredentialsProvider.builder().build();
    }
}
