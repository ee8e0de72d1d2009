-- no transaction: the procedure commits each batch of 20 campaigns (src/db/migrations.ts runs a script
-- that starts with this line as it is, and records it once it has run). Run again, it adds nothing.
CALL "report_counts_backfill"(20);
