package io.rebalance.cdc;

import io.debezium.connector.postgresql.PostgresConnector;
import io.debezium.embedded.async.AsyncEmbeddedEngine;
import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.source.SourceRecord;
import org.postgresql.Driver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads and links the change stream's classes (Debezium, Kafka Connect's API, the Postgres driver) before a tail
 * asks for the lease. Starting the stream in a fresh JVM loads about 1,900 classes, and that, not Postgres, is most of
 * the second a standby needs to stream after a hand-over; done at start-up, a standby streams in a few hundred
 * milliseconds once the lease is free. No class is initialized: no static code runs, nothing connects.
 */
final class StreamWarmUp {
    private static final Logger log = LoggerFactory.getLogger(StreamWarmUp.class);

    /** The packages loaded, and a class of the jar each comes from (one shaded jar, or a jar each on a classpath). */
    private static final List<Class<?>> ANCHORS = List.of(
            PostgresConnector.class,
            io.debezium.config.Configuration.class,
            io.debezium.pipeline.ChangeEventSourceCoordinator.class,
            io.debezium.util.Clock.class,
            io.debezium.engine.DebeziumEngine.class,
            AsyncEmbeddedEngine.class,
            SourceRecord.class,
            WorkerConfig.class,
            JsonConverter.class,
            Driver.class);

    private static final List<String> PACKAGES = List.of(
            "io/debezium/connector/postgresql/",
            "io/debezium/embedded/",
            "io/debezium/engine/",
            "io/debezium/pipeline/",
            "io/debezium/relational/",
            "io/debezium/config/",
            "io/debezium/jdbc/",
            "io/debezium/util/",
            "io/debezium/schema/",
            "io/debezium/snapshot/",
            "io/debezium/heartbeat/",
            "io/debezium/connector/common/",
            "org/apache/kafka/connect/",
            "org/postgresql/");

    private StreamWarmUp() {}

    /** @return how many classes were loaded and linked */
    static int run() {
        long start = System.nanoTime();
        ClassLoader loader = StreamWarmUp.class.getClassLoader();
        int loaded = 0;
        for (String name : classNames()) {
            try {
                Class.forName(name, false, loader).getDeclaredMethods(); // listing its methods links (verifies) it
                loaded++;
            } catch (ClassNotFoundException | LinkageError | SecurityException optional) {
                // a class for a feature not on the classpath (another connector's, a missing optional jar): never used
            }
        }
        log.info("loaded {} classes of the change stream in {} ms", loaded, (System.nanoTime() - start) / 1_000_000);
        return loaded;
    }

    private static Set<String> classNames() {
        Set<String> names = new LinkedHashSet<>();
        for (File jar : jars()) {
            try (JarFile file = new JarFile(jar)) {
                for (Enumeration<JarEntry> e = file.entries(); e.hasMoreElements(); ) {
                    String entry = e.nextElement().getName();
                    if (entry.endsWith(".class")
                            && !entry.contains("-")
                            && PACKAGES.stream().anyMatch(entry::startsWith))
                        names.add(entry.substring(0, entry.length() - ".class".length())
                                .replace('/', '.'));
                }
            } catch (IOException unreadable) {
                log.debug("cannot list {}: {}", jar, unreadable.toString());
            }
        }
        return names;
    }

    private static List<File> jars() {
        List<File> jars = new ArrayList<>();
        for (Class<?> anchor : ANCHORS) {
            CodeSource source = anchor.getProtectionDomain().getCodeSource();
            if (source == null) continue;
            try {
                File f = new File(source.getLocation().toURI());
                if (f.isFile() && !jars.contains(f)) jars.add(f);
            } catch (URISyntaxException | IllegalArgumentException notAFile) {
                // a nested or remote location: nothing to warm up from
            }
        }
        return jars;
    }
}
