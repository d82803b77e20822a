package io.rebalance.protocol;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.util.UUID;

/** The id a process writes into leases and status: {@code host:pid:random}, so a person can find the process. */
public final class ProcessId {
    private ProcessId() {}

    /** A new id; the random part tells apart two processes that reuse a pid on one host. */
    public static String create() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = "unknown";
        }
        return host + ":" + ManagementFactory.getRuntimeMXBean().getPid() + ":"
                + UUID.randomUUID().toString().substring(0, 4);
    }
}
