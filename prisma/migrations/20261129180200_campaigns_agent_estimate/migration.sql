-- A page of an agent's campaigns in the compiled GraphQL read is planned for any agent (the agent is a
-- parameter of it), from the average agent's campaigns: a few. PostgreSQL then read a long list through
-- a bitmap and sorted all of it after the cursor rather than scan the index in the page's order and stop
-- at the page. Estimated at a thousand campaigns per agent (n_distinct: agents are a thousandth of the
-- rows), a page is planned as the ordered scan a long list needs, which reads no more than a page of a
-- short one. Prisma's schema cannot say this; ANALYZE applies it now rather than at autovacuum's next.
ALTER TABLE "campaigns" ALTER COLUMN "agent_id" SET (n_distinct = -0.001);
ANALYZE "campaigns" ("agent_id");
