/**
 * {@code rebalance verify}: server-side fingerprints of Postgres slots compared with DynamoDB items, narrowing a
 * mismatch down to the differing ids. Lands with its own issue; the codec it will share lives in core.
 */
package io.rebalance.verifier;
