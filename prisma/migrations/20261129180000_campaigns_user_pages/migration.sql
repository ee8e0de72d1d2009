-- no transaction: built CONCURRENTLY, so the table keeps being written meanwhile (src/db/migrations.ts runs
-- a script that starts with this line as it is, and records it once it has run). A build that failed
-- leaves an invalid index of this name, on which the next run stops: drop it, and start again.
-- A customer's campaigns are listed newest first, ties by id: with the id in the index, a v1 page at an offset skips index entries alone (index-only) and reads only its own rows.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "campaigns_user_id_created_at_id_idx" ON "campaigns"("user_id", "created_at", "id");
