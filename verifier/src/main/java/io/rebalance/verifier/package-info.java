/**
 * {@code rebalance verify}: server-side fingerprints of Postgres slots compared with hashes of the slot's DynamoDB
 * items, both computed from one canonical encoding (docs/fingerprint.md); a mismatch is narrowed down to the ids
 * that differ, re-checked after in-flight changes settle, and optionally repaired.
 */
package io.rebalance.verifier;
