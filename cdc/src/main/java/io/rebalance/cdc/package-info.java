/**
 * {@code rebalance tail}: Debezium embedded (pgoutput) applying changes to DynamoDB in order. Lands with its own
 * issue; Debezium will stay inside this module.
 */
package io.rebalance.cdc;
