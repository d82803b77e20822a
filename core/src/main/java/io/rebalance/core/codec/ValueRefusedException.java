package io.rebalance.core.codec;

/** A single value DynamoDB cannot hold as mapped. {@link RowCodec} turns it into an error naming the row id. */
public class ValueRefusedException extends RuntimeException {
    public ValueRefusedException(String message) {
        super(message);
    }
}
