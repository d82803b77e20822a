package io.rebalance.mover;

import io.rebalance.core.slot.Slot;

/** Called by workers at each {@link Phase}; may block (to pause a worker) or throw (to fail a step). */
@FunctionalInterface
public interface PhaseHooks {
    PhaseHooks NONE = (phase, slot, owner) -> {};

    void at(Phase phase, Slot slot, String owner) throws InterruptedException;
}
