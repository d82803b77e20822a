package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.status.Status;
import org.junit.jupiter.api.Test;

/** A host name logback could only resolve to a scoped address no longer breaks the log line's pattern. */
class HostPropertyTest {
    @Test
    void aScopedAddressIsMadePlainAndThePatternStaysValid() {
        String scoped = "fd00:0:0:0:0:0:0:2%eth0"; // what logback finds in a chroot without the name in /etc/hosts
        assertThat(HostProperty.plain(scoped)).isEqualTo("fd00:0:0:0:0:0:0:2_eth0");
        assertThat(HostProperty.plain("pod-7.rebalance_copy")).isEqualTo("pod-7.rebalance_copy");

        for (String host : new String[] {scoped, HostProperty.plain(scoped)}) {
            LoggerContext context = new LoggerContext();
            PatternLayout layout = new PatternLayout();
            layout.setContext(context);
            layout.setPattern("%level " + host + " %msg");
            layout.start();
            boolean errors = context.getStatusManager().getCopyOfStatusList().stream()
                    .anyMatch(s -> s.getLevel() == Status.ERROR);
            LoggingEvent event = new LoggingEvent();
            event.setLevel(ch.qos.logback.classic.Level.INFO);
            event.setMessage("m");
            assertThat(errors).as(host).isEqualTo(host.contains("%"));
            if (!errors) assertThat(layout.doLayout(event)).isEqualTo("INFO " + host + " m");
        }
    }
}
