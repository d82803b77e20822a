package io.rebalance.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** Every call through the proxy reaches DynamoDB Local and answers as it would, no sooner than the delay. */
class DelayProxyIT {
    @Test
    void aCallIsPassedOnAfterTheDelayAndAnsweredAsDynamoDbLocalAnswers() throws Exception {
        try (DynamoDbLocalServer local = DynamoDbLocalServer.start(0);
                DelayProxy proxy = DelayProxy.start(local.endpoint(), 200);
                DynamoDbClient dynamo = DynamoDbClient.builder()
                        .endpointOverride(URI.create(proxy.endpoint()))
                        .region(Region.US_EAST_1)
                        .credentialsProvider(
                                StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                        .build()) {
            long start = System.nanoTime();
            assertThat(dynamo.listTables().tableNames()).isEmpty();
            assertThat((System.nanoTime() - start) / 1_000_000).isGreaterThanOrEqualTo(200);
        }
    }
}
