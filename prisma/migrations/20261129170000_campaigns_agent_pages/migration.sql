-- no transaction: built CONCURRENTLY, so the table keeps being written meanwhile (src/db/migrations.ts runs
-- a script that starts with this line as it is, and records it once it has run). A build that failed
-- leaves an invalid index of this name, on which the next run stops: drop it, and start again.
-- An agent's campaigns are paged newest first (Agent.campaigns): a page after a cursor starts its index range at the cursor and stops after the page.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "campaigns_agent_id_created_at_idx" ON "campaigns"("agent_id", "created_at");
