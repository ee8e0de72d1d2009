-- The old ledger dropped (its keys' tables locked for a moment). As for call_attempts, the partitions'
-- statistics are autovacuum's to gather.
SELECT live_partition_drop('credit_transactions');
