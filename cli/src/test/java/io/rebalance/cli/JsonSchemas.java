package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** The schemas docs/schemas/ publishes for each command's --json, which the tests hold the outputs to. */
final class JsonSchemas {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonSchemaFactory FACTORY = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012);

    private JsonSchemas() {}

    /** Fails unless {@code json} is valid against docs/schemas/{@code command}.schema.json. */
    static void assertValid(String command, String json) {
        Path file = Path.of(System.getProperty("user.dir"))
                .resolveSibling("docs")
                .resolve("schemas")
                .resolve(command + ".schema.json");
        try (InputStream in = Files.newInputStream(file)) {
            JsonSchema schema = FACTORY.getSchema(in);
            assertThat(schema.validate(JSON.readTree(json)))
                    .as("%s --json against %s:%n%s", command, file.getFileName(), json)
                    .isEmpty();
        } catch (java.io.IOException e) {
            throw new AssertionError("cannot read " + file + " or the output", e);
        }
    }
}
