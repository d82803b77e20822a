package io.rebalance.core.redis;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RedisFitnessTest {
    @Test
    void readsPersistenceEvictionAndReplicasFromInfo() {
        String info = "# Persistence\r\nloading:0\r\naof_enabled:0\r\n# Memory\r\nmaxmemory:1048576\r\n"
                + "maxmemory_policy:allkeys-lru\r\n# Replication\r\nrole:master\r\nconnected_slaves:2\r\n";
        RedisFitness f = RedisFitness.of(RedisFitness.parse(info));
        assertThat(f).isEqualTo(new RedisFitness(false, "allkeys-lru", 2));
        assertThat(f.evictionProblem())
                .hasValueSatisfying(p ->
                        assertThat(p).contains("maxmemory-policy allkeys-lru").contains("noeviction"));

        RedisFitness fit = RedisFitness.of(RedisFitness.parse("aof_enabled:1\nmaxmemory_policy:noeviction\n"));
        assertThat(fit.aof()).isTrue();
        assertThat(fit.evictionProblem()).isEmpty();
        assertThat(fit.replicas()).isZero();
    }
}
