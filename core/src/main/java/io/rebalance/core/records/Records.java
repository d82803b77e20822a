package io.rebalance.core.records;

import java.util.Collection;
import java.util.Map;

/**
 * A named set of records of a run, each a field and its text (a small JSON document): refused rows, verification
 * results. Kept by the run's coordinator: a Redis hash ({@link RedisRecords}) or rows of the coordinator's Postgres
 * table ({@link PostgresRecords}).
 */
public interface Records {
    /** Sets each field to its text, replacing what it held. */
    void put(Map<String, String> fields);

    void remove(Collection<String> fields);

    long count();

    /** Every field and its text. */
    Map<String, String> all();

    /** Removes every record. */
    void clear();
}
