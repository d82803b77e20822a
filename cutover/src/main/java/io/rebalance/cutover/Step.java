package io.rebalance.cutover;

import java.util.Arrays;
import java.util.List;

/**
 * One step of a cutover command: the name it is logged and persisted under before it runs ({@link CutoverStep}),
 * what the log adds about it, and what it does. A command is its list of steps, so the dry run prints the list
 * that runs.
 */
record Step(CutoverStep name, Detail detail, Body body) {
    /** What the step does, within the command's run (its lease and write-block budget). */
    interface Body {
        void run(CommandRun run) throws Exception;
    }

    /** What the log adds about the step, read when it starts (a token, a WAL position). */
    interface Detail {
        String get();
    }

    /** Releasing the exclusive lease: {@link CommandRun#done} does it once the outcome is known. */
    static final Body BY_DONE = run -> {};

    static Step of(CutoverStep name, Body body) {
        return new Step(name, () -> "", body);
    }

    static Step of(CutoverStep name, Detail detail, Body body) {
        return new Step(name, detail, body);
    }

    /** The names of {@code steps}, in order. */
    /**
     * {@code steps}, which must be those {@code order} names in that order: the order is declared once (what {@code
     * --dry-run} prints, with no command built) and the bodies beside it.
     */
    static List<Step> inOrder(List<CutoverStep> order, Step... steps) {
        List<CutoverStep> names = Arrays.stream(steps).map(Step::name).toList();
        if (!names.equals(order)) throw new IllegalStateException("steps " + names + " run out of order " + order);
        return List.of(steps);
    }
}
