-- Campaign history, campaign_changes, becomes partitioned by month while campaigns change (issue 37), by
-- the live conversion's functions (migration credit_transactions_partitioned): the twin and its mirror
-- here, then the copy, the swap and the drop. Its ids have always been UUIDv7s made by the database
-- (webhook_uuid_v7(), in the history's trigger and the service's entries), so it is partitioned by RANGE
-- on `id` and the primary key stays `id`. `seq`, a campaign's order of changes, keeps its values and its
-- sequence: the twin's default draws from the same one, which the swap gives to the twin's column.
SELECT live_partition_twin('campaign_changes', uuidv7_time((
  SELECT id FROM campaign_changes WHERE id >= uuidv7_floor(now() - interval '5 years') AND id < uuidv7_floor(now()) ORDER BY id LIMIT 1)));
SELECT live_partition_mirror('campaign_changes', 'r.id');
