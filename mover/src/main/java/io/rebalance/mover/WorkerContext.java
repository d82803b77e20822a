package io.rebalance.mover;

import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.dynamo.BatchWriter;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceSession;

/** What every worker of a process shares: the Redis state, the source, the codec and the writer. */
record WorkerContext(
        SlotStore slots,
        RunState runState,
        RowCodec codec,
        PageReader pageReader,
        SourceSession source,
        BatchWriter writer,
        Retrier retrier,
        PhaseHooks hooks,
        int pageSize,
        java.time.Duration leaseTtl,
        MoverCounters counters) {}
