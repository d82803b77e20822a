package io.rebalance.cli;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;
import io.rebalance.core.config.MigrationConfig;
import org.slf4j.LoggerFactory;

/**
 * Switches the log lines on stderr between logback.xml's text ({@code ERR}) and one JSON object a line
 * ({@code log.format: json}), once the configuration is loaded. Either way back, so the tests that run commands one
 * after another in one JVM get each command's choice.
 */
final class LogFormat {
    private static final String JSON = "JSON";
    private static final String TEXT = "ERR";

    /** The text appender while JSON replaces it. */
    private static Appender<ILoggingEvent> detached;

    private LogFormat() {}

    static synchronized void apply(MigrationConfig.Log log) {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) return;
        Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        Appender<ILoggingEvent> text = root.getAppender(TEXT);
        Appender<ILoggingEvent> json = root.getAppender(JSON);
        if (log.json() && json == null) {
            ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
            appender.setContext(ctx);
            appender.setName(JSON);
            appender.setTarget("System.err"); // stdout carries only what a command prints
            JsonLogEncoder encoder = new JsonLogEncoder();
            encoder.setContext(ctx);
            encoder.start();
            appender.setEncoder(encoder);
            appender.start();
            root.addAppender(appender);
            if (text != null) root.detachAppender(text); // kept by name: switching back re-attaches it
            detached = text;
        } else if (!log.json() && json != null) {
            root.detachAppender(json);
            json.stop();
            if (detached != null && root.getAppender(TEXT) == null) root.addAppender(detached);
        }
    }
}
