package io.rebalance.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.MigrationConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The manifests of deploy/ as `kubectl kustomize` renders them: every object valid against the Kubernetes API's
 * schemas ({@link KubernetesSchemas}), a wrong field refused, and the choices docs/deploy.md explains held: the tail
 * neither restarted for standing by nor holding up a rollout, a grace period longer than each stop, configuration
 * from the ConfigMap and secrets only from the Secret, the alert rules the same as deploy/prometheus's, every pod
 * scraped under the job the alerts name, and the Jobs neither evicted nor tied to the base's image name.
 */
class ManifestsTest {
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Path DEPLOY = Path.of(System.getProperty("user.dir"));

    static Stream<String> kustomizations() throws IOException {
        try (Stream<Path> files = Files.walk(DEPLOY)) {
            List<String> dirs = files.filter(f -> f.getFileName().toString().equals("kustomization.yaml"))
                    .filter(f -> !f.startsWith(DEPLOY.resolve("target")))
                    .map(f -> DEPLOY.relativize(f.getParent()).toString())
                    .sorted()
                    .toList();
            assertThat(dirs).contains("base", "overlays/eks", "overlays/small", "jobs/verify", "jobs/cutover");
            return dirs.stream();
        }
    }

    @ParameterizedTest
    @MethodSource("kustomizations")
    void everyRenderedObjectIsValidAgainstTheKubernetesApi(String kustomization) throws Exception {
        List<JsonNode> objects = render(kustomization);
        assertThat(objects).isNotEmpty();
        for (JsonNode o : objects)
            assertThat(KubernetesSchemas.problems(o)).as(o.toString()).isEmpty();
    }

    @Test
    void aWrongFieldAMissingOneAndAnUnknownKindAreRefused() throws Exception {
        ObjectNode tail = (ObjectNode) find(render("base"), "Deployment", "rebalance-tail");
        ObjectNode container = (ObjectNode) tail.at("/spec/template/spec/containers/0");

        container.put("imagePullPolice", "Always"); // a misspelt field
        assertThat(KubernetesSchemas.problems(tail))
                .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
                .contains("imagePullPolice")
                .contains("V1Container");
        container.remove("imagePullPolice");

        container.remove("name"); // a required field
        assertThat(KubernetesSchemas.problems(tail)).singleElement().asString().contains("name");
        container.put("name", "tail");

        ((ObjectNode) tail.at("/spec")).put("replicas", "two"); // a value of the wrong type
        assertThat(KubernetesSchemas.problems(tail)).isNotEmpty();
        ((ObjectNode) tail.at("/spec")).put("replicas", 2);
        assertThat(KubernetesSchemas.problems(tail)).isEmpty();

        ObjectNode monitor = (ObjectNode) find(render("base"), "PodMonitor", "rebalance");
        ((ObjectNode) monitor.at("/spec/podMetricsEndpoints/0")).put("intervall", "15s");
        assertThat(KubernetesSchemas.problems(monitor))
                .singleElement()
                .asString()
                .contains("podMetricsEndpoints[0].intervall");

        ObjectNode unknown = tail.deepCopy().put("apiVersion", "apps/v1beta9");
        assertThat(KubernetesSchemas.problems(unknown))
                .singleElement()
                .asString()
                .contains("no kind Deployment");
    }

    @Test
    void theTailIsNeverRestartedForStandingByNorHoldsUpARollout() throws Exception {
        JsonNode tail = find(render("base"), "Deployment", "rebalance-tail");
        assertThat(tail.at("/spec/replicas").asInt()).isEqualTo(2);
        assertThat(tail.at("/spec/strategy/rollingUpdate/maxUnavailable").asInt())
                .as("a standby is always there")
                .isZero();
        JsonNode c = tail.at("/spec/template/spec/containers/0");
        assertThat(c.at("/args").toString()).isEqualTo("[\"tail\"]");
        assertThat(c.has("readinessProbe"))
                .as("/health/ready is DOWN on a standby by design: as a readiness gate it holds every rollout")
                .isFalse();
        assertThat(c.at("/livenessProbe/httpGet/path").asText()).isEqualTo("/health/live");
        assertThat(c.at("/startupProbe/httpGet/path").asText()).isEqualTo("/health/live");
    }

    @Test
    void copyAndTailGetAGracePeriodLongerThanTheirStopAndABudgetAgainstDrains() throws Exception {
        List<JsonNode> base = render("base");
        // the copy waits at most 20 s for its workers to give their slots back, the tail 15 s for its last batch
        for (String name : List.of("rebalance-copy", "rebalance-tail")) {
            JsonNode d = find(base, "Deployment", name);
            assertThat(d.at("/spec/template/spec/terminationGracePeriodSeconds").asInt())
                    .as(name)
                    .isGreaterThanOrEqualTo(25);
            JsonNode pdb = find(base, "PodDisruptionBudget", name);
            assertThat(pdb.at("/spec/selector/matchLabels"))
                    .as(name + "'s budget selects its pods")
                    .isEqualTo(d.at("/spec/selector/matchLabels"));
        }
        assertThat(find(base, "PodDisruptionBudget", "rebalance-tail")
                        .at("/spec/minAvailable")
                        .asInt())
                .isEqualTo(1);
    }

    @Test
    void configurationComesFromTheConfigMapAndSecretsOnlyFromTheSecret() throws Exception {
        for (String k : List.of("base", "overlays/eks", "overlays/small", "jobs/verify", "jobs/cutover")) {
            for (JsonNode o : render(k)) {
                JsonNode pod = o.path("kind").asText().equals("Deployment")
                                || o.path("kind").asText().equals("Job")
                        ? o.at("/spec/template/spec")
                        : null;
                if (pod == null) continue;
                JsonNode c = pod.at("/containers/0");
                assertThat(c.at("/envFrom/0/secretRef/name").asText()).as(k).isEqualTo("rebalance-secrets");
                assertThat(c.at("/volumeMounts").toString()).contains("/etc/rebalance");
                assertThat(pod.at("/volumes").toString()).contains("\"name\":\"rebalance-config\"");
                for (JsonNode env : c.path("env")) {
                    assertThat(env.path("name").asText())
                            .as("a secret's variable comes from the Secret, never a literal in the manifest")
                            .doesNotContain("PASSWORD")
                            .doesNotContain("SECRET");
                }
                assertThat(pod.at("/securityContext/runAsNonRoot").asBoolean()).isTrue();
            }
        }
        JsonNode config = find(render("base"), "ConfigMap", "rebalance-config");
        String yaml = config.at("/data/migration.yaml").asText();
        assertThat(yaml.lines().filter(l -> !l.trim().startsWith("#")))
                .as("no secret in the ConfigMap")
                .noneMatch(l -> l.toLowerCase().contains("password") || l.contains("secretAccessKey"));
        Path file = Files.createTempFile("migration", ".yaml");
        try {
            Files.writeString(file, yaml);
            MigrationConfig loaded = ConfigLoader.fromSystem().load(file, Map.of());
            assertThat(loaded.source().table()).isEqualTo("public.room_events");
            assertThat(loaded.metrics().port())
                    .as("the port the probes and the scrape name")
                    .isEqualTo("9400");
        } finally {
            Files.delete(file);
        }
    }

    @Test
    void thePrometheusRuleHoldsTheAlertsOfTheRuleFile() throws Exception {
        JsonNode rule = find(render("base"), "PrometheusRule", "rebalance");
        JsonNode file =
                YAML.readTree(DEPLOY.resolve("prometheus/rebalance-alerts.yml").toFile());
        assertThat(rule.at("/spec/groups")).isEqualTo(file.get("groups"));
        assertThat(((ArrayNode) file.at("/groups/0/rules")).size()).isGreaterThan(5);
    }

    @Test
    void everyPodIsScrapedUnderTheJobTheAlertsName() throws Exception {
        List<JsonNode> base = render("base");
        JsonNode monitor = find(base, "PodMonitor", "rebalance").at("/spec");
        String jobLabel = monitor.path("jobLabel").asText();
        assertThat(jobLabel)
                .as("without it the Operator names the job namespace/name")
                .isNotEmpty();
        JsonNode selector = monitor.at("/selector/matchLabels");
        String job = null;
        for (String k : List.of("base", "overlays/eks", "overlays/small", "jobs/verify", "jobs/cutover")) {
            for (JsonNode o : render(k)) {
                if (!List.of("Deployment", "Job").contains(o.path("kind").asText())) continue;
                JsonNode labels = o.at("/spec/template/metadata/labels");
                selector.fields().forEachRemaining(l -> assertThat(
                                labels.path(l.getKey()).asText())
                        .as(k + " " + o.at("/metadata/name").asText() + "'s pods, selected by the PodMonitor")
                        .isEqualTo(l.getValue().asText()));
                job = labels.path(jobLabel).asText();
                assertThat(job).as(k + "'s job label").isEqualTo("rebalance");
            }
        }
        assertThat(find(base, "PrometheusRule", "rebalance").at("/spec/groups").toString())
                .contains("up{job=\\\"" + job + "\\\"}");
    }

    @Test
    void theJobsRunUninterruptedOnTheImageTheirKustomizationNames() throws Exception {
        for (String k : List.of("jobs/verify", "jobs/cutover")) {
            JsonNode job = render(k).stream()
                    .filter(o -> o.path("kind").asText().equals("Job"))
                    .findFirst()
                    .orElseThrow();
            assertThat(job.at("/spec/template/metadata/annotations/cluster-autoscaler.kubernetes.io~1safe-to-evict")
                            .asText())
                    .as(k + ": an autoscaler's drain would end it half way")
                    .isEqualTo("false");
            String kustomization = Files.readString(DEPLOY.resolve(k).resolve("kustomization.yaml"));
            assertThat(kustomization)
                    .as(k + ": the registry's image is set here, as in the overlay")
                    .contains("newName:");
        }
    }

    /** {@code kubectl kustomize DIR}, each object of its output. */
    static List<JsonNode> render(String kustomization) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(
                            "kubectl",
                            "kustomize",
                            DEPLOY.resolve(kustomization).toString())
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "kubectl (with its built-in kustomize, v5) renders the manifests and is not on the PATH: install"
                            + " it, as this project's machines have it (docs/deploy.md)",
                    e);
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
        List<JsonNode> objects = new ArrayList<>();
        try (var docs = YAML.readerFor(JsonNode.class).readValues(out)) {
            while (docs.hasNext()) {
                JsonNode n = (JsonNode) docs.next();
                if (n != null && !n.isNull() && !n.isEmpty()) objects.add(n);
            }
        }
        return objects;
    }

    static JsonNode find(List<JsonNode> objects, String kind, String name) {
        return objects.stream()
                .filter(o -> o.path("kind").asText().equals(kind)
                        && o.at("/metadata/name").asText().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " " + name));
    }
}
