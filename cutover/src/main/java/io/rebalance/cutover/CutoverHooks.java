package io.rebalance.cutover;

/**
 * Called before each step runs (after it is logged), and before each store move inside an alignment: tests stop or
 * pause a command at an exact step or instruction here.
 */
@FunctionalInterface
public interface CutoverHooks {
    CutoverHooks NONE = step -> {};

    void before(CutoverStep step) throws Exception;

    /** Before one store move of an alignment (abort, recovery). */
    default void inside(AlignInstruction instruction) throws Exception {}
}
