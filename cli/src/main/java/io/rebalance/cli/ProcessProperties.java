package io.rebalance.cli;

import ch.qos.logback.core.PropertyDefinerBase;

/** The {@code PID} property of logback.xml: this process's id, in every log line with the host's name. */
public final class ProcessProperties extends PropertyDefinerBase {
    @Override
    public String getPropertyValue() {
        return Long.toString(ProcessHandle.current().pid());
    }
}
