-- no transaction: the procedure commits each batch of 10,000 rows (src/db/migrations.ts runs a script
-- that starts with this line as it is, and records it once it has run). Run again, it copies what is missing.
CALL "live_partition_copy"('dial_blocks', 'uuidv7_of(r.id, r.created_at)', 10000);
