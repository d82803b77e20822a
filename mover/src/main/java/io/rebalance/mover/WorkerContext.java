package io.rebalance.mover;

import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.copy.ItemWriter;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceSession;
import java.time.Duration;

/**
 * What every worker of a process shares: the coordinator's slot store and run state, the source, the codec, the
 * writer (through the refresher, which isolates items DynamoDB refuses) and the refused list.
 */
record WorkerContext(
        SlotStore slots,
        RunState runState,
        RowCodec codec,
        PageReader pageReader,
        SourceSession source,
        ItemWriter refresher,
        RefusedRows refused,
        Retrier retrier,
        PhaseHooks hooks,
        int pageSize,
        Duration leaseTtl,
        MoverCounters counters) {}
