package io.rebalance.cdc;

import io.rebalance.protocol.handoff.ForwardHold;
import java.util.ArrayList;
import java.util.List;

/**
 * The holds one batch obeys, a scope at a time ({@link TailScopes}): which changes apply, which keys may be written
 * again, and whether the batch is quiet enough for its writes to land while the next one is read. A table moved
 * whole has one scope, and this is its one {@link ForwardHold.State}.
 */
final class Holds {
    private final TailScopes scopes;
    private final List<ForwardHold.State> states;
    /** No scope held or asked to hold: every change applies, with no look at its key's part. */
    private final boolean none;

    Holds(TailScopes scopes, List<ForwardHold.State> states) {
        this.scopes = scopes;
        this.states = List.copyOf(states);
        this.none = states.stream().allMatch(s -> s.phase() == ForwardHold.Phase.NONE);
    }

    int size() {
        return states.size();
    }

    ForwardHold.State of(int scope) {
        return states.get(scope);
    }

    /** Whether the tail may apply a change of {@code key} at {@code lsn} now. */
    boolean applies(String key, long lsn) {
        return none || states.get(scopes.of(key)).applies(lsn);
    }

    /** Whether a change of no key (a TRUNCATE) at {@code lsn} applies in every scope. */
    boolean appliesEverywhere(long lsn) {
        return states.stream().allMatch(s -> s.applies(lsn));
    }

    /** Whether {@code key}'s scope is held: nothing of it may be written. */
    boolean held(String key) {
        return states.get(scopes.of(key)).phase() == ForwardHold.Phase.HELD;
    }

    boolean anyHeld() {
        return states.stream().anyMatch(s -> s.phase() == ForwardHold.Phase.HELD);
    }

    /** Whether {@code key} must not be written again from Postgres now (reconciliation, repairs). */
    boolean blocksRewrites(String key) {
        return states.get(scopes.of(key)).blocksRewrites();
    }

    boolean allBlockRewrites() {
        return states.stream().allMatch(ForwardHold.State::blocksRewrites);
    }

    boolean anyBlocksRewrites() {
        return states.stream().anyMatch(ForwardHold.State::blocksRewrites);
    }

    /** Of {@code keys}, those no hold keeps from being written again now: a held part's wait for its hold's end. */
    List<String> rewritable(List<String> keys) {
        if (!anyBlocksRewrites()) return keys;
        List<String> out = new ArrayList<>(keys.size());
        for (String k : keys) if (!blocksRewrites(k)) out.add(k);
        return out;
    }

    /** No scope held or asked to hold: a full batch may land while the next is read. */
    boolean quiet() {
        return states.stream()
                .allMatch(s -> s.phase() == ForwardHold.Phase.NONE && s.request() == null && !s.unanswered());
    }
}
