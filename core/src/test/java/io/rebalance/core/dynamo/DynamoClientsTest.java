package io.rebalance.core.dynamo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
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
            "aws.region",
            "aws.configFile",
            "aws.sharedCredentialsFile",
            "aws.disableEc2Metadata",
            "aws.profile",
            "aws.webIdentityTokenFile",
            "aws.roleArn",
            "aws.roleSessionName",
            "aws.endpointUrlSts",
            "aws.endpointUrlDynamoDb");

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

    /**
     * EKS's IRSA: the pod has a token file and a role, nothing else. With no endpoint and no keys set, the client
     * gets its credentials from STS's AssumeRoleWithWebIdentity and signs its DynamoDB calls with them. A stub on
     * loopback answers for both services (the SDK's own {@code aws.endpointUrl*} settings point them there).
     */
    @Test
    void webIdentityCredentialsThroughSts() throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "eyJ.pod-token.sig");
        List<String> stsBodies = new CopyOnWriteArrayList<>();
        List<String> dynamoAuthorizations = new CopyOnWriteArrayList<>();
        List<String> dynamoSessionTokens = new CopyOnWriteArrayList<>();
        HttpServer stub = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        stub.createContext("/", exchange -> {
            String target = exchange.getRequestHeaders().getFirst("X-Amz-Target");
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String reply;
            if (target == null) { // STS speaks form-encoded queries
                stsBodies.add(URLDecoder.decode(body, StandardCharsets.UTF_8));
                exchange.getResponseHeaders().add("Content-Type", "text/xml");
                reply = "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
                        + "<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIAWEBIDENTITY</AccessKeyId>"
                        + "<SecretAccessKey>webSecret</SecretAccessKey><SessionToken>webSession</SessionToken>"
                        + "<Expiration>2099-01-01T00:00:00Z</Expiration></Credentials><AssumedRoleUser>"
                        + "<Arn>arn:aws:sts::123456789012:assumed-role/migration/pod</Arn>"
                        + "<AssumedRoleId>AROAEXAMPLE:pod</AssumedRoleId></AssumedRoleUser>"
                        + "</AssumeRoleWithWebIdentityResult><ResponseMetadata><RequestId>1</RequestId>"
                        + "</ResponseMetadata></AssumeRoleWithWebIdentityResponse>";
            } else {
                dynamoAuthorizations.add(exchange.getRequestHeaders().getFirst("Authorization"));
                dynamoSessionTokens.add(exchange.getRequestHeaders().getFirst("X-Amz-Security-Token"));
                exchange.getResponseHeaders().add("Content-Type", "application/x-amz-json-1.0");
                reply = "{\"TableNames\":[]}";
            }
            byte[] bytes = reply.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        stub.start();
        try {
            String url = "http://127.0.0.1:" + stub.getAddress().getPort();
            System.setProperty("aws.region", "eu-west-1");
            System.setProperty("aws.webIdentityTokenFile", token.toString());
            System.setProperty("aws.roleArn", "arn:aws:iam::123456789012:role/migration");
            System.setProperty("aws.roleSessionName", "pod");
            System.setProperty("aws.endpointUrlSts", url);
            System.setProperty("aws.endpointUrlDynamoDb", url);
            MigrationConfig.Target defaults = target();
            try (DynamoDbClient client = DynamoClients.create(defaults, defaults.endpoint(), 4, List.of())) {
                assertThat(client.listTables().tableNames()).isEmpty();
            }
            assertThat(stsBodies).singleElement().satisfies(b -> assertThat(b)
                    .contains("Action=AssumeRoleWithWebIdentity")
                    .contains("RoleArn=arn:aws:iam::123456789012:role/migration")
                    .contains("WebIdentityToken=eyJ.pod-token.sig"));
            assertThat(dynamoAuthorizations)
                    .singleElement()
                    .asString()
                    .as("the DynamoDB call is signed with the role's keys, in the SDK's region")
                    .contains("Credential=ASIAWEBIDENTITY/")
                    .contains("/eu-west-1/dynamodb/");
            assertThat(dynamoSessionTokens).containsExactly("webSession");
        } finally {
            stub.stop(0);
        }
    }
}
