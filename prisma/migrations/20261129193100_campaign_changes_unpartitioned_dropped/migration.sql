-- The old campaign_changes dropped (campaigns, which its key references, locked for a moment). The
-- partitions' statistics are autovacuum's to gather.
SELECT live_partition_drop('campaign_changes');
