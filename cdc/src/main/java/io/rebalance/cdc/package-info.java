/**
 * {@code rebalance tail}: Debezium embedded (pgoutput) applying changes to DynamoDB in order, and the reverse
 * stream from DynamoDB Streams back to Postgres for a rollback. Debezium stays inside this module.
 */
package io.rebalance.cdc;
