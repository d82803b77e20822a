package io.rebalance.cli;

import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;

/**
 * logback's {@link JsonEncoder}, one object a line, with what every line of ours carries beside its fields: the time
 * as ISO-8601 with its zone ({@code time}), the host and the pid. The context object is left out: it only repeated
 * them.
 */
public final class JsonLogEncoder extends JsonEncoder {
    private static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX");
    private final ZoneId zone = ZoneId.systemDefault();
    private String host = "";
    private final long pid = ProcessHandle.current().pid();

    public JsonLogEncoder() {
        setWithContext(false);
        setWithMessage(false); // the pattern with {} holes: the formatted message below says it whole
        setWithArguments(false);
        setWithFormattedMessage(true);
        setWithSequenceNumber(false);
        setWithNanoseconds(false); // time and timestamp say when
    }

    @Override
    public void start() {
        String h = getContext() == null ? null : getContext().getProperty("HOST");
        host = h == null ? "" : h.replace("\\", "\\\\").replace("\"", "\\\"");
        super.start();
    }

    @Override
    protected void appendCustomFields(StringBuilder sb, ILoggingEvent event) {
        sb.append(",\"time\":\"")
                .append(ISO.format(OffsetDateTime.ofInstant(Instant.ofEpochMilli(event.getTimeStamp()), zone)))
                .append("\",\"host\":\"")
                .append(host)
                .append("\",\"pid\":")
                .append(pid);
    }
}
