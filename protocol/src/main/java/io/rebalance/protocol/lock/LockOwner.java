package io.rebalance.protocol.lock;

import io.rebalance.protocol.ProcessId;

/** Owner ids written into leases: {@code host:pid:random/thread}, so a person reading status can find the holder. */
public final class LockOwner {
    private static final String PROCESS = ProcessId.create();

    private LockOwner() {}

    /** This process, the same id for every lease it takes. */
    public static String process() {
        return PROCESS;
    }

    /** This process and the calling thread. */
    public static String currentThread() {
        return PROCESS + "/" + Thread.currentThread().getName();
    }
}
