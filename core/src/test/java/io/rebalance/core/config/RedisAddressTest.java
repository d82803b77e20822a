package io.rebalance.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code redis.url} with {@code redis.mode} and the keys beside it: what each topology accepts and refuses. */
class RedisAddressTest {
    private static MigrationConfig.Redis redis(String url, String mode, String master, String password) {
        return new MigrationConfig.Redis(
                url, "mgre:", RedisMode.valueOf(mode.toUpperCase(Locale.ROOT)), master, password, "", false);
    }

    @Test
    void oneHostWithCredentialsDatabaseAndTls() {
        RedisAddress a = RedisAddress.of(redis("rediss://app:pw@cache.example:6380/2", "standalone", "", ""));
        assertThat(a.tls()).isTrue();
        assertThat(a.user()).isEqualTo("app");
        assertThat(a.password()).isEqualTo("pw");
        assertThat(a.hosts()).containsExactly(new RedisAddress.Host("cache.example", 6380));
        assertThat(a.database()).isEqualTo(2);
        assertThat(a.toString()).doesNotContain("pw");
    }

    @Test
    void passwordsWithReservedCharactersParseAndNeverShow() {
        RedisAddress a = RedisAddress.of(redis("redis://app:p@s/s,w@h1:7000,h2:7001/0", "cluster", "", ""));
        assertThat(a.password()).isEqualTo("p@s/s,w");
        assertThat(a.hosts()).containsExactly(new RedisAddress.Host("h1", 7000), new RedisAddress.Host("h2", 7001));
        assertThat(RedisAddress.of(redis("redis://app:p%40ss%2Fx@h:1", "standalone", "", ""))
                        .password())
                .isEqualTo("p@ss/x");
        assertThat(Redact.url("redis://app:p@s/s,w@h1:7000,h2:7001/0")).isEqualTo("redis://***@h1:7000,h2:7001/0");
        assertThat(RedisAddress.problem(redis("redis://app:p@s/s@h:1/x", "standalone", "", "")))
                .hasValueSatisfying(p -> assertThat(p).doesNotContain("p@s").doesNotContain("s/s"));
        assertThat(RedisAddress.problem(redis("redis://::1", "standalone", "", "")))
                .hasValueSatisfying(p -> assertThat(p).contains("IPv6 host in brackets"));
    }

    @Test
    void thePasswordInTheUrlWinsOverRedisPassword() {
        assertThat(RedisAddress.of(redis("redis://:inurl@h:1", "standalone", "", "fromenv"))
                        .password())
                .isEqualTo("inurl");
        assertThat(RedisAddress.of(redis("redis://h:1", "standalone", "", "fromenv"))
                        .password())
                .isEqualTo("fromenv");
        RedisAddress user = RedisAddress.of(redis("redis://app:@h:1", "standalone", "", "fromenv"));
        assertThat(user.user()).isEqualTo("app");
        assertThat(user.password()).isEqualTo("fromenv");
        assertThat(RedisAddress.of(redis("redis://alone@h:1", "standalone", "", ""))
                        .password())
                .isEqualTo("alone");
    }

    @Test
    void clusterSeedsAndSentinelsWithTheirDefaultPorts() {
        RedisAddress c = RedisAddress.of(redis("redis://a:7000,b:7001,[::1]:7002,c", "cluster", "", ""));
        assertThat(c.hosts())
                .containsExactly(
                        new RedisAddress.Host("a", 7000),
                        new RedisAddress.Host("b", 7001),
                        new RedisAddress.Host("::1", 7002),
                        new RedisAddress.Host("c", 6379));
        RedisAddress s = RedisAddress.of(redis("redis://s1,s2:26380", "sentinel", "mymaster", ""));
        assertThat(s.hosts()).containsExactly(new RedisAddress.Host("s1", 26379), new RedisAddress.Host("s2", 26380));
        assertThat(s.sentinelMaster()).isEqualTo("mymaster");
    }

    @Test
    void eachMismatchNamesTheKeyAndTheWayOut() {
        assertThat(RedisAddress.problem(redis("redis://a:1,b:2", "standalone", "", "")))
                .hasValueSatisfying(p -> assertThat(p).contains("lists 2 hosts").contains("redis.mode"));
        assertThat(RedisAddress.problem(redis("redis://a:1/3", "cluster", "", "")))
                .hasValueSatisfying(p -> assertThat(p).contains("database 3").contains("only database 0"));
        assertThat(RedisAddress.problem(redis("redis://a:1", "sentinel", "", "")))
                .hasValueSatisfying(p -> assertThat(p).contains("redis.sentinelMaster is empty"));
        assertThat(RedisAddress.problem(redis("redis://a:1", "standalone", "mymaster", "")))
                .hasValueSatisfying(p -> assertThat(p).contains("redis.sentinelMaster='mymaster'"));
        assertThat(RedisAddress.problem(redis("http://u:secret@a:1", "standalone", "", "")))
                .hasValueSatisfying(p -> assertThat(p).contains("redis://").doesNotContain("secret"));
        assertThat(RedisAddress.problem(redis("redis://a:99999", "standalone", "", "")))
                .hasValueSatisfying(p -> assertThat(p).contains("port"));
        assertThat(RedisAddress.problem(redis("redis://a:1,", "cluster", "", "")))
                .hasValueSatisfying(p -> assertThat(p).contains("a host"));
    }

    @Test
    void theValidatorReportsItWithTheConfigurationsExitCode() {
        Map<String, String> set = new HashMap<>();
        set.put("redis.url", "redis://a:1,b:2");
        MigrationConfig c = new ConfigLoader(Map.of()).load(null, set);
        assertThatThrownBy(() -> ConfigValidator.validate(c))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIG_INVALID))
                .hasMessageContaining("redis.url='redis://a:1,b:2' lists 2 hosts");
    }
}
