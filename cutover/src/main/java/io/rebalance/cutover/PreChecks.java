package io.rebalance.cutover;

import java.util.List;

/** The cutover's pre-checks, supplied by the caller (ops asks the mover, the tail and the verifier). */
@FunctionalInterface
public interface PreChecks {
    List<PreCheck> run() throws Exception;
}
