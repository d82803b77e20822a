package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class StreamWarmUpTest {
    /**
     * The warm-up finds the stream's classes in the jars they come from: on this classpath a jar each (in the shaded jar
     * one), so a change of layout that left it loading nothing (and standbys cold again) fails here.
     */
    @Test
    void loadsTheStreamsClassesFromTheJarsTheyComeFrom() {
        assertThat(StreamWarmUp.run()).isGreaterThan(1_500);
    }
}
