package io.rebalance.verifier;

import java.sql.Connection;
import java.util.List;

/**
 * How a slot's differing ids are written again from Postgres as it is now. By default the verifier writes them
 * itself; while a tail runs they go through it, so a repair is ordered with the change stream (docs/cdc.md).
 */
@FunctionalInterface
public interface Repairs {
    /** @return how many items were put or deleted */
    int repair(Connection source, List<String> ids) throws Exception;
}
