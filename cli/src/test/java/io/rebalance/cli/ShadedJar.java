package io.rebalance.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line that starts target/rebalance.jar as bin/rebalance does: ParallelGC and the build's class data
 * sharing archive, which halves each start (a child process costs the suite about 0.3 s and 0.5 s of CPU less).
 */
final class ShadedJar {
    private ShadedJar() {}

    /** {@code java -XX:+UseParallelGC [archive] -Xmx<heap> -jar target/rebalance.jar}; the caller adds the command. */
    static List<String> java(String heap) {
        List<String> cmd = new ArrayList<>(
                List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:+UseParallelGC"));
        Path archive = Path.of("target/rebalance.jsa");
        if (Files.exists(archive)) { // the JVM ignores it, silently, if it does not match; ArtifactIT checks it does
            cmd.addAll(List.of(
                    "-XX:SharedArchiveFile=" + archive.toAbsolutePath(), "-Xlog:cds=off", "-Xlog:cds+dynamic=off"));
        }
        cmd.addAll(List.of("-Xmx" + heap, "-jar", "target/rebalance.jar"));
        return cmd;
    }
}
