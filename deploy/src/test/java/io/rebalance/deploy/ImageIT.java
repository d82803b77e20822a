package io.rebalance.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.SharedServices;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The image the build made (target/rebalance-image.tar, an OCI tarball by Jib), read as a runtime reads it: its
 * configuration from the tarball (entrypoint, user, port), and its layers unpacked in order into a filesystem that
 * `rebalance --help` and `rebalance check` then run in, as the image's user, in a chroot with /proc mounted (no
 * container engine runs here). `check` reaches the test services over loopback, as a pod reaches its databases.
 */
class ImageIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path IMAGE = Path.of("target/rebalance-image.tar");
    private static Path work;
    private static Path rootfs;
    private static JsonNode config;

    @BeforeAll
    static void unpack() throws Exception {
        assertThat(IMAGE)
                .as("the build makes the image in the package phase (scripts/base-image.sh)")
                .exists();
        assertThat(new String(run(List.of("id", "-u")).getBytes(), StandardCharsets.UTF_8).trim())
                .as("a chroot needs root, as the suite has on this project's machines")
                .isEqualTo("0");
        work = Files.createTempDirectory("rebalance-image");
        Path oci = work.resolve("oci");
        rootfs = work.resolve("rootfs");
        Files.createDirectories(oci);
        Files.createDirectories(rootfs);
        run(List.of("tar", "-xf", IMAGE.toString(), "-C", oci.toString()));
        JsonNode index = JSON.readTree(oci.resolve("index.json").toFile());
        JsonNode manifest = JSON.readTree(
                blob(oci, index.at("/manifests/0/digest").asText()).toFile());
        config = JSON.readTree(blob(oci, manifest.at("/config/digest").asText()).toFile());
        for (JsonNode layer : manifest.path("layers")) {
            assertThat(layer.path("mediaType").asText()).endsWith("tar+gzip");
            run(List.of(
                    "tar",
                    "--warning=no-unknown-keyword",
                    "-xzf",
                    blob(oci, layer.path("digest").asText()).toString(),
                    "-C",
                    rootfs.toString()));
        }
    }

    @AfterAll
    static void remove() throws Exception {
        if (work != null) run(List.of("rm", "-rf", work.toString()));
    }

    @Test
    void theConfigurationRunsRebalanceAsAnUnprivilegedUserWithTheMetricsPort() {
        JsonNode c = config.path("config");
        assertThat(c.path("Entrypoint").toString()).isEqualTo("[\"/usr/local/bin/rebalance\"]");
        assertThat(c.path("User").asText()).isEqualTo("10001:10001");
        assertThat(c.path("ExposedPorts").has("9400/tcp")).isTrue();
        assertThat(config.path("os").asText()).isEqualTo("linux");
        for (JsonNode env : c.path("Env"))
            assertThat(env.asText())
                    .as("no secret in the image")
                    .doesNotContain("PASSWORD")
                    .doesNotContain("SECRET");
        assertThat(rootfs.resolve("etc/rebalance"))
                .as("configuration comes from the ConfigMap")
                .doesNotExist();
        assertThat(rootfs.resolve("usr/share/rebalance/packages.txt"))
                .as("the base lists its Debian packages")
                .content()
                .contains("openjdk-17-jre-headless");
    }

    @Test
    void helpRunsInTheImageAsItsUserWithTheClassDataArchiveOfItsOwnJvm() throws Exception {
        // -Xshare:on makes an archive that cannot be mapped an error instead of a silent slow start
        String out = inImage("-Xshare:on -Xlog:cds=info", "--help");
        assertThat(out).contains("Usage: rebalance").contains("Mapped dynamic region");
        assertThat(out)
                .as("no logback error (a host name that is an address broke the pattern)")
                .doesNotContain("|-ERROR");
    }

    @Test
    void checkRunsInTheImageAgainstTheServices() throws Exception {
        SharedServices services = SharedServices.get();
        String table = SharedServices.unique("image_check");
        try (Connection c = services.postgres()) {
            RoomEventsGenerator.create(c, table, 200, Instant.parse("2024-10-20T00:00:00Z"), 2, 3);
        }
        try {
            String out = inImage(
                    "",
                    "check",
                    "--set",
                    "source.jdbcUrl=" + services.jdbcUrl,
                    "--set",
                    "source.table=" + table,
                    "--set",
                    "target.table=" + table,
                    "--set",
                    "target.endpoint=" + services.dynamo.endpoint(),
                    "--set",
                    "redis.url=" + services.redisUrl,
                    "--set",
                    "redis.prefix=" + table + ":");
            assertThat(out).contains("rows     200: 200 to write, 0 refused").contains("nothing blocks the migration");
        } finally {
            try (Connection c = services.postgres();
                    Statement st = c.createStatement()) {
                st.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }

    /**
     * Runs the image's entrypoint with {@code args} as its user, in the unpacked filesystem, with its environment and
     * {@code REBALANCE_JAVA_OPTS=javaOpts}. @return stdout and stderr; the exit code must be 0
     */
    private static String inImage(String javaOpts, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                "unshare",
                "-m",
                "sh",
                "-c",
                "mount -t proc proc \"$0/proc\" && exec chroot --userspec="
                        + config.at("/config/User").asText() + " \"$0\" env -i \"$@\"",
                rootfs.toString()));
        for (JsonNode env : config.at("/config/Env")) cmd.add(env.asText());
        cmd.add("HOSTNAME=image-test");
        cmd.add("REBALANCE_JAVA_OPTS=" + javaOpts);
        for (JsonNode e : config.at("/config/Entrypoint")) cmd.add(e.asText());
        cmd.addAll(List.of(args));
        return run(cmd);
    }

    private static String run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(String.join(" ", cmd) + "\n" + out).isZero();
        return out;
    }

    private static Path blob(Path oci, String digest) {
        return oci.resolve("blobs").resolve("sha256").resolve(digest.substring("sha256:".length()));
    }
}
