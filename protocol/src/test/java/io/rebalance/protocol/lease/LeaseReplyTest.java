package io.rebalance.protocol.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one reply shape, as Jedis hands a script's table over: Longs, Strings, and a trailing detail or none. */
class LeaseReplyTest {
    @Test
    void aGrantCarriesTheCallersMemberItsTokenAndTheDetail() {
        LeaseReply r = LeaseReply.of(List.of(1L, "host:1:ab/main#42", 5_000L, 1_729_382_400_000L));
        assertThat(r.granted()).isTrue();
        assertThat(r.owner()).isEqualTo("host:1:ab/main");
        assertThat(r.token()).isEqualTo(42);
        assertThat(r.remainingMs()).isEqualTo(5_000);
        assertThat(r.detailNumber()).isEqualTo(1_729_382_400_000L);
    }

    @Test
    void aRefusalNamesTheHolderOrNobody() {
        LeaseReply held = LeaseReply.of(List.of(0L, "cutover-host#7", 900L, "exclusive"));
        assertThat(held.granted()).isFalse();
        assertThat(held.owner()).isEqualTo("cutover-host");
        assertThat(held.detailText()).isEqualTo("exclusive");
        LeaseReply lapsed = LeaseReply.of(Arrays.asList(0L, "", -2L));
        assertThat(lapsed.member()).isEmpty();
        assertThat(lapsed.token()).isZero();
        assertThat(lapsed.detail()).isNull();
    }

    @Test
    void anExclusiveRequestWaitingForSharedHoldersIsPending() {
        LeaseReply r = LeaseReply.of(List.of(2L, "", 1_200L, 3L));
        assertThat(r.pending()).isTrue();
        assertThat(r.granted()).isFalse();
        assertThat(r.detailNumber()).isEqualTo(3);
    }
}
