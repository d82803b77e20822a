package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * House rules read from the sources, where ArchUnit does not look: small files, and Redis keys joined from the prefix
 * only in the keyspace. Runs over every module's main sources, from the repository root (this module's parent).
 */
class SourceRulesTest {
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
    static final int MAX_LINES = 400;

    /** A key joined from a prefix: {@code prefix + "run:"} or {@code prefix() + ":x"}, a literal without spaces. */
    static final Pattern KEY_JOIN = Pattern.compile("\\bprefix(\\(\\))?\\s*\\+\\s*\"[^\"\\s]*\"");

    @Test
    void noMainFileIsOverFourHundredLinesOutsideBench() {
        List<String> over = new ArrayList<>();
        for (Path f : mainSources()) {
            if (f.startsWith(ROOT.resolve("bench"))) continue; // benchmarks hold their baselines side by side
            long lines = lines(f).size();
            if (lines > MAX_LINES) over.add(ROOT.relativize(f) + " (" + lines + " lines)");
        }
        assertThat(over)
                .as("main files over " + MAX_LINES + " lines: split them by responsibility")
                .isEmpty();
    }

    @Test
    void onlyTheKeyspaceJoinsKeysFromThePrefix() {
        List<String> joins = new ArrayList<>();
        for (Path f : mainSources()) {
            if (f.toString().contains("keyspace")) continue;
            if (f.startsWith(ROOT.resolve("testkit"))) continue; // the tests' kit: its names are no Redis keys
            List<String> lines = lines(f);
            for (int i = 0; i < lines.size(); i++) {
                if (KEY_JOIN.matcher(lines.get(i)).find()) joins.add(ROOT.relativize(f) + ":" + (i + 1));
            }
        }
        assertThat(joins).as("keys joined from the prefix outside the keyspace").isEmpty();
    }

    @Test
    void theKeyJoinPatternFindsWhatItLooksFor() {
        assertThat(KEY_JOIN.matcher("return prefix + \"run:\";").find()).isTrue();
        assertThat(KEY_JOIN.matcher("k = config.prefix() + \":x\" + id;").find())
                .isTrue();
        assertThat(KEY_JOIN.matcher("\"under prefix \" + prefix + \" (\" + n").find())
                .isFalse();
    }

    private static List<Path> mainSources() {
        try (Stream<Path> all = Files.walk(ROOT)) {
            List<Path> files = all.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> p.toString().contains("/src/main/java/"))
                    .filter(p -> !p.toString().contains("/target/"))
                    .toList();
            assertThat(files).as("main sources under " + ROOT).hasSizeGreaterThan(100);
            return files;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<String> lines(Path f) {
        try {
            return Files.readAllLines(f);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
