package io.rebalance.core.config;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.deser.std.StdScalarDeserializer;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import java.io.IOException;
import java.time.Duration;

/**
 * How the configuration's typed values are read and written: a {@link Duration} as the human form {@link Durations}
 * parses ({@code 20s}), never ISO-8601's {@code PT20S}. The choices are enums whose {@code @JsonValue} is their text.
 */
final class ConfigTypes {
    private ConfigTypes() {}

    /** {@code mapper} able to read and write the configuration's types. */
    static ObjectMapper on(ObjectMapper mapper) {
        SimpleModule module = new SimpleModule("rebalance-config");
        module.addDeserializer(Duration.class, new HumanDuration());
        module.addSerializer(Duration.class, new StdSerializer<>(Duration.class) {
            @Override
            public void serialize(Duration value, JsonGenerator gen, SerializerProvider provider) throws IOException {
                gen.writeString(Durations.format(value));
            }
        });
        return mapper.registerModule(module);
    }

    /** A duration written like {@code 500ms}; anything else fails as a value of the wrong form, which names the key. */
    private static final class HumanDuration extends StdScalarDeserializer<Duration> {
        HumanDuration() {
            super(Duration.class);
        }

        @Override
        public Duration deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            String text = p.getValueAsString();
            try {
                return Durations.parse(text);
            } catch (IllegalArgumentException e) {
                throw InvalidFormatException.from(p, e.getMessage(), text, Duration.class);
            }
        }
    }
}
