-- The swap, in one short transaction: the twin, now holding every row, becomes campaign_changes. Nothing
-- here reads the table's rows.
SELECT lock_or_wait('campaign_changes, campaign_changes_partitioned', 'ACCESS EXCLUSIVE');
SELECT live_partition_swap('campaign_changes');
