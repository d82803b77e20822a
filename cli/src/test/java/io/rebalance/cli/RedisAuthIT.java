package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.testkit.PrivateRedis;
import io.rebalance.testkit.SharedServices;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A Redis that requires a password (`requirepass`, as managed Redis' AUTH token): given as {@code redis.password}
 * beside a URL without one (a Secret's variable beside a ConfigMap's URL), or in the URL, which wins. Without it, or
 * with a wrong one, the command exits REDIS_UNREACHABLE naming Redis' answer; the password appears in no output.
 */
class RedisAuthIT {
    private static final String PASSWORD = "s3cret-Pw";

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("auth");
    private final String prefix = SharedServices.unique("au") + ":";

    @Test
    void thePasswordFromRedisPasswordOrTheUrlAndNeverInTheOutput() throws Exception {
        try (PrivateRedis redis = PrivateRedis.start("--requirepass", PASSWORD)) {
            Map<String, String> settings = TailedTable.settings(services, table, prefix);
            String hostPort = redis.url.substring("redis://".length());

            CliRun none = status(settings, "redis://" + hostPort, null);
            assertThat(none.exitCode()).isEqualTo(ErrorCode.REDIS_UNREACHABLE.exitCode());
            assertThat(none.err()).contains("NOAUTH");

            CliRun fromKey = status(settings, "redis://" + hostPort, PASSWORD);
            assertThat(fromKey.exitCode()).as(fromKey.err()).isZero();
            assertThat(fromKey.out()).contains("run " + prefix.substring(0, prefix.length() - 1));

            CliRun urlWins = status(settings, "redis://:" + PASSWORD + "@" + hostPort, "wrong");
            assertThat(urlWins.exitCode()).as(urlWins.err()).isZero();

            CliRun wrong = status(settings, "redis://:wrong-one@" + hostPort, null);
            assertThat(wrong.exitCode()).isEqualTo(ErrorCode.REDIS_UNREACHABLE.exitCode());
            assertThat(wrong.err()).contains("WRONGPASS").contains("redis://***@" + hostPort);

            CliRun config = CliRun.of(flags(settings, "redis://" + hostPort, PASSWORD), "config");
            for (CliRun r : List.of(none, fromKey, urlWins, wrong, config)) {
                assertThat(r.out() + r.err()).doesNotContain(PASSWORD).doesNotContain("wrong-one");
            }
        }
    }

    private static CliRun status(Map<String, String> settings, String url, String password) {
        return CliRun.of(flags(settings, url, password), "status");
    }

    private static List<String> flags(Map<String, String> settings, String url, String password) {
        List<String> args = new ArrayList<>(TailedTable.args(settings));
        args.addAll(List.of("--set", "redis.url=" + url));
        if (password != null) args.addAll(List.of("--set", "redis.password=" + password));
        return args;
    }
}
