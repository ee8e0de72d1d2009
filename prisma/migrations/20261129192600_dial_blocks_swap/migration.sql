-- The swap, in one short transaction: the twin, now holding every row, becomes dial_blocks. Nothing here
-- reads the table's rows.
SELECT lock_or_wait('dial_blocks, dial_blocks_partitioned', 'ACCESS EXCLUSIVE');
SELECT live_partition_swap('dial_blocks');
