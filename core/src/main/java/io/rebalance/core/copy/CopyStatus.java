package io.rebalance.core.copy;

import io.rebalance.protocol.HashFields;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The copy's progress as the active keeper publishes it ({@code <prefix>progress}), read by {@code rebalance status}
 * and the copy's progress line: the one record that knows the hash's fields.
 *
 * @param known false when no keeper has published yet (every other field is then its zero); the keeper publishes
 *     with true
 * @param etaSeconds the estimate to finish, -1 when none can be given
 * @param watermark the compaction watermark's slot name, "" before the first
 * @param keeper the process id of the keeper that published it
 */
public record CopyStatus(
        boolean known,
        String status,
        long rows,
        long rate,
        long etaSeconds,
        long slotsTotal,
        long slotsFinished,
        long slotsCompacted,
        String watermark,
        String keeper,
        long updatedMs) {

    /** The status as the hash holds it; an empty hash is a status not {@link #known}. */
    public static CopyStatus of(Map<String, String> h) {
        return new CopyStatus(
                !h.isEmpty(),
                h.getOrDefault("status", ""),
                HashFields.number(h, "rows", 0),
                HashFields.number(h, "rate", 0),
                HashFields.number(h, "eta_s", -1),
                HashFields.number(h, "slots_total", 0),
                HashFields.number(h, "slots_finished", 0),
                HashFields.number(h, "slots_compacted", 0),
                h.getOrDefault("watermark", ""),
                h.getOrDefault("keeper", ""),
                HashFields.number(h, "updated_ms", 0));
    }

    /** The hash's fields. */
    public Map<String, String> fields() {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("status", status);
        p.put("rows", Long.toString(rows));
        p.put("rate", Long.toString(rate));
        p.put("eta_s", Long.toString(etaSeconds));
        p.put("slots_total", Long.toString(slotsTotal));
        p.put("slots_finished", Long.toString(slotsFinished));
        p.put("slots_compacted", Long.toString(slotsCompacted));
        p.put("watermark", watermark);
        p.put("keeper", keeper);
        p.put("updated_ms", Long.toString(updatedMs));
        return p;
    }
}
