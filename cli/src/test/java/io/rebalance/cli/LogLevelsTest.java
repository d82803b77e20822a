package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import java.net.URL;
import org.junit.jupiter.api.Test;

/**
 * The production jar's logback.xml as docs/operations.md describes it: {@code REBALANCE_LOG_LEVEL} sets the level of
 * every logger rebalance writes to (the copy's progress lines too), and no library's, whose DEBUG output would carry
 * rows and configuration. Each case configures a context of its own from the file, the variable given as a property
 * (logback reads a context property before the environment).
 */
class LogLevelsTest {
    @Test
    void theLevelVariableSetsEveryLoggerOfRebalance() throws Exception {
        LoggerContext warn = configured("WARN");
        assertThat(warn.getLogger("io.rebalance.mover.SlotWorker").isInfoEnabled())
                .isFalse();
        assertThat(warn.getLogger("rebalance.progress").isInfoEnabled())
                .as("the copy's progress lines")
                .isFalse();
        assertThat(warn.getLogger("rebalance.progress").isWarnEnabled()).isTrue();

        LoggerContext unset = configured(null);
        assertThat(unset.getLogger("io.rebalance.cdc.Tail").isInfoEnabled()).isTrue();
        assertThat(unset.getLogger("rebalance.progress").isInfoEnabled()).isTrue();
        assertThat(unset.getLogger("rebalance.progress").isDebugEnabled()).isFalse();
    }

    @Test
    void noLibraryIsLoweredByIt() throws Exception {
        LoggerContext debug = configured("DEBUG");
        assertThat(debug.getLogger("rebalance.progress").isDebugEnabled()).isTrue();
        assertThat(debug.getLogger("io.rebalance.ops.Connections").isDebugEnabled())
                .isTrue();
        for (String library : new String[] {"software.amazon.awssdk.request", "org.postgresql.Driver", "io.debezium"}) {
            assertThat(debug.getLogger(library).isInfoEnabled()).as(library).isFalse();
        }
    }

    private static LoggerContext configured(String level) throws Exception {
        URL file = LogLevelsTest.class.getResource("/logback.xml");
        assertThat(file).as("the production logback.xml on the classpath").isNotNull();
        assertThat(file.getPath()).as("cli's own, not a test one").contains("/cli/target/classes/");
        LoggerContext ctx = new LoggerContext();
        if (level != null) ctx.putProperty("REBALANCE_LOG_LEVEL", level);
        JoranConfigurator joran = new JoranConfigurator();
        joran.setContext(ctx);
        joran.doConfigure(file);
        return ctx;
    }
}
