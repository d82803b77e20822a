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
 * House rules read from the sources, where ArchUnit does not look: small files, Redis keys joined from the prefix only
 * in the keyspace, and every main file named in its module's README (the map of files to roles a newcomer reads).
 * Runs over every module's main sources, from the repository root (this module's parent).
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

    @Test
    void everyMainFileIsNamedInItsModulesReadme() {
        List<String> unnamed = new ArrayList<>();
        for (Path f : mainSources()) {
            Path module = ROOT.resolve(ROOT.relativize(f).getName(0));
            Path readme = module.resolve("README.md");
            String name = f.getFileName().toString();
            if (!Files.exists(readme) || !namedIn(String.join("\n", lines(readme)), name))
                unnamed.add(ROOT.relativize(f).toString());
        }
        assertThat(unnamed)
                .as("main files their module's README.md does not name: give each a row saying its role")
                .isEmpty();
    }

    @Test
    void aFileIsNamedOnlyByItsWholeName() {
        assertThat(namedIn("| `Tail.java` | the command |", "Tail.java")).isTrue();
        assertThat(namedIn("`Tail` keeps the lease", "Tail.java")).isTrue();
        assertThat(namedIn("| `TailLease.java` | the lease |", "Tail.java")).isFalse();
        assertThat(namedIn("the tail's lease", "TailLease.java")).isFalse();
    }

    /** Whether {@code readme} names the file {@code name} ({@code X.java}) or its class {@code X} as a whole word. */
    static boolean namedIn(String readme, String name) {
        String simple = name.substring(0, name.length() - ".java".length());
        return Pattern.compile("(?<![\\w.])" + Pattern.quote(simple) + "(\\.java)?(?![\\w])")
                .matcher(readme)
                .find();
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
