package io.rebalance.cutover;

/** Called before each step runs (after it is logged): tests stop or pause a command at an exact step here. */
@FunctionalInterface
public interface CutoverHooks {
    CutoverHooks NONE = step -> {};

    void before(CutoverStep step) throws Exception;
}
