-- no transaction: built CONCURRENTLY, so deliveries keep being written meanwhile (src/db/migrations.ts runs
-- a script that starts with this line as it is, and records it once it has run). A build that failed
-- leaves an invalid index of this name, on which the next run stops: drop it, and start again.
-- The bulk replay skips the deliveries replayed already by looking each one up here; only replays have a
-- replay_of, so the index holds them alone.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "webhook_messages_replay_of_idx" ON "webhook_messages"("replay_of") WHERE (replay_of IS NOT NULL);
