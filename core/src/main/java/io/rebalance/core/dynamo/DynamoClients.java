package io.rebalance.core.dynamo;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.profiles.ProfileFile;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.AwsProfileRegionProvider;
import software.amazon.awssdk.regions.providers.AwsRegionProvider;
import software.amazon.awssdk.regions.providers.AwsRegionProviderChain;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.regions.providers.SystemSettingsRegionProvider;
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
        override.addExecutionInterceptor(DynamoCounts.process()).addMetricPublisher(DynamoCounts.process());
        override.addExecutionInterceptor(new FencedWrites()); // last: it checks the lease right before sending
        var builder = DynamoDbClient.builder()
                .region(region(target, endpoint))
                .httpClientBuilder(ApacheHttpClient.builder()
                        .maxConnections(Math.max(connections, 4))
                        .connectionTimeout(Duration.ofSeconds(2)))
                .overrideConfiguration(override.build())
                .credentialsProvider(credentials(target, endpoint));
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
     * {@code target.region}, else the SDK's: {@code AWS_REGION} (or {@code aws.region}), then the profile's
     * ({@code target.profile}, else {@code AWS_PROFILE} or default), then, for AWS itself, the instance's. An endpoint
     * of one's own with none of these gets us-east-1, which DynamoDB Local ignores; asking an instance there would
     * only wait on a metadata service that is not there.
     *
     * @throws RebalanceException CONFIG_INVALID when AWS itself is the target and no region is found
     */
    public static Region region(MigrationConfig.Target target, String endpoint) {
        if (!target.region().isEmpty()) return Region.of(target.region());
        String profile = target.profile().isEmpty() ? null : target.profile();
        AwsRegionProvider chain = endpoint.isEmpty()
                ? DefaultAwsRegionProviderChain.builder().profileName(profile).build()
                : new AwsRegionProviderChain(
                        new SystemSettingsRegionProvider(),
                        new AwsProfileRegionProvider(ProfileFile::defaultProfileFile, profile));
        try {
            return chain.getRegion();
        } catch (SdkClientException e) {
            if (!endpoint.isEmpty()) return Region.US_EAST_1;
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "target.region is not set and the AWS SDK found no region (AWS_REGION, "
                            + (profile == null ? "the default profile" : "profile '" + profile + "'")
                            + ", instance metadata); set target.region (REBALANCE_TARGET_REGION) or AWS_REGION",
                    e);
        }
    }

    /**
     * The static keys when set; else {@code target.profile}'s credentials (SSO, assume-role and web identity
     * included); else, for a loopback endpoint (DynamoDB Local, which ignores them but the SDK wants some), fixed
     * dummy ones so a machine with no AWS setup works; else the SDK's default chain (environment, web identity as
     * on EKS, profile, container, instance).
     */
    static AwsCredentialsProvider credentials(MigrationConfig.Target target, String endpoint) {
        if (!target.accessKeyId().isEmpty()) {
            return StaticCredentialsProvider.create(
                    AwsBasicCredentials.create(target.accessKeyId(), target.secretAccessKey()));
        }
        if (!target.profile().isEmpty()) {
            return ProfileCredentialsProvider.builder()
                    .profileName(target.profile())
                    .build();
        }
        if (!endpoint.isEmpty()) {
            String host = URI.create(endpoint).getHost();
            if ("localhost".equals(host) || (host != null && host.startsWith("127."))) {
                return StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local"));
            }
        }
        return DefaultCredentialsProvider.builder().build();
    }
}
