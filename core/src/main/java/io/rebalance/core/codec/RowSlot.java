package io.rebalance.core.codec;

import io.rebalance.core.slot.Slot;

/**
 * The hourly slot a row belongs to, computed from the row itself (from the time inside its id, or from its time
 * column), so that a row copied by the mover and the same row applied from the change stream carry the same slot.
 */
@FunctionalInterface
public interface RowSlot {
    /** @throws ValueRefusedException when the row has no hour (a NULL or infinite time column) */
    Slot of(SourceRow row);
}
