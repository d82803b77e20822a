package io.rebalance.cutover;

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
    static List<CutoverStep> names(List<Step> steps) {
        return steps.stream().map(Step::name).toList();
    }
}
