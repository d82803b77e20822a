package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.rebalance.core.retry.Backoff;
import io.rebalance.core.retry.Retrier;
import io.rebalance.protocol.ErrorCode;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.sql.DriverManager;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A service that stops answering mid-command is reported as that service, with its exit code, not as a crash. */
class FailureReportTest {
    @Test
    void postgresRefusingAConnectionAfterRetriesIsExitElevenNotAnInternalError() {
        // the driver's own failure, from a port nothing listens on, as the retrier gives it up
        Retrier quick = new Retrier(new Backoff(Duration.ofMillis(1), Duration.ofMillis(2), 2, Duration.ofSeconds(5)));
        Throwable lost = catchThrowable(() -> quick.call(
                "save progress", () -> DriverManager.getConnection("jdbc:postgresql://127.0.0.1:1/postgres")));
        StringWriter err = new StringWriter();

        int code = RebalanceCommand.report((Exception) lost, new PrintWriter(err, true), false);

        assertThat(code).isEqualTo(ErrorCode.SOURCE_UNREACHABLE.exitCode());
        assertThat(err.toString())
                .contains("Postgres stopped answering")
                .contains("coordinator.jdbcUrl")
                .doesNotContain("unexpected failure");
    }
}
