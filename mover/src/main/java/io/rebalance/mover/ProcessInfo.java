package io.rebalance.mover;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.slot.Slot;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.Map;

/** What a copy process tells the others, with each heartbeat, about itself: `status` lists it per process. */
final class ProcessInfo {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ProcessInfo() {}

    /**
     * @param busy the slots this process holds, each with its lease's owner
     * @param rateLimit the limit this process applies, so `status` shows that a new one took effect
     */
    static String json(int workers, Map<Slot, String> busy, long rows, boolean keeper, long rateLimit)
            throws UnknownHostException, JsonProcessingException {
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("host", InetAddress.getLocalHost().getHostName());
        info.put("pid", ProcessHandle.current().pid());
        info.put("workers", workers);
        info.put(
                "slots",
                busy.entrySet().stream()
                        .map(e -> e.getKey().name() + " " + e.getValue())
                        .sorted()
                        .toList());
        info.put("rows", rows);
        info.put("keeper", keeper);
        info.put("rateLimit", rateLimit);
        return JSON.writeValueAsString(info);
    }
}
