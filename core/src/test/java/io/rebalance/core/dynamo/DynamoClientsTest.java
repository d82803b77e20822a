package io.rebalance.core.dynamo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.core.ErrorCode;
import io.rebalance.core.RebalanceException;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.MigrationConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Region and credentials come from the AWS SDK's chains unless the configuration sets them, as AWS CLI users expect.
 * The SDK's chains read system properties as well as the environment, so each test points them at files of its own
 * (and turns the instance metadata lookup off: there is no instance here) and puts them back after.
 */
class DynamoClientsTest {
    private static final List<String> PROPERTIES = List.of(
            "aws.region", "aws.configFile", "aws.sharedCredentialsFile", "aws.disableEc2Metadata", "aws.profile");

    @TempDir
    Path dir;

    private final Map<String, String> saved = new HashMap<>();

    @BeforeEach
    void isolate() throws Exception {
        for (String p : PROPERTIES) saved.put(p, System.getProperty(p));
        Path empty = Files.writeString(dir.resolve("empty"), "");
        System.clearProperty("aws.region");
        System.clearProperty("aws.profile");
        System.setProperty("aws.configFile", empty.toString());
        System.setProperty("aws.sharedCredentialsFile", empty.toString());
        System.setProperty("aws.disableEc2Metadata", "true");
    }

    @AfterEach
    void restore() {
        saved.forEach((k, v) -> {
            if (v == null) System.clearProperty(k);
            else System.setProperty(k, v);
        });
    }

    private static MigrationConfig.Target target(String... kv) {
        Map<String, String> overrides = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) overrides.put(kv[i], kv[i + 1]);
        return new ConfigLoader(Map.of()).load(null, overrides).target();
    }

    @Test
    void withoutAnEndpointTheClientReachesAwsInTheSdksRegion() {
        System.setProperty("aws.region", "eu-central-1");
        MigrationConfig.Target defaults = target();
        assertThat(defaults.endpoint()).as("the default endpoint is AWS itself").isEmpty();
        assertThat(defaults.embedded()).isFalse();
        try (DynamoDbClient client = DynamoClients.create(defaults, defaults.endpoint(), 4, List.of())) {
            assertThat(client.serviceClientConfiguration().endpointOverride()).isEmpty();
            assertThat(client.serviceClientConfiguration().region()).isEqualTo(Region.EU_CENTRAL_1);
        }
        assertThat(DynamoClients.region(target("target.region", "sa-east-1"), ""))
                .as("target.region wins")
                .isEqualTo(Region.SA_EAST_1);
    }

    @Test
    void theProfilesRegionAndCredentials() throws Exception {
        Path config = Files.writeString(dir.resolve("config"), "[profile migration]\nregion = ap-south-1\n");
        Path credentials = Files.writeString(
                dir.resolve("credentials"),
                "[migration]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = profileSecret\n");
        System.setProperty("aws.configFile", config.toString());
        System.setProperty("aws.sharedCredentialsFile", credentials.toString());
        MigrationConfig.Target t = target("target.profile", "migration");
        assertThat(DynamoClients.region(t, "")).isEqualTo(Region.AP_SOUTH_1);
        assertThat(DynamoClients.region(t, "http://10.0.0.5:8000")).isEqualTo(Region.AP_SOUTH_1);
        AwsCredentials got =
                DynamoClients.credentials(t, "http://127.0.0.1:8000").resolveCredentials();
        assertThat(got.accessKeyId())
                .as("the profile's keys even for a loopback endpoint")
                .isEqualTo("AKIDPROFILE");
    }

    @Test
    void noRegionAnywhereIsAConfigurationErrorForAwsAndUsEast1ForAnEndpointOfOnesOwn() {
        assertThatThrownBy(() -> DynamoClients.region(target(), ""))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageContaining("target.region")
                .hasMessageContaining("AWS_REGION");
        assertThat(DynamoClients.region(target(), "http://127.0.0.1:8000")).isEqualTo(Region.US_EAST_1);
    }

    @Test
    void staticKeysForADynamoDbOffLoopbackAndDummyOnesOnlyOnLoopback() {
        MigrationConfig.Target keys = target("target.accessKeyId", "AKIDSTATIC", "target.secretAccessKey", "s3cr3t");
        AwsCredentials got =
                DynamoClients.credentials(keys, "http://10.0.0.5:8000").resolveCredentials();
        assertThat(got.accessKeyId()).isEqualTo("AKIDSTATIC");
        assertThat(got.secretAccessKey()).isEqualTo("s3cr3t");
        assertThat(keys.toString()).doesNotContain("s3cr3t");
        assertThat(DynamoClients.credentials(target(), "http://127.0.0.1:8000")
                        .resolveCredentials()
                        .accessKeyId())
                .isEqualTo("local");
        assertThat(DynamoClients.credentials(target(), "http://10.0.0.5:8000"))
                .as("off loopback, the SDK's chain, not the dummy keys")
                .isNotInstanceOf(software.amazon.awssdk.auth.credentials.StaticCredentialsProvider.class);
    }
}
