package io.rebalance.core.retry;

import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.lease.LeaseLost;
import java.io.IOException;
import java.sql.SQLException;
import java.sql.SQLTransientException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

/**
 * Sorts failures into those worth retrying (the service may answer next time) and permanent ones (a retry would
 * fail the same way, so it only hides the problem). Unknown failures count as retriable: the outer loops retry a
 * slot forever anyway, and a wrong "permanent" would stop a migration that could have finished.
 */
public final class Transience {
    private Transience() {}

    public static boolean isRetriable(Throwable t) {
        if (LeaseLost.in(t) != null) return false; // the holder must stop; a retry would write without the lease
        if (t instanceof RebalanceException || t instanceof InterruptedException) return false;
        if (t instanceof SQLException sql) return isRetriable(sql);
        if (t instanceof DynamoDbException d) return isRetriable(d);
        if (t instanceof SdkClientException || t instanceof JedisConnectionException || t instanceof IOException)
            return true;
        if (t instanceof JedisNoScriptException) return true;
        if (t.getCause() != null && t.getCause() != t) return isRetriable(t.getCause());
        return true;
    }

    private static boolean isRetriable(SQLException e) {
        if (e instanceof SQLTransientException) return true;
        String state = e.getSQLState();
        if (state == null) return true;
        // 08 connection, 40 rollback/serialization, 53 resources, 57 operator intervention (terminate, shutdown),
        // 58 system errors; everything else (42 undefined table/column, 22 data, 28 auth) will fail again.
        return state.startsWith("08")
                || state.startsWith("40")
                || state.startsWith("53")
                || state.startsWith("57")
                || state.startsWith("58")
                || state.equals("XX000");
    }

    private static boolean isRetriable(DynamoDbException e) {
        if (e.isThrottlingException() || e.retryable()) return true;
        int status = e.statusCode();
        if (status >= 500 || status == 0) return true;
        String code = e.awsErrorDetails() == null ? "" : e.awsErrorDetails().errorCode();
        // 4xx: a missing table or a bad request will not heal; expired credentials may be refreshed by the chain.
        return code.equals("ExpiredTokenException") || code.equals("RequestLimitExceeded");
    }
}
