-- The old dial_blocks dropped (its keys' tables locked for a moment). The partitions' statistics are
-- autovacuum's to gather.
SELECT live_partition_drop('dial_blocks');
